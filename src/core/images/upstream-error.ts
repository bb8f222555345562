/**
 * @module
 * An upstream image service's refusal, passed to the client as it came: the image worker
 * answers with the upstream status and JSON body (Cloudflare Images' error shape).
 */
import { ServiceError } from "../errors.ts";

/** An upstream image service refused a request. */
export class UpstreamError extends ServiceError {
  /** The upstream status and its JSON body, passed to the client unchanged. */
  constructor(readonly upstreamStatus: number, readonly body: unknown) {
    super("upstream-failed", `upstream image service answered HTTP ${upstreamStatus}`);
  }
}
