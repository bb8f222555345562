// The review worker deployed alone: reviews beside the audit trails, the owners' cases, lab and roles of user records.
import { createCloudflareWorker, reviewWorkerOnBindings } from "@forensic-annotation/service/cloudflare";

export default createCloudflareWorker(reviewWorkerOnBindings);
