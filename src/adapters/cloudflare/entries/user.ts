/**
 * @module
 * Module worker: the user worker deployed alone.
 */
import { userWorkerOnBindings, createCloudflareWorker, type ModuleWorker } from "../worker.ts";

const worker: ModuleWorker = createCloudflareWorker(userWorkerOnBindings);
export default worker;
