// The captcha worker deployed alone.
import { captchaWorkerOnBindings, createCloudflareWorker } from "@forensic-annotation/service/cloudflare";

export default createCloudflareWorker(captchaWorkerOnBindings);
