/**
 * @module
 * Module worker: the data worker deployed alone.
 */
import { dataWorkerOnBindings, createCloudflareWorker, type ModuleWorker } from "../worker.ts";

const worker: ModuleWorker = createCloudflareWorker(dataWorkerOnBindings);
export default worker;
