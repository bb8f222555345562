/**
 * @module
 * Module worker: the captcha worker deployed alone.
 */
import { captchaWorkerOnBindings, createCloudflareWorker, type ModuleWorker } from "../worker.ts";

const worker: ModuleWorker = createCloudflareWorker(captchaWorkerOnBindings);
export default worker;
