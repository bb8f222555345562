// The audit worker deployed alone.
import { auditWorkerOnBindings, createCloudflareWorker } from "@forensic-annotation/service/cloudflare";

export default createCloudflareWorker(auditWorkerOnBindings);
