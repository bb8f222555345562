// The user worker deployed alone: it reaches cases and images through the data and image workers.
import { userWorkerOnBindings, createCloudflareWorker } from "@forensic-annotation/service/cloudflare";

export default createCloudflareWorker(userWorkerOnBindings);
