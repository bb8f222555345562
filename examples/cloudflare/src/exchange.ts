// The exchange worker deployed alone: case exports and imports over HTTP.
import { createCloudflareWorker, exchangeWorkerOnBindings } from "@forensic-annotation/service/cloudflare";

export default createCloudflareWorker(exchangeWorkerOnBindings);
