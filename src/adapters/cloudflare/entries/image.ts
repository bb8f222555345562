/**
 * @module
 * Module worker: the image worker deployed alone.
 */
import { imageWorkerOnBindings, createCloudflareWorker, type ModuleWorker } from "../worker.ts";

const worker: ModuleWorker = createCloudflareWorker(imageWorkerOnBindings);
export default worker;
