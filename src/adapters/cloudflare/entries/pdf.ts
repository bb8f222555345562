/**
 * @module
 * Module worker: the PDF worker deployed alone.
 */
import { createCloudflareWorker, type ModuleWorker, pdfWorkerOnBindings } from "../worker.ts";

const worker: ModuleWorker = createCloudflareWorker(pdfWorkerOnBindings);
export default worker;
