/**
 * @module
 * The request log (docs/operations.md#logs): one line per answered request, JSON or text, at
 * a level; what a line may carry is fixed here, so nothing secret or personal reaches it
 * (the route's pattern, never the path; no query, no body, no e-mail address).
 */
import { redactSecrets } from "../errors.ts";

/** How much the log says, least first; `off` says nothing. */
export type LogLevel = "debug" | "info" | "warn" | "error" | "off";

/** What one log line holds. */
export interface RequestRecord {
  /** When the answer was ready (ISO 8601, UTC). */
  time: string;
  level: Exclude<LogLevel, "off">;
  requestId: string;
  method: string;
  /** The route's pattern (`/data/{userId}/{caseNumber}/{document}`), never the raw path. */
  route: string;
  status: number;
  durationMs: number;
  /** The answer's declared length (absent when streamed). */
  bytes?: number;
  /** The worker that answered (`data`, `user`, ...), or `service` for the service's own routes. */
  worker: string;
  /** The identity token's subject, in identity mode. */
  sub?: string;
  /** The failure of a 5xx: its name and message, redacted. */
  error?: string;
  /** Its stack, redacted (server side only: never in the answer). */
  stack?: string;
}

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, off: 4 };

/** Where lines go (standard output under `serve`, `console.log` on Cloudflare). */
export type LogWrite = (line: string) => void;

/** Writes records at `level` or above, as `format` lines. */
export function requestLogger(options: { level: LogLevel; format: "json" | "text"; write: LogWrite }): (record: RequestRecord) => void {
  const least = RANK[options.level];
  const render = options.format === "json" ? JSON.stringify : textLine;
  return (record) => {
    if (RANK[record.level] >= least) options.write(render(record));
  };
}

/** Whether a record at `level` would be written. */
export function logs(threshold: LogLevel, level: Exclude<LogLevel, "off">): boolean {
  return RANK[level] >= RANK[threshold];
}

function textLine(record: RequestRecord): string {
  const parts = [record.time, record.level.toUpperCase().padEnd(5), record.method, record.route, String(record.status), `${record.durationMs}ms`];
  if (record.bytes !== undefined) parts.push(`${record.bytes}B`);
  parts.push(`worker=${record.worker}`, `id=${JSON.stringify(record.requestId)}`);
  if (record.sub !== undefined) parts.push(`sub=${JSON.stringify(record.sub)}`);
  if (record.error !== undefined) parts.push(`error=${JSON.stringify(record.error)}`);
  const line = parts.join(" ");
  return record.stack === undefined ? line : `${line}\n${record.stack}`;
}

const EMAIL = /[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)+/g;

/** Text a log line may carry: secrets and e-mail addresses (a mail failure names its recipient) taken out. */
function loggable(text: string): string {
  return redactSecrets(text).replace(EMAIL, "[email]");
}

/** A failure as the log may show it: name, message and stack, redacted. */
export function failureOf(err: unknown): { error: string; stack?: string } {
  if (!(err instanceof Error)) return { error: loggable(String(err)) };
  const error = loggable(`${err.name}: ${err.message}`);
  return err.stack === undefined ? { error } : { error, stack: loggable(err.stack) };
}
