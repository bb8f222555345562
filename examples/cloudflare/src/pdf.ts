// The PDF worker deployed alone (no bindings; needs the Workers paid plan's CPU limits).
import { createCloudflareWorker, pdfWorkerOnBindings } from "@forensic-annotation/service/cloudflare";

export default createCloudflareWorker(pdfWorkerOnBindings);
