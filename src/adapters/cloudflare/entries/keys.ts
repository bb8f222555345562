/**
 * @module
 * Module worker: the keys worker deployed alone.
 */
import { keysWorkerOnBindings, createCloudflareWorker, type ModuleWorker } from "../worker.ts";

const worker: ModuleWorker = createCloudflareWorker(keysWorkerOnBindings);
export default worker;
