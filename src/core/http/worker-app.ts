/**
 * @module
 * The frame every worker shares: standard error bodies for thrown errors and unknown paths,
 * CORS before anything else, and the OpenAPI registry the routes describe themselves in.
 */
import type { OpenAPIHono as ZodOpenAPIHono, RouteConfig } from "@hono/zod-openapi";
import { OpenAPIHono as LeanOpenAPIHono } from "./openapi-app.ts";
import { type Context, type Env, Hono, type MiddlewareHandler, type TypedResponse } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { JSONParsed } from "hono/utils/types";
import { getPathNoStrict } from "hono/utils/url";
import * as z from "zod";
import { errorBody, errorResponse } from "./errors.ts";
import { ServiceError } from "../errors.ts";
import { siteCorsSteps } from "./cors.ts";
import { editResponseHeaders } from "./response-headers.ts";
import { ErrorBodySchema } from "../schemas/error.ts";
import type { ServiceBindings, WorkerEnv } from "./worker-env.ts";
import { SECURITY_SCHEMES, type SecuritySchemeName } from "./credentials-doc.ts";
import { requestIdOf } from "./request-id.ts";
import type { RequestObserver } from "./operations.ts";

export type { ServiceBindings, WorkerEnv, WorkerVariables } from "./worker-env.ts";

/**
 * Security headers on every response, the set hono's `secureHeaders` sends with these
 * choices: no sniffing, no framing, no referrer, HSTS, and a CSP that lets a JSON or image
 * response load nothing. Images stay loadable from the site's origin (no
 * `Cross-Origin-Resource-Policy: same-origin`), and a PDF gets no CSP so browsers' built-in
 * viewers can show it. A new object on every call, lower-case names: a request's frame.
 */
function securityFrame(requestId: string): Record<string, string> {
  // An object literal: V8 copies it whole from its boilerplate, where spreading a frozen
  // constant copied it property by property (~3,500 instructions a request).
  return {
    "x-request-id": requestId,
    "cross-origin-resource-policy": "cross-origin",
    "cross-origin-opener-policy": "same-origin",
    "origin-agent-cluster": "?1",
    "referrer-policy": "no-referrer",
    "strict-transport-security": "max-age=15552000; includeSubDomains",
    "x-content-type-options": "nosniff",
    "x-dns-prefetch-control": "off",
    "x-download-options": "noopen",
    "x-frame-options": "DENY",
    "x-permitted-cross-domain-policies": "none",
    "x-xss-protection": "0",
    "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
  };
}

/** {@link securityFrame}'s headers as name and value pairs, for an answer that was not built with the frame. */
const SECURITY_HEADERS: readonly (readonly [string, string])[] = Object.entries(securityFrame("")).filter(([name]) => name !== "x-request-id");

/**
 * The security headers, set once per request by the outermost app: handed to the handler
 * as the request's frame (an answer built with {@link answerWith} carries them from the
 * start); true when this app set the frame, so it also sets them afterwards on an answer
 * that was not built with it ({@link finishSecurity}).
 */
function startSecurity(c: Context<WorkerEnv>): boolean {
  // A worker mounted in the service is reached through the service's app: set them once.
  if (c.get("secured") === true) return false;
  c.set("secured", true);
  c.set("frame", securityFrame(c.get("requestId") ?? requestIdOf(c.req.header("x-request-id"))));
  return true;
}

/** The security headers on an answer that was not built with the frame. */
function finishSecurity(c: Context<WorkerEnv>): void {
  if (c.res === c.get("framed")) return;
  editResponseHeaders(c, (headers) => {
    for (const [name, value] of SECURITY_HEADERS) headers.set(name, value);
    const requestId = c.get("requestId");
    if (requestId !== undefined) headers.set("X-Request-Id", requestId);
    headers.delete("X-Powered-By");
    if (headers.get("Content-Type")?.startsWith("application/pdf")) headers.delete("Content-Security-Policy");
    const own = c.get("contentSecurityPolicy");
    if (own !== undefined) headers.set("Content-Security-Policy", own);
  });
}

/**
 * `OpenAPIHono` of `@hono/zod-openapi` (a Hono app with an OpenAPI registry), under its own name.
 * (`deno doc --lint` reads `node_modules` as local code, so naming the npm type directly
 * would make it demand JSDoc for the npm package's own declarations.)
 * @ignore
 */
type OpenAPIHono<E extends Env> = ZodOpenAPIHono<E>;

/**
 * hono's `MiddlewareHandler`, under its own name (for the reason `OpenAPIHono` has one).
 * @ignore
 */
type HonoMiddleware = MiddlewareHandler;

/** A middleware for the host Hono app the service is mounted in (`app.use("*", passClientIp())`). */
export type HostMiddleware = HonoMiddleware;

/** A worker or the whole service: a Hono app (`OpenAPIHono` of `@hono/zod-openapi`) with an OpenAPI registry. */
export type WorkerApp = OpenAPIHono<WorkerEnv>;

/** Options of {@link createWorkerApp}. */
export interface WorkerAppOptions {
  /** `ALLOWED_ORIGIN`: the one site origin CORS allows. */
  allowedOrigin: string | undefined;
  /** The worker's methods, for CORS; without them the app adds no CORS (the root app). */
  methods?: readonly string[];
  /** Told of every request this app answers as the outermost app (the request log, metrics). */
  observer?: RequestObserver;
}

/** Creates a worker's app: CORS for its methods, then the standard error handling. */
export function createWorkerApp(options: WorkerAppOptions): WorkerApp {
  // Not strict: `/keys` and `/keys/`, `/audit` and `/audit/` are the same route, as clients send both
  // (routingPath is hono's non-strict path; hono takes a getPath of its own only when strict).
  const app = new LeanOpenAPIHono<WorkerEnv>({ getPath: routingPath, defaultHook: refuseInvalidInput });
  documentAsDeclared(app);
  app.onError(errorResponse);
  app.notFound(noRoute);
  const reroute = trailingSlashRerouter(app);
  const observer = options.observer;
  const cors = options.methods ? siteCorsSteps({ allowedOrigin: options.allowedOrigin, methods: options.methods }) : undefined;
  // The mount, the security headers and CORS, in this order, as one middleware: each layer
  // of middleware is an async step of its own on every request.
  app.use("*", async (c, next) => {
    const outermost = c.get("mount") === undefined;
    // Each worker's catch-all runs after its parent's: the last one names the worker's own mount.
    const mount = mountOfRoute(c.req.routePath);
    c.set("mount", mount);
    const startedAt = outermost && observer !== undefined ? performance.now() : 0;
    if (outermost) {
      // The rerouted request below runs through this frame again and is reported there.
      if (mount !== "") {
        const rerouted = await reroute(c, mount);
        if (rerouted !== undefined) return rerouted;
      }
      c.set("requestId", requestIdOf(c.req.header("x-request-id")));
      if (observer?.logsFailures === true) c.set("failuresLogged", true);
    }
    const secures = startSecurity(c);
    const started = cors?.start(c);
    // A preflight is answered here; the security headers are still added on the way out.
    if (started?.preflight !== undefined) c.res = started.preflight;
    else {
      await next();
      if (started !== undefined && cors !== undefined) cors.finish(c, started.echoed);
    }
    if (secures) finishSecurity(c);
    if (outermost && c.req.method === "HEAD") await declareLength(c);
    if (outermost && observer !== undefined) {
      const actor = c.get("actor");
      // Reporting never changes an answer already made: a failing log write is dropped.
      try {
        observer.answered({
          c,
          requestId: c.get("requestId")!,
          prefix: mount,
          startedAt,
          sub: actor?.kind === "user" ? actor.uid : undefined,
          audited: c.get("audited") === true,
        });
      } catch {
        // Nothing to report it to: the log is what failed.
      }
    }
  });
  return app;
}

/**
 * A HEAD answer says the length its GET would send: hono answers HEAD with the GET's headers and
 * no body, and without a Content-Length there Bun and Deno write `Content-Length: 0`, an empty
 * document. Only HEAD pays for it (the GET's body is measured, then dropped as before).
 */
async function declareLength(c: Context<WorkerEnv>): Promise<void> {
  if (c.res.body === null || c.res.headers.has("content-length")) return;
  // Read once (no copy of the stream): the bytes go on in the answer hono then strips for HEAD.
  const body = await c.res.arrayBuffer();
  const answer = new Response(body, c.res);
  answer.headers.set("content-length", String(body.byteLength));
  c.res = answer;
}

/** A catch-all route's path without its `*` and the `/` before it (`/data/*` -> `/data`, `/*` -> ``), without a regular expression. */
function mountOfRoute(path: string): string {
  if (!path.endsWith("*")) return path;
  return path.endsWith("/*") ? path.slice(0, -2) : path.slice(0, -1);
}

/**
 * hono's non-strict routing path of a request (`getPathNoStrict`: the path, a trailing `/`
 * cut), from {@link pathnameOf}'s native search where hono loops over the URL's characters in
 * JavaScript; a path with a `%` (decoded by hono) takes hono's own function.
 */
function routingPath(request: Request): string {
  const path = pathnameOf(request.url);
  if (path.includes("%")) return getPathNoStrict(request);
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

/** hono's own error handler, which `route` recognises as "no error handling of its own". */
const HONO_ERROR_HANDLER = (new Hono() as unknown as ErrorHandling).errorHandler;

/** The field hono keeps an app's `onError` handler in (private in its types, read by `route`). */
interface ErrorHandling {
  errorHandler: unknown;
}

/**
 * Mounts `worker` at `path` (`app.route(path, worker)`). hono wraps every handler of a mounted
 * app that has an `onError` of its own in an error boundary of its own (one more composed
 * call per middleware on every request); a worker whose errors `app` answers with the same
 * handler does not need it, as the innermost middleware that throws is already caught there.
 */
export function mountWorker(app: WorkerApp, path: string, worker: WorkerApp): void {
  const own = worker as unknown as ErrorHandling;
  if (own.errorHandler !== (app as unknown as ErrorHandling).errorHandler) {
    app.route(path, worker);
    return;
  }
  const handler = own.errorHandler;
  own.errorHandler = HONO_ERROR_HANDLER;
  try {
    app.route(path, worker);
  } finally {
    own.errorHandler = handler;
  }
}

/**
 * What `app`'s error handler answers to `err`, as hono answers an error thrown by a middleware
 * of `app` (`c.error` set, the answer in `c.res`): for a middleware that catches its own
 * refusal to add to the answer. A thrown value that is not an `Error` is thrown on, as hono does.
 */
export async function answerError(app: WorkerApp, err: unknown, c: Context<WorkerEnv>): Promise<void> {
  if (!(err instanceof Error)) throw err;
  c.error = err;
  c.res = await (app as unknown as { errorHandler: (err: Error, c: Context<WorkerEnv>) => Response | Promise<Response> }).errorHandler(err, c);
}

function noRoute(c: Context<WorkerEnv>): Response {
  return c.json(errorBody(404, `No route for ${c.req.method} ${pathnameOf(c.req.url)}`), 404);
}

/**
 * Mounted in a host app (`parent.route("/forensic", app)`), routes are matched by the host's
 * router, which is strict by default: `/forensic/audit/audit/` would miss `/audit/audit`. A
 * request whose path ends in `/` is therefore answered by the app mounted at the same prefix
 * in a non-strict router, so it routes as it does under `serve` whatever the host's options.
 * The request (URL included) is passed as it is, so keys, mounts and signed URLs see the real path.
 */
function trailingSlashRerouter(app: WorkerApp): (c: Context<WorkerEnv>, mount: string) => Promise<Response | undefined> {
  const routers = new Map<string, Hono<WorkerEnv>>();
  const rerouted = new WeakSet<Request>();
  return async (c, mount) => {
    const request = c.req.raw;
    if (!new URL(request.url).pathname.endsWith("/") || rerouted.has(request)) return undefined;
    rerouted.add(request);
    let router = routers.get(mount);
    if (router === undefined) {
      // `mount` is the host's route pattern (e.g. `/forensic`), never the request's path: one router per mount.
      router = new Hono<WorkerEnv>({ strict: false });
      router.notFound(noRoute);
      router.onError(errorResponse);
      router.route(mount, app);
      routers.set(mount, router);
    }
    // The host's middleware may have found the client IP (`passClientIp`): carry it over.
    const ip = clientIp(c);
    const env: ServiceBindings = ip === undefined ? c.env : { ...c.env, clientIp: ip };
    return await router.fetch(request, env, executionContextOf(c));
  };
}

function executionContextOf(c: Context<WorkerEnv>): ExecutionContextLike | undefined {
  try {
    return c.executionCtx;
  } catch {
    return undefined; // Hono throws when the runtime passed none.
  }
}

type ExecutionContextLike = Context<WorkerEnv>["executionCtx"];

/**
 * How the document shows a route whose routing differs from what clients are told: a path
 * Hono matches by a pattern (a key of several segments), and request parts the handler reads
 * itself, because checking them in the route would change the answers (strict UTF-8 JSON with
 * a depth limit, form bodies, the last of a repeated query name; docs/api.md).
 */
export interface RouteDocumentation {
  /** The path in the document, e.g. `/{image}` for the route `/{imageDeliveryUrl{[\s\S]+}}`. */
  path?: string;
  /** Request parts described in the document only; the handler parses and checks them. */
  request?: RouteConfig["request"];
  /**
   * The route shown as several operations instead of one: a key of several segments is
   * documented as one path per shape (each segment a parameter a generated client encodes).
   */
  shapes?: readonly {
    path: string;
    operationId: string;
    params: NonNullable<RouteConfig["request"]>["params"];
    summary?: string;
    /** What this shape sends that the route's declaration does not say (a typed body). */
    request?: Omit<NonNullable<RouteConfig["request"]>, "params">;
    /** Answers of this shape in place of the route's (a typed answer). */
    responses?: RouteConfig["responses"];
  }[];
}

/** A route declaration: the `createRoute` configuration and how the document shows it. */
export type WorkerRouteConfig = RouteConfig & { documented?: RouteDocumentation };

/** Registers every route in the document as its `documented` part says (see {@link RouteDocumentation}), with the security schemes it names. */
function documentAsDeclared(app: WorkerApp): void {
  const registry = app.openAPIRegistry;
  const registerPath = registry.registerPath.bind(registry);
  const schemes = new Set<string>();
  registry.registerPath = (route: WorkerRouteConfig) => {
    for (const requirement of route.security ?? []) {
      for (const name of Object.keys(requirement) as SecuritySchemeName[]) {
        if (schemes.has(name)) continue;
        schemes.add(name);
        registry.registerComponent("securitySchemes", name, SECURITY_SCHEMES[name]);
      }
    }
    const { documented, ...operation } = route;
    if (documented === undefined) return registerPath(route);
    const request = { ...operation.request, ...documented.request };
    if (documented.shapes === undefined) return registerPath({ ...operation, path: documented.path ?? operation.path, request });
    for (const shape of documented.shapes) {
      registerPath({
        ...operation,
        path: shape.path,
        operationId: shape.operationId,
        summary: shape.summary ?? operation.summary,
        request: { ...request, ...shape.request, params: shape.params },
        responses: { ...operation.responses, ...shape.responses },
      });
    }
  };
}

/** A route's own check of its parameters failed: the standard 400 naming the field, as the handlers' own checks give. */
function refuseInvalidInput(result: { success: boolean; target: string; error?: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } }): void {
  if (result.success) return;
  const issues = (result.error?.issues ?? []).map((issue) => ({ path: issue.path.map(String).join("."), message: issue.message }));
  const first = issues[0];
  const field = first && first.path !== "" ? ` at "${first.path}"` : "";
  throw ServiceError.validation(`Invalid ${result.target}${field}: ${first?.message ?? "invalid"}`, { issues });
}

/** A handler that answers 405 with `Allow` for a path whose other methods exist. */
export function methodNotAllowed(allowed: readonly string[], preflight = true): MiddlewareHandler {
  // A worker answers CORS preflights (OPTIONS); the service's own paths (/health, /openapi.json, /docs) have no CORS.
  const methods = preflight ? [...allowed, "OPTIONS"] : allowed;
  return () => {
    throw ServiceError.methodNotAllowed(methods);
  };
}

/**
 * An answer with the request's frame headers (security headers, CORS) in it from the start,
 * so the middlewares add nothing afterwards and the runtime writes it as built. Without a
 * frame (a handler called outside the worker frame) it is `c.body` with the Content-Type.
 */
export function answerWith(
  c: Context<WorkerEnv>,
  body: string | Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | null,
  status: number,
  contentType: string,
  headers?: Record<string, string>,
): Response {
  const frame = c.get("frame");
  if (frame === undefined) return c.body(body as string, status as 200, { ...headers, "Content-Type": contentType });
  // The frame is this request's own object: the answer takes it as its headers.
  frame["content-type"] = contentType;
  // Extra headers (an attachment's Content-Disposition), lower-case as the frame's own.
  for (const [name, value] of Object.entries(headers ?? {})) frame[name.toLowerCase()] = value;
  // A PDF gets no CSP, so browsers' built-in viewers can show it.
  if (contentType.startsWith("application/pdf")) delete frame["content-security-policy"];
  c.set("frame", undefined);
  const response = new Response(body, { status, headers: frame });
  c.set("framed", response);
  return response;
}

/**
 * `c.json(value, status)` built with the request's frame ({@link answerWith}): the same body,
 * status and Content-Type, typed as `c.json` types it (for `hc`), with nothing added afterwards.
 */
export function answerJson<T, S extends ContentfulStatusCode>(c: Context<WorkerEnv>, value: T, status: S): Response & TypedResponse<JSONParsed<T>, S, "json"> {
  return answerWith(c, JSON.stringify(value), status, "application/json") as Response & TypedResponse<JSONParsed<T>, S, "json">;
}

/**
 * A JSON answer whose text (or its UTF-8) is already written (stored JSON served as stored, or
 * a small answer written out), typed as `c.json(value: T)` would type it; the caller vouches that `text` is `T`.
 */
export function answerJsonText<T, S extends ContentfulStatusCode>(c: Context<WorkerEnv>, text: string | Uint8Array<ArrayBuffer>, status: S): Response & TypedResponse<JSONParsed<T>, S, "json"> {
  return answerWith(c, text, status, "application/json") as Response & TypedResponse<JSONParsed<T>, S, "json">;
}

/** The client IP the adapter passed in (`fetch(request, { clientIp })`) or a host app's middleware set, if any. */
export function clientIp(c: Context<WorkerEnv>): string | undefined {
  const value: unknown = (c.env as ServiceBindings | undefined)?.clientIp;
  if (typeof value === "string" && value !== "") return value;
  const found: unknown = c.get("clientIp");
  return typeof found === "string" && found !== "" ? found : undefined;
}

/**
 * A middleware for a host app that mounts the service: sets the client IP that `ip` reads from
 * the request (the runtime's connection), so per-IP rate limits count it. Each runtime's
 * adapter has its own (`passClientIp` of `./node`, `./bun`, `./deno`, `./cloudflare`).
 */
export function clientIpMiddleware(ip: (c: Context) => string | undefined): HostMiddleware {
  return async (c, next) => {
    let found: string | undefined;
    try {
      found = ip(c);
    } catch {
      found = undefined; // Not the runtime the helper was written for: no IP, as before.
    }
    if (typeof found === "string" && found !== "") (c as unknown as Context<WorkerEnv>).set("clientIp", found);
    await next();
  };
}

/**
 * `new URL(url).pathname` of a request's URL without parsing it: a request's URL is absolute
 * and already serialised, so its path is the text between the authority and `?` or `#`.
 */
export function pathnameOf(url: string): string {
  const authority = url.indexOf("//") + 2;
  // indexOf searches natively: a loop over the characters in JavaScript cost ~2,800 instructions a data GET.
  const start = url.indexOf("/", authority);
  const query = url.indexOf("?", authority);
  const hash = url.indexOf("#", authority);
  const end = query === -1 ? hash : hash === -1 ? query : Math.min(query, hash);
  if (start === -1 || (end !== -1 && end < start)) return "/";
  return end === -1 ? url.slice(start) : url.slice(start, end);
}

/** The path the worker handling the request is mounted at (`""` when it is the app itself). */
export function mountOf(c: Context<WorkerEnv>): string {
  return c.get("mount") ?? "";
}

/**
 * The request path after the worker's mount point, still percent-encoded. Hono decodes
 * `c.req.path`; storage keys must be decoded exactly once, by the key builder.
 */
export function rawPathAfterMount(c: Context<WorkerEnv>): string {
  const mount = mountOf(c);
  const pathname = pathnameOf(c.req.url);
  return pathname.startsWith(mount) ? pathname.slice(mount.length) : pathname;
}

/**
 * The raw path after the mount as a route reads its parameters: without its leading slash and
 * one trailing slash (`/keys/X/` is `/keys/X`: docs/api.md Conventions), still percent-encoded.
 */
export function routePathAfterMount(c: Context<WorkerEnv>): string {
  const path = rawPathAfterMount(c);
  const start = path.startsWith("/") ? 1 : 0;
  const end = path.length > start + 1 && path.endsWith("/") ? path.length - 1 : path.length;
  return path.slice(start, end);
}

/**
 * The standard error body, once in the document's components (`#/components/schemas/ErrorBody`).
 * Made after `./openapi-app.ts` extended zod (imported above): a schema made before that has no `openapi`.
 */
const ErrorBodyComponent = z.object(ErrorBodySchema.shape).openapi("ErrorBody");

/** OpenAPI response entries with the standard error body, for the given statuses. */
export function errorResponses(statuses: Record<number, string>): Record<
  number,
  { description: string; content: { "application/json": { schema: typeof ErrorBodySchema } } }
> {
  return Object.fromEntries(
    Object.entries(statuses).map(([status, description]) => [
      status,
      { description, content: { "application/json": { schema: ErrorBodyComponent } } },
    ]),
  );
}
