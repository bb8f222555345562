/**
 * @module
 * Module worker: the whole service (every worker under its mount).
 */
import { serviceOnBindings, createCloudflareWorker, type ModuleWorker } from "../worker.ts";

const worker: ModuleWorker = createCloudflareWorker(serviceOnBindings);
export default worker;
