/**
 * @module
 * Module worker: the captcha worker deployed alone.
 */
import { createCloudflareWorker, type ModuleWorker } from "../worker.ts";

const worker: ModuleWorker = createCloudflareWorker("captcha");
export default worker;
