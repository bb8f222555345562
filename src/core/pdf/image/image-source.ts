/**
 * @module
 * The report's image, from a `data:` URL or fetched from an allowed host (docs/report.md
 * "Request"): one deadline for the whole fetch, a size cap enforced while reading, and
 * redirects followed by hand so that every hop is checked against the allow-list before it
 * is requested. The type is decided by the bytes: JPEG and PNG whose structure holds
 * (images/image-structure.ts) are accepted, anything else is a 400 that says what it is.
 *
 * @example
 * ```ts
 * const image = await loadReportImage("https://images.lab.example/x.jpg", {
 *   hosts: parseHostList(["images.lab.example"]), timeoutMs: 10_000, maxBytes: 25 * 1024 * 1024,
 * });
 * ```
 */
import { ServiceError } from "../../errors.ts";
import { describeRefusal, IMAGE_FORMAT_NAMES, inspectImage } from "../../images/image-structure.ts";
import { checkImageUrl, type HostEntry } from "./host-policy.ts";
import { decodeBase64 } from "./base64.ts";
import { isTimeout } from "../../outbound/timeout.ts";

/** An image the report can embed. */
export interface ReportImage {
  /** The file's bytes, as received. */
  bytes: Uint8Array;
  /** Its type, decided by its bytes. */
  type: "image/jpeg" | "image/png";
}

/** Where and how an image may be fetched. */
export interface ImageSourceOptions {
  /** The allowed hosts (`PDF_IMAGE_HOSTS`, parsed). */
  hosts: readonly HostEntry[];
  /** The deadline of the whole fetch, redirects and body included, in milliseconds. */
  timeoutMs: number;
  /** The largest image, in bytes. */
  maxBytes: number;
  /** The fetch to use (tests pass one that records calls); default the global `fetch`. */
  fetch?: typeof fetch;
  /** How many redirects are followed (default 5). */
  maxRedirects?: number;
}

const encoder = new TextEncoder();

const tooLarge = (maxBytes: number): ServiceError =>
  ServiceError.validation(`The image is larger than the limit of ${maxBytes} bytes`, { field: "imageUrl", limitBytes: maxBytes });

/**
 * Keeps JPEG and PNG whose structure holds and whose size is within the caps; refuses other
 * formats, non-images, broken and oversized files with a 400 that says which.
 */
function typed(bytes: Uint8Array): ReportImage {
  const checked = inspectImage(bytes);
  const type = checked.ok || checked.reason !== "not-an-image" ? checked.type : null;
  if (type !== "image/jpeg" && type !== "image/png") {
    const what = type === null ? "not an image" : `a ${IMAGE_FORMAT_NAMES[type]} image`;
    throw ServiceError.validation(`The image at imageUrl is ${what}; the report embeds JPEG and PNG only`, {
      field: "imageUrl",
      ...(type === null ? {} : { type }),
    });
  }
  if (!checked.ok && checked.reason !== "not-an-image") {
    const refusal = describeRefusal("The image at imageUrl", checked);
    throw ServiceError.validation(refusal.message, { field: "imageUrl", ...refusal.details });
  }
  return { bytes, type };
}

/** Decodes a `data:` URL (base64 or percent-encoded) within the size cap. */
function fromDataUrl(url: string, maxBytes: number): Uint8Array {
  const comma = url.indexOf(",");
  if (comma < 0) throw ServiceError.validation("imageUrl is a data: URL without a comma before its data", { field: "imageUrl" });
  const meta = url.slice(5, comma);
  const payload = url.slice(comma + 1);
  if (/;base64$/i.test(meta)) {
    if (Math.floor((payload.length * 3) / 4) - 2 > maxBytes) throw tooLarge(maxBytes);
    const bytes = decodeBase64(payload);
    if (bytes === null) throw ServiceError.validation("imageUrl is a data: URL whose base64 is invalid", { field: "imageUrl" });
    if (bytes.length > maxBytes) throw tooLarge(maxBytes);
    return bytes;
  }
  const bytes: number[] = [];
  for (let i = 0; i < payload.length; i++) {
    const code = payload.charCodeAt(i);
    if (code === 0x25 && /^[0-9a-f]{2}$/i.test(payload.slice(i + 1, i + 3))) {
      bytes.push(parseInt(payload.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (code < 0x80) {
      bytes.push(code);
    } else {
      bytes.push(...encoder.encode(payload[i]));
    }
    if (bytes.length > maxBytes) throw tooLarge(maxBytes);
  }
  return new Uint8Array(bytes);
}

/** Reads a response body, failing as soon as it passes `maxBytes`. */
async function readCapped(response: Response, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(response.headers.get("Content-Length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge(maxBytes);
  }
  if (response.body === null) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return concatBytes(chunks);
}

/** The chunks as one array: the chunk itself when there is one, else one copy. */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0];
  const bytes = new Uint8Array(chunks.reduce((total, chunk) => total + chunk.byteLength, 0));
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);


/** Fetches an allowed URL, re-checking every redirect hop before requesting it. */
async function fromHost(imageUrl: string, options: ImageSourceOptions): Promise<Uint8Array> {
  const doFetch = options.fetch ?? fetch;
  const maxRedirects = options.maxRedirects ?? 5;
  let url: URL;
  try {
    url = new URL(imageUrl);
  } catch {
    throw ServiceError.validation("imageUrl is not a valid URL", { field: "imageUrl" });
  }
  checkImageUrl(url, options.hosts);
  const signal = AbortSignal.timeout(options.timeoutMs);
  try {
    for (let hop = 0; ; hop++) {
      let response: Response;
      try {
        response = await doFetch(url.href, { redirect: "manual", signal, headers: { Accept: "image/jpeg, image/png" } });
      } catch (err) {
        if (isTimeout(err)) throw err;
        throw ServiceError.server(`The image host ${url.host} could not be reached`, "upstream-failed");
      }
      if (REDIRECTS.has(response.status)) {
        await response.body?.cancel().catch(() => {});
        const location = response.headers.get("Location");
        if (location === null) throw ServiceError.server(`The image host ${url.host} redirected without a Location`, "upstream-failed");
        if (hop >= maxRedirects) {
          throw ServiceError.validation(`imageUrl redirects more than ${maxRedirects} times`, { field: "imageUrl" });
        }
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          throw ServiceError.server(`The image host ${url.host} redirected to an invalid URL`, "upstream-failed");
        }
        checkImageUrl(next, options.hosts, "The redirect of imageUrl");
        url = next;
        continue;
      }
      // A browser-like fetch hides the target of a manual redirect; it cannot be checked, so it is not followed.
      if (response.type === "opaqueredirect") {
        throw ServiceError.validation("imageUrl redirects, and this runtime does not let the redirect be checked", { field: "imageUrl" });
      }
      if (!response.ok) {
        await response.body?.cancel().catch(() => {});
        if (response.status >= 500) throw ServiceError.server(`The image host ${url.host} answered HTTP ${response.status}`, "upstream-failed");
        throw ServiceError.validation(`The image host ${url.host} answered HTTP ${response.status} for imageUrl`, {
          field: "imageUrl",
          status: response.status,
        });
      }
      return await readCapped(response, options.maxBytes);
    }
  } catch (err) {
    if (err instanceof ServiceError) throw err;
    if (isTimeout(err)) throw ServiceError.server(`The image host did not answer within ${options.timeoutMs} ms`, "upstream-timeout");
    // The connection broke while the image was being read.
    throw ServiceError.server(`The image host ${url.host} broke off while sending the image`, "upstream-failed");
  }
}

/**
 * The image of `imageUrl`: a `data:` URL's bytes or the file an allowed host serves. Throws a
 * 400 for a refused URL, a non-image or an oversized one, a 502 when the host fails and a 504
 * when it does not answer in time.
 */
export async function loadReportImage(imageUrl: string, options: ImageSourceOptions): Promise<ReportImage> {
  const bytes = /^data:/i.test(imageUrl) ? fromDataUrl(imageUrl, options.maxBytes) : await fromHost(imageUrl, options);
  return typed(bytes);
}
