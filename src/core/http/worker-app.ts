/**
 * @module
 * The frame every worker shares: standard error bodies for thrown errors and unknown paths,
 * CORS before anything else, and the OpenAPI registry the routes describe themselves in.
 */
import { OpenAPIHono as ZodOpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import type { Context, Env, MiddlewareHandler } from "hono";
import { errorBody, errorResponse } from "./errors.ts";
import { ServiceError } from "../errors.ts";
import { siteCors } from "./cors.ts";
import { editResponseHeaders } from "./response-headers.ts";
import { ErrorBodySchema } from "../schemas/error.ts";
import type { Actor } from "../audit/service-events.ts";

/** What an adapter may pass as the second argument of `fetch`. */
export interface ServiceBindings {
  /** The client's IP address as the adapter saw it (socket peer, or CF-Connecting-IP on Cloudflare). */
  clientIp?: string;
}

/** What the middlewares of a request learn on the way (who acts, what was audited). */
export interface WorkerVariables {
  /** Who acts: set in identity mode or with the admin key. */
  actor?: Actor;
  /** True once a service audit entry was written for this request. */
  audited?: boolean;
  /** True once the security headers middleware runs for this request (outermost app only). */
  secured?: boolean;
  /** The headers every answer to this request carries (security headers, CORS), lower-case names. */
  frame?: Record<string, string>;
  /** The answer {@link answerWith} built with the frame's headers in it: nothing to add afterwards. */
  framed?: Response;
  /** The path the innermost worker is mounted at (`""` when it is the app itself). */
  mount?: string;
}

/** The Hono environment of every worker. */
export interface WorkerEnv {
  /** What the adapter passes to `fetch` (the client IP). */
  Bindings: ServiceBindings;
  /**
   * Per-request values (the actor); internal.
   *
   * @ignore
   */
  Variables: WorkerVariables;
}

/**
 * Security headers on every response, the set hono's `secureHeaders` sends with these
 * choices: no sniffing, no framing, no referrer, HSTS, and a CSP that lets a JSON or image
 * response load nothing. Images stay loadable from the site's origin (no
 * `Cross-Origin-Resource-Policy: same-origin`), and a PDF gets no CSP so browsers' built-in
 * viewers can show it.
 */
const SECURITY_HEADERS: readonly (readonly [string, string])[] = [
  ["Cross-Origin-Resource-Policy", "cross-origin"],
  ["Cross-Origin-Opener-Policy", "same-origin"],
  ["Origin-Agent-Cluster", "?1"],
  ["Referrer-Policy", "no-referrer"],
  ["Strict-Transport-Security", "max-age=15552000; includeSubDomains"],
  ["X-Content-Type-Options", "nosniff"],
  ["X-DNS-Prefetch-Control", "off"],
  ["X-Download-Options", "noopen"],
  ["X-Frame-Options", "DENY"],
  ["X-Permitted-Cross-Domain-Policies", "none"],
  ["X-XSS-Protection", "0"],
  ["Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"],
];

/** {@link SECURITY_HEADERS} as the plain object an answer is built with. */
const SECURITY_FRAME: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(SECURITY_HEADERS.map(([name, value]) => [name.toLowerCase(), value])),
);

/**
 * Sets the security headers once per request, by the outermost app: handed to the handler
 * as the request's frame (an answer built with {@link answerWith} carries them from the
 * start), else set on the answer afterwards.
 */
function securityHeaders(): MiddlewareHandler<WorkerEnv> {
  return async (c, next) => {
    // A worker mounted in the service is reached through the service's app: set them once.
    if (c.get("secured") === true) return await next();
    c.set("secured", true);
    c.set("frame", { ...SECURITY_FRAME });
    await next();
    if (c.res === c.get("framed")) return;
    editResponseHeaders(c, (headers) => {
      for (const [name, value] of SECURITY_HEADERS) headers.set(name, value);
      headers.delete("X-Powered-By");
      if (headers.get("Content-Type")?.startsWith("application/pdf")) headers.delete("Content-Security-Policy");
    });
  };
}

/**
 * `OpenAPIHono` of `@hono/zod-openapi` (a Hono app with an OpenAPI registry), under its own name.
 * (`deno doc --lint` reads `node_modules` as local code, so naming the npm type directly
 * would make it demand JSDoc for the npm package's own declarations.)
 * @ignore
 */
type OpenAPIHono<E extends Env> = ZodOpenAPIHono<E>;

/** A worker or the whole service: a Hono app (`OpenAPIHono` of `@hono/zod-openapi`) with an OpenAPI registry. */
export type WorkerApp = OpenAPIHono<WorkerEnv>;

/** Options of {@link createWorkerApp}. */
export interface WorkerAppOptions {
  /** `ALLOWED_ORIGIN`: the one site origin CORS allows. */
  allowedOrigin: string | undefined;
  /** The worker's methods, for CORS; without them the app adds no CORS (the root app). */
  methods?: readonly string[];
}

/** Creates a worker's app: CORS for its methods, then the standard error handling. */
export function createWorkerApp(options: WorkerAppOptions): WorkerApp {
  // Not strict: `/keys` and `/keys/`, `/audit` and `/audit/` are the same route, as clients send both.
  const app = new ZodOpenAPIHono<WorkerEnv>({ strict: false, defaultHook: refuseInvalidInput });
  documentAsDeclared(app);
  app.onError(errorResponse);
  app.notFound((c) => c.json(errorBody(404, `No route for ${c.req.method} ${new URL(c.req.url).pathname}`), 404));
  app.use("*", async (c, next) => {
    // Each worker's catch-all runs after its parent's: the last one names the worker's own mount.
    c.set("mount", c.req.routePath.replace(/\/?\*$/, ""));
    await next();
  });
  app.use("*", securityHeaders());
  if (options.methods) app.use("*", siteCors({ allowedOrigin: options.allowedOrigin, methods: options.methods }));
  return app;
}

/**
 * How the document shows a route whose routing differs from what clients are told: a path
 * Hono matches by a pattern (a key of several segments), and request parts the handler reads
 * itself, because checking them in the route would change the answers (strict UTF-8 JSON with
 * a depth limit, form bodies, the last of a repeated query name; docs/api.md).
 */
export interface RouteDocumentation {
  /** The path in the document, e.g. `/{filename}.json` for the route `/{filename{[\s\S]+}}`. */
  path?: string;
  /** Request parts described in the document only; the handler parses and checks them. */
  request?: RouteConfig["request"];
}

/** A route declaration: the `createRoute` configuration and how the document shows it. */
export type WorkerRouteConfig = RouteConfig & { documented?: RouteDocumentation };

/** Registers every route in the document as its `documented` part says (see {@link RouteDocumentation}). */
function documentAsDeclared(app: WorkerApp): void {
  const registry = app.openAPIRegistry;
  const registerPath = registry.registerPath.bind(registry);
  registry.registerPath = (route: WorkerRouteConfig) => {
    const { documented, ...operation } = route;
    if (documented === undefined) return registerPath(route);
    const request = { ...operation.request, ...documented.request };
    registerPath({ ...operation, path: documented.path ?? operation.path, request });
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
export function methodNotAllowed(allowed: readonly string[]): MiddlewareHandler {
  return () => {
    throw ServiceError.methodNotAllowed([...allowed, "OPTIONS"]);
  };
}

/**
 * An answer with the request's frame headers (security headers, CORS) in it from the start,
 * so the middlewares add nothing afterwards and the runtime writes it as built. Without a
 * frame (a handler called outside the worker frame) it is `c.body` with the Content-Type.
 */
export function answerWith(c: Context<WorkerEnv>, body: string | Uint8Array<ArrayBuffer>, status: number, contentType: string): Response {
  const frame = c.get("frame");
  if (frame === undefined) return c.body(body, status as 200, { "Content-Type": contentType });
  // The frame is this request's own object: the answer takes it as its headers.
  frame["content-type"] = contentType;
  // A PDF gets no CSP, so browsers' built-in viewers can show it.
  if (contentType.startsWith("application/pdf")) delete frame["content-security-policy"];
  c.set("frame", undefined);
  const response = new Response(body, { status, headers: frame });
  c.set("framed", response);
  return response;
}

/** The client IP the adapter passed in, if any. */
export function clientIp(c: Context<WorkerEnv>): string | undefined {
  const value: unknown = (c.env as ServiceBindings | undefined)?.clientIp;
  return typeof value === "string" && value !== "" ? value : undefined;
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
  const pathname = new URL(c.req.url).pathname;
  return pathname.startsWith(mount) ? pathname.slice(mount.length) : pathname;
}

/** OpenAPI response entries with the standard error body, for the given statuses. */
export function errorResponses(statuses: Record<number, string>): Record<
  number,
  { description: string; content: { "application/json": { schema: typeof ErrorBodySchema } } }
> {
  return Object.fromEntries(
    Object.entries(statuses).map(([status, description]) => [
      status,
      { description, content: { "application/json": { schema: ErrorBodySchema } } },
    ]),
  );
}
