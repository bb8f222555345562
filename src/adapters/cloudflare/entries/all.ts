/**
 * @module
 * Module worker: the whole service (every worker under its mount).
 */
import { createCloudflareWorker, type ModuleWorker } from "../worker.ts";

const worker: ModuleWorker = createCloudflareWorker("all");
export default worker;
