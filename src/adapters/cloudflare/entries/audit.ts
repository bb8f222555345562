/**
 * @module
 * Module worker: the audit worker deployed alone.
 */
import { auditWorkerOnBindings, createCloudflareWorker, type ModuleWorker } from "../worker.ts";

const worker: ModuleWorker = createCloudflareWorker(auditWorkerOnBindings);
export default worker;
