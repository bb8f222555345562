/**
 * @module
 * Module worker: the data worker deployed alone.
 */
import { createCloudflareWorker, type ModuleWorker } from "../worker.ts";

const worker: ModuleWorker = createCloudflareWorker("data");
export default worker;
