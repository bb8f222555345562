/**
 * @module
 * Module worker: the exchange worker deployed alone.
 */
import { createCloudflareWorker, exchangeWorkerOnBindings, type ModuleWorker } from "../worker.ts";

const worker: ModuleWorker = createCloudflareWorker(exchangeWorkerOnBindings);
export default worker;
