/**
 * @module
 * The PDF worker (docs/api.md#pdf-worker): `POST /` renders the annotated report of docs/report.md from an image
 * URL and annotation data, without authentication. Every input problem is a 400 naming the
 * field; only a failure of rendering itself answers 500.
 */
import * as z from "zod";
import type { Clock } from "../ports.ts";
import type { ServiceConfig } from "../config/mod.ts";
import { MAX_IMAGE_URL_CHARS, PdfRequestSchema } from "../schemas/pdf.ts";
import { readJsonText } from "../http/body.ts";
import { limitBody } from "../http/limits.ts";
import { reserveBodyBytes, sharedBodyBudget } from "../http/body-budget.ts";
import { createRoute } from "../http/openapi-app.ts";
import { tagged } from "../http/openapi-tags.ts";
import { OPTIONAL_IDENTITY } from "../http/credentials-doc.ts";
import { createWorkerApp, errorResponses, methodNotAllowed } from "../http/worker-app.ts";
import type { WorkerApp } from "../http/worker-app.ts";
import { renderValidatedReport, type SignedConfirmation } from "../pdf/report.ts";
import { auditKeys } from "../audit/signing-keys.ts";
import { ReviewSignatureSchema } from "../schemas/review.ts";
import { checkReviewSignature, publishedKeys } from "../review/signatures.ts";
import { sealHolds } from "../review/confirmation-seal.ts";
import { deliveredImageId } from "../images/delivered-image.ts";
import { parseReportRequest } from "../pdf/report-request.ts";
import { reportFilename } from "../pdf/filename.ts";
import { type AccessControl, accessControl, protect, recordEvent } from "../http/access.ts";
import { systemClock } from "../ports.ts";
import { routeFor } from "../rate-limit/rules.ts";

/** What the PDF worker needs beyond the service configuration. */
export interface PdfWorkerOptions {
  /** Hosts the image may be fetched from; default `PDF_IMAGE_HOSTS`, or else the `PUBLIC_URL` host and the image delivery host. */
  imageHosts: readonly string[];
  /** Deadline of the image fetch, in milliseconds (default `PDF_IMAGE_TIMEOUT_MS`, 10 000). */
  timeoutMs: number;
  /** The largest image, in bytes (default `MAX_IMAGE_BYTES`). */
  maxImageBytes: number;
  /** The name in the footer's "Notes formatted by …" (default `PDF_SERVICE_NAME`). */
  serviceName: string;
}

/** Ports and configuration of the PDF worker. */
export interface PdfWorkerDeps {
  /** The service configuration (`PDF_IMAGE_HOSTS`, `PUBLIC_URL`, `MAX_IMAGE_BYTES`, `ALLOWED_ORIGIN`). */
  config: Pick<ServiceConfig, "allowedOrigin" | "publicUrl" | "pdfImageHosts" | "imageDeliveryHost" | "accountHash" | "pdfImageTimeoutMs" | "maxImageBytes" | "pdfServiceName" | "identity" | "adminAuth" | "rateLimits" | "maxBodyBytesInFlight" | "bodyWaitSeconds"> & Partial<Pick<ServiceConfig, "auditSigningKey" | "auditVerifyKeys">>;
  /** The fetch used for images; default the global `fetch`. */
  fetch?: typeof fetch;
  /** Dates a report whose request has no `currentDate`; default the system clock. */
  clock?: Clock;
  /**
   * Reads an image by this service's own delivery URL (mounted beside the local image host):
   * the image's response, or null when `imageUrl` is not one (then it is fetched).
   */
  ownImages?: (imageUrl: string, requestUrl: string) => Promise<Response> | null;
  /** Overrides of what the configuration gives. */
  options?: Partial<PdfWorkerOptions>;
  /**
   * Rate limits, and in identity mode a `pdf-generate` audit entry for a request that carries
   * a valid token (the PDF worker needs none); default from `config`, without an audit store.
   * Shared by the workers `createService` mounts together; internal.
   *
   * @ignore
   */
  access?: AccessControl;
}

/** The largest request: the largest `data:` URL plus room for the annotations and notes. */
const MAX_BODY_BYTES = MAX_IMAGE_URL_CHARS + 2 * 1024 * 1024;

/** The configuration the PDF worker's options come from. */
export type PdfOptionsConfig = Pick<ServiceConfig, "publicUrl" | "pdfImageHosts" | "imageDeliveryHost" | "pdfImageTimeoutMs" | "maxImageBytes" | "pdfServiceName">;

const renderRoute = createRoute({
  tags: tagged("pdf"),
  method: "post",
  path: "/",
  summary: "Render the annotated PDF report",
  operationId: "renderReport",
  security: OPTIONAL_IDENTITY,
  // Read by the handler: every input problem is a 400 naming the field.
  documented: { request: { body: { required: true, content: { "application/json": { schema: PdfRequestSchema } } } } },
  responses: {
    200: {
      description: "The report (`Content-Disposition: inline`, named after the case and item numbers)",
      content: { "application/pdf": { schema: z.string().meta({ format: "binary" }) } },
    },
    ...errorResponses({
      400: "Invalid body or field, refused or unreadable image, or a character no font covers",
      405: "Method not allowed",
      413: "Body too large",
      500: "Rendering failed",
      502: "The image host failed",
      504: "The image host did not answer in time",
    }),
  },
});

/** The options the configuration gives, before overrides. */
export function pdfWorkerOptions(config: PdfOptionsConfig, overrides: Partial<PdfWorkerOptions> = {}): PdfWorkerOptions {
  const ownHost = config.publicUrl === undefined ? [] : [new URL(config.publicUrl).host];
  return {
    imageHosts: config.pdfImageHosts ?? [...ownHost, config.imageDeliveryHost],
    timeoutMs: config.pdfImageTimeoutMs,
    maxImageBytes: config.maxImageBytes,
    serviceName: config.pdfServiceName,
    ...overrides,
  };
}

/** Builds `Content-Disposition: inline` with an ASCII `filename` and the exact one in `filename*`. */
function inlineDisposition(filename: { ascii: string; unicode: string }): string {
  const encoded = encodeURIComponent(filename.unicode).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `inline; filename="${filename.ascii}"; filename*=UTF-8''${encoded}`;
}

/** The PDF worker's app, with the types of its route (for hono's `hc` client). */
export type PdfWorkerApp = ReturnType<typeof pdfWorker>;

/** Creates the PDF worker: `POST /`. */
export function createPdfWorker(deps: PdfWorkerDeps): WorkerApp {
  return pdfWorker(deps);
}

/** The PDF worker, its type inferred from its routes. */
function pdfWorker(deps: PdfWorkerDeps) {
  const { config } = deps;
  const options = pdfWorkerOptions(config, deps.options);
  const app = createWorkerApp({ allowedOrigin: config.allowedOrigin, methods: ["POST"] });
  const access = deps.access ?? accessControl(config, { clock: deps.clock ?? systemClock });
  protect(app, access, {
    status: 403,
    route: (c) => routeFor(c.req.method, "pdf"),
    optionalIdentity: true,
  });

  const keys = auditKeys(config);
  /**
   * The review signature in `annotationData.confirmationData.signature`, when it verifies with this
   * service's keys, signed a file of the report's own case, the report's image is that very file
   * (a delivery URL of this service's image host naming it), and the confirmation's seal binds it
   * to the very results this report prints (a genuine signature pasted into other annotations or
   * over another image is not shown as signed).
   */
  const verifiedSignature = async (value: unknown, request: { caseNumber: string; imageUrl: string }, requestUrl: string): Promise<SignedConfirmation | undefined> => {
    const annotationData = (value as { annotationData?: unknown } | null)?.annotationData;
    if (annotationData === null || typeof annotationData !== "object" || Array.isArray(annotationData)) return undefined;
    const confirmationData = (annotationData as { confirmationData?: { signature?: unknown; seal?: unknown } }).confirmationData;
    const parsed = ReviewSignatureSchema.safeParse(confirmationData?.signature);
    if (!parsed.success) return undefined;
    if (parsed.data.record.key.split("/")[1] !== request.caseNumber) return undefined;
    if (deliveredImageId(request.imageUrl, requestUrl, config) !== parsed.data.fileId) return undefined;
    const jwks = await publishedKeys(keys);
    if (jwks.keys.length === 0 || !(await checkReviewSignature(parsed.data, jwks)).valid) return undefined;
    if (!(await sealHolds(confirmationData?.seal, parsed.data.jws, annotationData as Record<string, unknown>, jwks))) return undefined;
    const { printedName, signer, meaning, signedAt, fileId, record } = parsed.data;
    return { printedName, signer, meaning, signedAt, record: { fileId, version: record.version } };
  };

  // Read only within the process's budget of body bytes in flight (MAX_BODY_BYTES_IN_FLIGHT), shared with uploads.
  const bodyBudget = reserveBodyBytes(sharedBodyBudget(config.maxBodyBytesInFlight, config.bodyWaitSeconds * 1000), MAX_BODY_BYTES);
  const routed = app.openapi({ ...renderRoute, middleware: [bodyBudget, limitBody(MAX_BODY_BYTES)] as const }, async (c) => {
    const { value } = await readJsonText(c);
    const request = parseReportRequest(value);
    // A signed URL of this service's own image worker is read from it, not fetched.
    // Its refusal (bad or expired signature, unknown image) is the answer.
    const own = await (deps.ownImages?.(request.imageUrl, c.req.url) ?? null);
    const signed = await verifiedSignature(value, request, c.req.url);
    const pdf = await renderValidatedReport(request, {
      ...options,
      ...(signed === undefined ? {} : { signedConfirmation: signed }),
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
      ...(own !== null ? { imageHosts: [...options.imageHosts, new URL(request.imageUrl).host], fetch: () => Promise.resolve(own) } : {}),
      ...(deps.clock ? { clock: deps.clock } : {}),
    });
    const filename = reportFilename(request);
    await recordEvent(c, access, { action: "pdf-generate", result: "success", details: { caseNumber: request.caseNumber, fileName: filename.unicode } });
    return c.body(pdf, 200, {
      "Content-Type": "application/pdf",
      "Content-Disposition": inlineDisposition(filename),
      "Cache-Control": "no-store",
    });
  });
  app.all("/", methodNotAllowed(["POST"]));
  return routed;
}
