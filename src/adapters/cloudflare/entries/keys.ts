/**
 * @module
 * Module worker: the keys worker deployed alone.
 */
import { createCloudflareWorker, type ModuleWorker } from "../worker.ts";

const worker: ModuleWorker = createCloudflareWorker("keys");
export default worker;
