/**
 * @module
 * `export --url` and `import --url`: the running service's exchange worker
 * (src/core/workers/exchange.ts) makes the export and takes the package, so its signing and
 * verifying keys stay on the server and nothing is stopped. Bodies stream both ways.
 */
import { basename } from "node:path";
import { ServiceClientError } from "../../client/mod.ts";

/** Where the exchange worker is and its credential (`R2_KEY_SECRET`, and `ADMIN_AUTH` when set). */
export interface ExchangeTarget {
  /** The service's base URL (serviceUrl). */
  url: string;
  /** `X-Custom-Auth-Key`: R2_KEY_SECRET. */
  dataKey: string;
  /** `X-Admin-Key`, when configured. */
  adminKey?: string | undefined;
}

/** An export as the worker answered it: its file name and its bytes, streamed. */
export interface ExportDownload {
  /** The name the worker gives the file (Content-Disposition), a plain file name. */
  fileName: string | undefined;
  /** The bytes. */
  body: ReadableStream<Uint8Array>;
}

const segment = (value: string) => encodeURIComponent(value);

function headersOf(target: ExchangeTarget): Headers {
  const headers = new Headers({ "X-Custom-Auth-Key": target.dataKey });
  if (target.adminKey !== undefined) headers.set("X-Admin-Key", target.adminKey);
  return headers;
}

/** The call, its error answer as a {@link ServiceClientError} (no answer: `NETWORK_ERROR`). */
async function call(url: string, init: RequestInit): Promise<Response> {
  let response: Response;
  try {
    // Never followed: a redirect would carry the key elsewhere.
    response = await fetch(url, { ...init, redirect: "manual" });
  } catch (cause) {
    throw new ServiceClientError(0, undefined, undefined, `no answer from ${url}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause, code: "NETWORK_ERROR" });
  }
  if (response.ok) return response;
  const text = await response.text().catch(() => "");
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: the text is the body.
  }
  throw new ServiceClientError(response.status, parsed);
}

// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** The file name of `Content-Disposition` (its UTF-8 form first), reduced to a plain name; undefined when none is usable. */
export function attachmentName(header: string | null): string | undefined {
  if (header === null) return undefined;
  const encoded = /filename\*=UTF-8''([^;]+)/i.exec(header)?.[1];
  let name: string | undefined;
  try {
    name = encoded === undefined ? undefined : decodeURIComponent(encoded);
  } catch {
    name = undefined;
  }
  name ??= /filename="([^"]*)"/i.exec(header)?.[1];
  if (name === undefined) return undefined;
  // A name only, never a path: the answer does not choose where the file goes.
  const plain = basename(name.replaceAll("\\", "/"));
  return plain === "" || plain === "." || plain === ".." || CONTROL.test(plain) ? undefined : plain;
}

/** `GET /exchange/{uid}/cases/{case}` or, without a case, `/exchange/{uid}/cases` (every case). */
export async function downloadExport(
  target: ExchangeTarget,
  user: string,
  caseNumber: string | undefined,
  query: { format: string; annotations: boolean; metadata: boolean },
): Promise<ExportDownload> {
  const params = new URLSearchParams({ format: query.format });
  if (!query.annotations) params.set("annotations", "false");
  if (!query.metadata) params.set("metadata", "false");
  const path = `${target.url}/exchange/${segment(user)}/cases${caseNumber === undefined ? "" : `/${segment(caseNumber)}`}?${params}`;
  const response = await call(path, { headers: headersOf(target) });
  if (response.body === null) throw new ServiceClientError(response.status, "", undefined, "the export came without a body");
  return { fileName: attachmentName(response.headers.get("Content-Disposition")), body: response.body };
}

/** What the import route answered: the result (or the preview), or a refusal that carries the result. */
export type ImportAnswer = { status: number; result: unknown };

/** `POST /exchange/{uid}/imports` with the package streamed from `body`. */
export async function uploadImport(
  target: ExchangeTarget,
  user: string,
  body: ReadableStream<Uint8Array>,
  query: { preview: boolean; overwrite: boolean; fileName: string },
): Promise<ImportAnswer> {
  const params = new URLSearchParams({ fileName: query.fileName });
  if (query.preview) params.set("preview", "true");
  if (query.overwrite) params.set("overwrite", "true");
  const headers = headersOf(target);
  headers.set("Content-Type", "application/zip");
  const init = { method: "POST", headers, body, duplex: "half" } as RequestInit;
  try {
    const response = await call(`${target.url}/exchange/${segment(user)}/imports?${params}`, init);
    return { status: response.status, result: await response.json() };
  } catch (err) {
    // A refused package: the worker's 4xx carries the import result, printed as without --url.
    const result = err instanceof ServiceClientError ? (err.error?.details as { result?: unknown } | undefined)?.result : undefined;
    if (result !== undefined && err instanceof ServiceClientError) return { status: err.status, result };
    throw err;
  }
}
