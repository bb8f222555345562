/**
 * @module
 * Module worker: the audit worker deployed alone.
 */
import { createCloudflareWorker, type ModuleWorker } from "../worker.ts";

const worker: ModuleWorker = createCloudflareWorker("audit");
export default worker;
