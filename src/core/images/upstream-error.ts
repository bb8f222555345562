/**
 * An upstream image service refused a request: its status and JSON body reach the client
 * as they are (issue 4: "upstream errors pass through with their status and body shape").
 */
export class UpstreamError extends Error {
  /** The upstream status and its JSON body, passed to the client unchanged. */
  constructor(readonly status: number, readonly body: unknown) {
    super(`upstream image service answered HTTP ${status}`);
    this.name = "UpstreamError";
  }
}
