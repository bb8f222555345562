/**
 * @module
 * Reading request bodies and queries through a zod schema. Bodies are decoded as strict
 * UTF-8 (invalid bytes are a 400, never silently replaced) and parsed as JSON whatever the
 * Content-Type, as existing clients do not always send one.
 */
import type { Context } from "hono";
import type * as z from "zod";
import { ServiceError } from "../errors.ts";
import { jsonDepthOverflow, MAX_JSON_DEPTH, tooDeepMessage } from "../encoding/json-depth.ts";
import { jsonSyntaxFault } from "../encoding/json-syntax.ts";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** The message of a request whose body ended before its declared length (docs/api.md#errors). */
export const BODY_CUT_SHORT = "Request body ended before it was complete (the connection closed or broke while it was sent)";

/** Decodes bytes as strict UTF-8 or throws a 400. */
export function decodeUtf8(bytes: ArrayBuffer | Uint8Array, what = "Request body"): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw ServiceError.validation(`${what} is not valid UTF-8`);
  }
}

/**
 * Throws the refusal for a request body that broke off while being read: the client closed or reset
 * the connection before the body's end (Node: "aborted", Deno: "BadResource", Bun: "AbortError").
 * The request's fault, a 400 and not an unhandled 500; a refusal of ours (413) passes as it is.
 */
export function failedBodyRead(err: unknown): never {
  if (err instanceof ServiceError) throw err;
  throw ServiceError.validation(BODY_CUT_SHORT);
}

/** The whole request body's bytes, or a 400 when the connection breaks off before its end. */
export async function readRequestBytes(request: Request): Promise<ArrayBuffer> {
  try {
    return await request.arrayBuffer();
  } catch (err) {
    return failedBodyRead(err);
  }
}

/**
 * Parses JSON text or throws a 400 that says why: nesting deeper than {@link MAX_JSON_DEPTH}
 * is refused before parsing, and a syntax fault is described by position, not by the
 * engine's message.
 */
export function parseJsonText(text: string, what = "Request body"): unknown {
  if (text.trim() === "") throw ServiceError.validation(`${what} is empty; JSON expected`);
  const overflow = jsonDepthOverflow(text);
  if (overflow !== -1) {
    throw ServiceError.validation(tooDeepMessage(what), { maxDepth: MAX_JSON_DEPTH, position: overflow });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const fault = jsonSyntaxFault(text);
    if (fault === undefined) throw ServiceError.validation(`${what} is not valid JSON`);
    const { problem, position, line, column } = fault;
    throw ServiceError.validation(`${what} is not valid JSON: ${problem} at line ${line}, column ${column}`, {
      reason: problem,
      position,
      line,
      column,
    });
  }
  // The walk runs only when the text holds a number that may overflow.
  const path = MAY_OVERFLOW.test(text) ? nonFinitePath(value) : undefined;
  if (path !== undefined) {
    const at = path.join(".");
    throw ServiceError.validation(`${what} holds a number too large for a double (JSON numbers here are at most about 1.8e308)${at === "" ? "" : ` at "${at}"`}`, { path: at });
  }
  return value;
}

/**
 * A number reaches 1.8e308 only with 309 integer digits, or with fewer and an exponent of two
 * digits or more (210 digits and e99). Linear: a digit run is tried from its start only, so
 * runs just short of 300 digits do not cost 300 steps each (a 9 MB body of them took 2.8 s).
 */
const MAY_OVERFLOW = /\d[eE]\+?\d{2}|(?:^|\D)\d{300}/;

/**
 * The path of the first number JSON.parse made ±Infinity of (a literal like 1e400), or
 * undefined; the path is built on the way back from the one found, so a clean walk allocates nothing.
 */
function nonFinitePath(value: unknown): string[] | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? undefined : [];
  if (typeof value !== "object" || value === null) return undefined;
  for (const key in value) {
    const found = nonFinitePath((value as Record<string, unknown>)[key]);
    if (found !== undefined) {
      found.unshift(key);
      return found;
    }
  }
  return undefined;
}

/**
 * A body sent compressed (`Content-Encoding: gzip`) is refused (415, RFC 9110 15.5.16), never
 * stored as its compressed bytes nor parsed as if it were JSON; `identity` is no encoding.
 */
export function refuseContentEncoding(encoding: string | undefined): void {
  if (encoding === undefined || encoding.trim() === "" || encoding.trim().toLowerCase() === "identity") return;
  throw new ServiceError("unsupported-media-type", `Content-Encoding ${encoding.trim()} is not accepted: send the body uncompressed`, { contentEncoding: encoding.trim() });
}

/**
 * The body as JSON text, checked to be well-formed UTF-8 JSON, with its value and its bytes
 * as the text encodes them (the body's own bytes without a leading byte order mark, which
 * the decoder drops: the same bytes `TextEncoder` would make of the text, without encoding it).
 */
export async function readJsonText(c: Context): Promise<{ text: string; value: unknown; bytes: Uint8Array<ArrayBuffer> }> {
  refuseContentEncoding(c.req.header("content-encoding"));
  // Through hono's request, which keeps the bytes for any later reader of the same body.
  const body = new Uint8Array(await c.req.arrayBuffer().catch(failedBodyRead));
  const text = decodeUtf8(body);
  const value = parseJsonText(text);
  const bom = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf;
  return { text, value, bytes: bom ? body.subarray(3) : body };
}

/** Validates `value` with `schema`; the 400 names the first failing field. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue.message,
  }));
  const first = issues[0];
  const field = first && first.path !== "" ? ` at "${first.path}"` : "";
  throw ServiceError.validation(`Invalid ${where}${field}: ${first?.message ?? "invalid"}`, { issues });
}

/** Reads and validates a JSON body. */
export async function readBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  const { value } = await readJsonText(c);
  return parseWith(schema, value, "request body");
}

/** Validates the query string (the first value of a repeated name, the one every check reads); a value whose percent-encoding is broken is a 400, as in a path. */
export function readQuery<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  checkQueryEncoding(c.req.url);
  return parseWith(schema, c.req.query(), "query");
}

/**
 * Refuses a query holding a broken percent-escape (`%E0%A4%A`): the router keeps such text as it
 * is, so `?userId=%E0%A4%A` and the well-formed `?userId=%25E0%25A4%25A` named one user.
 */
function checkQueryEncoding(url: string): void {
  const start = url.indexOf("?");
  if (start === -1 || !url.includes("%", start)) return;
  for (const pair of url.slice(start + 1).split("#", 1)[0]!.split("&")) {
    if (!pair.includes("%")) continue;
    const [name = "", value = ""] = pair.split("=", 2);
    try {
      decodeURIComponent(name);
      decodeURIComponent(value);
    } catch {
      throw ServiceError.validation(`Query parameter ${safeName(name)} has invalid percent-encoding`, { parameter: safeName(name) });
    }
  }
}

/** A parameter's name for a message: decoded when it can be, as sent otherwise. */
function safeName(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}
