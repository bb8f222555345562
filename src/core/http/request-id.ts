/**
 * @module
 * The request id every answer carries as `X-Request-Id` (docs/operations.md#logs): the
 * caller's own when it is 1–128 visible ASCII characters, so a client's failure can be found
 * in the server's log, else a new UUID.
 */

const VISIBLE_ASCII = /^[\x21-\x7e]{1,128}$/;

/** The id of a request: `sent` (its `X-Request-Id`) when acceptable, else a random UUID. */
export function requestIdOf(sent: string | undefined): string {
  return sent !== undefined && VISIBLE_ASCII.test(sent) ? sent : crypto.randomUUID();
}
