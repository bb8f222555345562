/**
 * @module
 * The image worker (docs/api.md#image-worker): upload (multipart field `file`), signed delivery URLs and
 * deletion, with `Authorization: Bearer IMAGES_API_TOKEN`; and, for the local host, the
 * delivery of image bytes to whoever holds a valid signed URL.
 */
import * as z from "zod";
import type { Context } from "hono";
import {
  getMultipartBoundary,
  MaxFileSizeExceededError,
  MaxHeaderSizeExceededError,
  MaxPartsExceededError,
  MaxTotalSizeExceededError,
  MultipartParseError,
  parseMultipartStream,
} from "@remix-run/multipart-parser";
import type { Bytes, ImageHost, ImageHostFactory } from "../ports.ts";
import type { ServiceConfig } from "../config/mod.ts";
import { bearerCheck } from "../http/auth.ts";
import { errorResponse } from "../http/errors.ts";
import { failedBodyRead, refuseContentEncoding } from "../http/body.ts";
import { declaresMoreThan } from "../http/limits.ts";
import { reserveBodyBytes, sharedBodyBudget } from "../http/body-budget.ts";
import { ServiceError } from "../errors.ts";
import { codePointName } from "../encoding/code-point.ts";
import { createRoute } from "../http/openapi-app.ts";
import { tagged } from "../http/openapi-tags.ts";
import { keyedSecurity, OPEN } from "../http/credentials-doc.ts";
import { answerJson, createWorkerApp, errorResponses, methodNotAllowed, mountOf, rawPathAfterMount } from "../http/worker-app.ts";
import type { WorkerApp } from "../http/worker-app.ts";
import { ImageDeleteResponseSchema, ImageUploadResponseSchema } from "../schemas/image.ts";
import { describeRefusal, inspectImage } from "../images/image-structure.ts";
import { UpstreamError } from "../images/upstream-error.ts";
import { type AccessControl, accessControl, protect, recordEvent, requireOwner } from "../http/access.ts";
import { actorOf } from "../http/actor.ts";
import { systemClock } from "../ports.ts";
import { routeFor } from "../rate-limit/rules.ts";
import type { WorkerEnv } from "../http/worker-app.ts";
import type { HeldImageFinder } from "../users/held-images.ts";
import { heldConflict } from "../users/legal-holds.ts";


/** Ports and configuration of the image worker. */
export interface ImageWorkerDeps {
  /** A fixed host (Cloudflare Images), or a factory of a host that serves bytes itself (the local host). */
  host: ImageHost | ImageHostFactory;
  /** Tokens, limits, `PUBLIC_URL` and CORS. */
  config: Pick<ServiceConfig, "allowedOrigin" | "imagesApiToken" | "publicUrl" | "maxImageBytes" | "identity" | "adminAuth" | "rateLimits" | "maxBodyBytesInFlight" | "bodyWaitSeconds">;
  /**
   * Identity, admin key, rate limits and service audit entries; default from `config`, without an audit store.
   * Shared by the workers `createService` mounts together; internal.
   *
   * @ignore
   */
  access?: AccessControl;
  /**
   * The legal hold that keeps an image, if any: a held image is not deleted (409,
   * docs/api.md#legal-holds). `createService` passes it over the users store; internal.
   *
   * @ignore
   */
  heldImage?: HeldImageFinder;
}

const MB = 1024 * 1024;
const UploadFormSchema = z.object({ file: z.string().describe("The image (JPEG, PNG, GIF, WebP, TIFF or BMP)").meta({ format: "binary" }) });

const uploadRoute = createRoute({
  tags: tagged("image"),
  method: "post",
  path: "/",
  summary: "Upload an image (multipart field `file`)",
  operationId: "uploadImage",
  security: keyedSecurity("imagesToken"),
  // Read by the handler part by part, holding only the file in memory.
  documented: { request: { body: { required: true, content: { "multipart/form-data": { schema: UploadFormSchema } } } } },
  responses: {
    200: { description: "Uploaded", content: { "application/json": { schema: ImageUploadResponseSchema } } },
    ...errorResponses({ 400: "Missing, malformed, too large or not an image", 403: "Bad token", 500: "Store or upstream failed" }),
  },
});
// The delivery URL is the whole rest of the path (several segments), decoded once by the handler.
const signRoute = createRoute({
  tags: tagged("image"),
  method: "get",
  path: "/{imageDeliveryUrl{[\\s\\S]+}}",
  summary: "A signed, time-limited URL for a delivery URL of this host (the whole URL as the path)",
  operationId: "signImageUrl",
  security: keyedSecurity("imagesToken"),
  request: { params: z.object({ imageDeliveryUrl: z.string() }) },
  // One path with the deletion (`/{image}`): the two differ by method only.
  documented: { path: "/{image}", request: { params: z.object({ image: z.string().describe("The delivery URL to sign, percent-encoded as one segment") }) } },
  responses: {
    200: { description: "The signed URL", content: { "text/plain": { schema: z.string() } } },
    ...errorResponses({ 400: "Not a delivery URL of this host", 403: "Bad token", 404: "Unknown image" }),
  },
});
const deleteRoute = createRoute({
  tags: tagged("image"),
  method: "delete",
  path: "/{imageId}",
  summary: "Delete an image",
  operationId: "deleteImage",
  security: keyedSecurity("imagesToken"),
  request: { params: z.object({ imageId: z.string() }) },
  documented: {
    path: "/{image}",
    request: {
      params: z.object({ image: z.string().describe("The image id") }),
      query: z.object({ owner: z.string().optional().describe("Delete only when the image is recorded as this user's (else 403)") }),
    },
  },
  responses: {
    200: { description: "Deleted", content: { "application/json": { schema: ImageDeleteResponseSchema } } },
    ...errorResponses({ 403: "Bad token", 404: "Unknown image", 409: "The image's case is on legal hold: nothing was deleted" }),
  },
});
const deliverRoute = createRoute({
  tags: tagged("image"),
  method: "get",
  path: "/delivery/{imageId}/{variant}",
  summary: "The image bytes, for a valid signed URL (no other credential)",
  operationId: "deliverImage",
  security: OPEN,
  request: { params: z.object({ imageId: z.string(), variant: z.string() }) },
  // A missing or bad signature is the host's 403, not a 400 of the route.
  documented: { request: { query: z.object({ exp: z.string(), sig: z.string() }) } },
  responses: {
    200: { description: "The image", content: { "image/*": { schema: z.string().meta({ format: "binary" }) } } },
    ...errorResponses({ 403: "Missing, bad or expired signature", 404: "Unknown image" }),
  },
});

/** The most bytes of one part's headers (the parser's default): a file name is at most a few hundred. */
const MAX_PART_HEADER_BYTES = 8 * 1024;

// C0 and C1 controls and DEL: no file system names a file with them, and they would reach the audit trail and mail as they are.
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The part's file name, or a 400 naming the control character it holds. */
function checkedFilename(filename: string): string {
  const control = CONTROL.exec(filename);
  if (control === null) return filename;
  throw ServiceError.validation(`The file name holds a control character (${codePointName(control[0].charCodeAt(0))})`, { filename });
}

/** The largest upload body: the image and up to 1 MB of other parts and framing. */
const uploadBodyBytes = (maxImageBytes: number): number => maxImageBytes + MB;

/** Reads the `file` part of a multipart upload, holding only that part in memory. */
async function readUpload(request: Request, maxBytes: number): Promise<{ bytes: Bytes; filename: string }> {
  // The media type exactly, in any case (RFC 9110 8.3.1): not multipart/form-data-x.
  const contentType = request.headers.get("Content-Type") ?? "";
  if (contentType.split(";", 1)[0]!.trim().toLowerCase() !== "multipart/form-data") {
    throw ServiceError.validation("Expected multipart/form-data with the image in a field named file");
  }
  const malformed = () =>
    ServiceError.validation(
      "The multipart body is malformed: it must be multipart/form-data with the boundary its Content-Type names, complete up to the closing boundary",
    );
  refuseContentEncoding(request.headers.get("content-encoding") ?? undefined);
  const boundary = getMultipartBoundary(contentType);
  if (boundary === null) throw malformed();
  if (request.body === null) throw ServiceError.validation("No file: send the image in a multipart field named file");
  const tooLarge = () => ServiceError.validation(`The image is larger than ${Math.round(maxBytes / MB)} MB`, { limitBytes: maxBytes });
  // A declared length over the body's cap is refused unread (the adapter discards what still comes).
  if (declaresMoreThan(request.headers, uploadBodyBytes(maxBytes))) throw tooLarge();
  let file: { bytes: Bytes; filename: string } | undefined;
  try {
    // Read to the closing boundary: a body cut short after its file part is refused, not stored.
    // The stream parser itself: its request form checks the media type case-sensitively (MULTIPART/FORM-DATA refused).
    for await (const part of parseMultipartStream(request.body, { boundary, maxHeaderSize: MAX_PART_HEADER_BYTES, maxFileSize: maxBytes, maxTotalSize: uploadBodyBytes(maxBytes), maxParts: 16 })) {
      if (part.name !== "file") continue;
      if (file !== undefined) throw ServiceError.validation("The multipart body has more than one field named file: one image per upload");
      // One copy: the part's chunks joined into a fresh ArrayBuffer, handed on as is.
      file = { bytes: part.bytes as Bytes, filename: checkedFilename(part.filename ?? "image") };
    }
  } catch (err) {
    if (err instanceof MaxFileSizeExceededError || err instanceof MaxTotalSizeExceededError) {
      throw tooLarge();
    }
    if (err instanceof MaxPartsExceededError) throw ServiceError.validation("The multipart body has more than 16 parts", { maxParts: 16 });
    if (err instanceof MaxHeaderSizeExceededError) {
      throw ServiceError.validation(`A part's headers are longer than ${MAX_PART_HEADER_BYTES} bytes (a file name that long?)`, { maxHeaderBytes: MAX_PART_HEADER_BYTES });
    }
    // The parser decodes each part's headers with a fatal UTF-8 decoder: its TypeError is the body's bytes, not ours.
    // The parser's own wording is not ours to show; say what a valid body looks like.
    if (err instanceof MultipartParseError || err instanceof TypeError) throw malformed();
    // Anything else broke while the body was read (the connection ended before its end).
    failedBodyRead(err);
  }
  if (file === undefined) throw ServiceError.validation("No file: send the image in a multipart field named file");
  return file;
}

/** The delivery URL a sign request names: the whole URL as the path, percent-encoded or not. */
function deliveryUrlFromPath(rawPath: string): string {
  let path = rawPath.replace(/^\//, "");
  try {
    path = decodeURIComponent(path);
  } catch {
    throw ServiceError.validation("The delivery URL has invalid percent-encoding");
  }
  // Some proxies fold "//" in paths: "https:/host/..." means "https://host/...".
  return path.replace(/^(https?):\/(?!\/)/i, "$1://");
}

/** The image worker's app, with the types of its routes (for hono's `hc` client). */
export type ImageWorkerApp = ReturnType<typeof imageWorker>;

/**
 * The route with its parameters typed (for `hc`) but not checked at run time: the sign
 * route's one parameter is the rest of the path, always a string when it matches, and the
 * handler reads the raw path. Without a check it is routed as `/*` (openapi-app.ts), which
 * keeps every route of the service on Hono's regular-expression router.
 */
function unvalidatedParams<R extends { request?: object }>(route: R): R {
  return { ...route, request: { ...route.request, params: undefined } };
}

/** Creates the image worker: upload, signing, deletion and (local host) delivery. */
export function createImageWorker(deps: ImageWorkerDeps): WorkerApp {
  return imageWorker(deps);
}

/** The image worker, its type inferred from its routes. */
function imageWorker(deps: ImageWorkerDeps) {
  const { config } = deps;
  const app = createWorkerApp({ allowedOrigin: config.allowedOrigin, methods: ["GET", "POST", "DELETE"] });
  const bearer = bearerCheck({ keys: [config.imagesApiToken], status: 403, variable: "IMAGES_API_TOKEN" });
  const access = deps.access ?? accessControl(config, { clock: systemClock });
  // `/delivery/{id}/{variant}` right under the mount, not a sign request naming such a URL.
  const isDelivery = (c: Context<WorkerEnv>) => /^\/delivery\/[^/]+\/[^/]+$/.test(c.req.path.slice(mountOf(c).length));
  protect(app, access, {
    status: 403,
    route: (c) => {
      if (c.req.method === "POST") return "image.upload";
      if (c.req.method === "DELETE") return "image.delete";
      return routeFor(c.req.method, isDelivery(c) ? "image.serve" : "image.sign");
    },
    credential: bearer,
    // The signed URL is the delivery's credential: only its per-IP limit applies.
    // HEAD too: it answers what GET would, without the bytes (a CDN or a client checking the link).
    isPublic: (c) => (c.req.method === "GET" || c.req.method === "HEAD") && isDelivery(c) && typeof deps.host === "function",
  });
  /**
   * Who must own the image: in identity mode the calling user (only the user recorded at
   * upload may sign or delete it; an image without a recorded owner, uploaded before
   * identity mode or with the admin key, is the admin's, as a case document proves nothing);
   * and with `?owner={uid}` (an account deletion) that user. The owner is read once.
   */
  const requireImageOwner = async (c: Context<WorkerEnv>, host: ImageHost, imageId: string) => {
    const actor = actorOf(c);
    const caller = actor?.kind === "user" ? actor.uid : undefined;
    const expected = c.req.query("owner");
    if (caller === undefined && expected === undefined) return;
    if (host.ownerOf === undefined) throw ServiceError.server("This image host cannot tell an image's owner");
    const owner = await host.ownerOf(imageId);
    if (owner === null) throw ServiceError.notFound("Image not found", { imageId });
    if (caller !== undefined && owner !== caller) await requireOwner(c, access, owner ?? "(no recorded owner)", { imageId }, null);
    if (expected !== undefined && owner !== expected) throw ServiceError.forbidden("The image is not recorded as that user's", { imageId });
  };
  const hostOf = (c: Context<WorkerEnv>): ImageHost => {
    if (typeof deps.host !== "function") return deps.host;
    const origin = config.publicUrl?.replace(/\/+$/, "") ?? new URL(c.req.url).origin;
    return deps.host(`${origin}${mountOf(c)}/delivery`);
  };

  // Upstream refusals keep their status and body; everything else takes the standard path.
  app.onError((err, c) => (err instanceof UpstreamError ? answerJson(c, err.body, err.upstreamStatus as 400) : errorResponse(err, c)));

  if (typeof deps.host === "function") {
    app.openapi(deliverRoute, (c) => {
      const host = hostOf(c);
      if (host.serve === undefined) throw ServiceError.notFound("This image host does not deliver images itself");
      return host.serve(c.req.param("imageId"), c.req.param("variant"), new URL(c.req.url).searchParams, c.req.header("If-None-Match"));
    });
  }

  const upload = async (c: Context<WorkerEnv>) => {
    const { bytes, filename } = await readUpload(c.req.raw, config.maxImageBytes);
    const checked = inspectImage(bytes);
    if (!checked.ok && checked.reason === "not-an-image") {
      throw ServiceError.validation("The file is not an image: JPEG, PNG, GIF, WebP, TIFF and BMP are accepted", { filename });
    }
    if (!checked.ok) {
      const refusal = describeRefusal("The file", checked);
      throw ServiceError.validation(refusal.message, { filename, ...refusal.details });
    }
    const { type: contentType, width, height } = checked;
    const actor = actorOf(c);
    const image = await hostOf(c).upload({ bytes, filename, contentType, width, height, ...(actor?.kind === "user" ? { owner: actor.uid } : {}) });
    await recordEvent(c, access, {
      action: "file-upload",
      result: "success",
      details: { fileName: filename, fileDetails: { fileId: image.id, originalFileName: filename, mimeType: contentType, fileSize: bytes.length } },
    });
    return answerJson(c, {
      success: true,
      result: { id: image.id, filename: image.filename, uploaded: image.uploaded, requireSignedURLs: true, variants: image.variants },
      errors: [],
      messages: [],
    }, 200);
  };
  const remove = async (c: Context<WorkerEnv, "/:imageId">) => {
    const host = hostOf(c);
    const imageId = c.req.param("imageId");
    await requireImageOwner(c, host, imageId);
    const held = await deps.heldImage?.(imageId);
    if (held !== undefined) throw heldConflict(held.userUid, held.hold, `deleting image ${imageId}`);
    if (!(await host.delete(imageId))) throw ServiceError.notFound("Image not found", { imageId });
    await recordEvent(c, access, { action: "file-delete", result: "success", details: { fileDetails: { fileId: imageId } } });
    return answerJson(c, { success: true, result: {}, errors: [], messages: [] }, 200);
  };
  const sign = async (c: Context<WorkerEnv>) => {
    const path = rawPathAfterMount(c);
    if (path === "" || path === "/") throw ServiceError.validation("The delivery URL is missing: GET /{imageDeliveryUrl}");
    const host = hostOf(c);
    const deliveryUrl = deliveryUrlFromPath(path);
    if (actorOf(c)?.kind === "user") {
      if (host.imageIdOf === undefined) throw ServiceError.server("This image host cannot tell an image's owner");
      await requireImageOwner(c, host, host.imageIdOf(deliveryUrl));
    }
    return c.text(await host.signedUrl(deliveryUrl), 200, { "Cache-Control": "no-store" });
  };
  const routed = app
    // Read only within the process's budget of body bytes in flight (MAX_BODY_BYTES_IN_FLIGHT).
    .openapi({ ...uploadRoute, middleware: reserveBodyBytes(sharedBodyBudget(config.maxBodyBytesInFlight, config.bodyWaitSeconds * 1000), uploadBodyBytes(config.maxImageBytes)) }, (c) => upload(c))
    .openapi(deleteRoute, (c) => remove(c))
    .openapi(unvalidatedParams(signRoute), (c) => sign(c));
  // The mount itself names no delivery URL: the same handler refuses it as before (400).
  app.get("/", sign);
  app.all("/", methodNotAllowed(["POST", "GET"]));
  app.all("/*", methodNotAllowed(["GET", "DELETE"]));
  return routed;
}
