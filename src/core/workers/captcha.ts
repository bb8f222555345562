/**
 * @module
 * The captcha worker (docs/api.md#captcha-worker): verifies a client's CAPTCHA token with the external
 * service and answers its verdict with 200, whether the token passed or not.
 */
import { getMultipartBoundary, MultipartParseError, parseMultipart } from "@remix-run/multipart-parser";
import type { CaptchaVerifier } from "../ports.ts";
import type { ServiceConfig } from "../config/mod.ts";
import { CaptchaRequestSchema, CaptchaResponseSchema } from "../schemas/captcha.ts";
import { decodeUtf8, parseJsonText, parseWith, readRequestBytes, refuseContentEncoding } from "../http/body.ts";
import { limitBody } from "../http/limits.ts";
import { type AccessControl, accessControl } from "../http/access.ts";
import { rateLimit } from "../http/rate-limit.ts";
import { routeFor } from "../rate-limit/rules.ts";
import { systemClock } from "../ports.ts";
import { createRoute } from "../http/openapi-app.ts";
import { tagged } from "../http/openapi-tags.ts";
import { OPEN } from "../http/credentials-doc.ts";
import { answerJson, clientIp, createWorkerApp, errorResponses, methodNotAllowed } from "../http/worker-app.ts";
import type { WorkerApp } from "../http/worker-app.ts";

/** Ports and configuration of the captcha worker. */
export interface CaptchaWorkerDeps {
  /** Asks the external CAPTCHA service about a client's token. */
  verifier: CaptchaVerifier;
  /** The service configuration (`ALLOWED_ORIGIN`). */
  config: Pick<ServiceConfig, "allowedOrigin" | "identity" | "adminAuth" | "rateLimits">;
  /**
   * Rate limits (per client IP: the captcha worker knows no user); default from `config`.
   * Shared by the workers `createService` mounts together; internal.
   *
   * @ignore
   */
  access?: AccessControl;
}

const MAX_BODY_BYTES = 16 * 1024;
const verifyRoute = createRoute({
  tags: tagged("captcha"),
  method: "post",
  path: "/",
  summary: "Verify a CAPTCHA token",
  operationId: "verifyCaptcha",
  security: OPEN,
  // JSON or a widget's form post, read by the handler.
  documented: { request: { body: { required: true, content: { "application/json": { schema: CaptchaRequestSchema } } } } },
  responses: {
    200: { description: "Verification completed", content: { "application/json": { schema: CaptchaResponseSchema } } },
    ...errorResponses({ 400: "Token missing or bad body", 405: "Method not allowed", 500: "Verifier failed" }),
  },
});

/**
 * Reads the token from JSON or, as a Turnstile widget posts it, from a form body. Forms are read
 * here, not by `Request.formData()`: each runtime's form parser read other bodies (a charset,
 * `%ZZ`, a preamble, `filename=""`), so the token sent on differed by runtime.
 */
async function readCaptchaBody(request: Request): Promise<unknown> {
  refuseContentEncoding(request.headers.get("content-encoding") ?? undefined);
  const type = request.headers.get("Content-Type") ?? "";
  // The media type exactly, in any case (RFC 9110 8.3.1): not application/x-www-form-urlencoded-x.
  const media = type.split(";", 1)[0]!.trim().toLowerCase();
  const bytes = await readRequestBytes(request);
  // URLSearchParams is the WHATWG form parser every runtime implements alike (UTF-8 whatever the charset says).
  if (media === "application/x-www-form-urlencoded") return Object.fromEntries(new URLSearchParams(decodeUtf8(bytes)));
  if (media === "multipart/form-data") return multipartFields(type, new Uint8Array(bytes));
  return parseJsonText(decodeUtf8(bytes));
}

/** The text fields of a multipart form (parts without a file name), by one parser on every runtime; a malformed body has none. */
function multipartFields(contentType: string, bytes: Uint8Array): Record<string, string> {
  const boundary = getMultipartBoundary(contentType);
  const fields: [string, string][] = [];
  if (boundary === null) return {};
  try {
    for (const part of parseMultipart(bytes, { boundary, maxParts: 16, maxHeaderSize: 8 * 1024 })) {
      if (part.name !== undefined && part.filename === undefined) fields.push([part.name, decodeUtf8(part.bytes)]);
    }
  } catch (err) {
    // The parser's errors (and its fatal UTF-8 decoding of part headers) are the body's fault: no fields.
    if (err instanceof MultipartParseError || err instanceof TypeError) return {};
    throw err;
  }
  // As own properties, whatever the names (`__proto__` included).
  return Object.fromEntries(fields);
}

/** The captcha worker's app, with the types of its route (for hono's `hc` client). */
export type CaptchaWorkerApp = ReturnType<typeof captchaWorker>;

/** Creates the captcha worker: `POST /`. */
export function createCaptchaWorker(deps: CaptchaWorkerDeps): WorkerApp {
  return captchaWorker(deps);
}

/** The captcha worker, its type inferred from its routes. */
function captchaWorker(deps: CaptchaWorkerDeps) {
  const { verifier, config } = deps;
  const app = createWorkerApp({ allowedOrigin: config.allowedOrigin, methods: ["POST"] });
  const { limiter, limits } = deps.access ?? accessControl(config, { clock: systemClock });
  app.use("*", rateLimit({ limiter, limits, by: "ip", route: (c) => routeFor(c.req.method, "captcha") }));

  const routed = app.openapi({ ...verifyRoute, middleware: limitBody(MAX_BODY_BYTES) }, async (c) => {
    const body = parseWith(CaptchaRequestSchema, await readCaptchaBody(c.req.raw), "request body");
    const token = body["captcha-response"] ?? body["cf-turnstile-response"] ?? "";
    const outcome = await verifier.verify(token, clientIp(c));
    return answerJson(
      c,
      {
        success: outcome.success,
        "error-codes": outcome["error-codes"],
        challenge_ts: outcome.challenge_ts,
        hostname: outcome.hostname,
      },
      200,
    );
  });
  app.all("/", methodNotAllowed(["POST"]));
  return routed;
}
