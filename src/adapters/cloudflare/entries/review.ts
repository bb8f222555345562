/**
 * @module
 * Module worker: the review worker deployed alone.
 */
import { createCloudflareWorker, type ModuleWorker, reviewWorkerOnBindings } from "../worker.ts";

const worker: ModuleWorker = createCloudflareWorker(reviewWorkerOnBindings);
export default worker;
