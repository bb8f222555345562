/**
 * @module
 * The keys worker (docs/api.md#keys-worker): hands a logged-in client the worker keys it needs, by name.
 * Only names on the allow-list (`KEYS_EXPOSED`) are answered, looked up as own entries of
 * the configuration, and the signing and upstream secrets are never on that list.
 */
import * as z from "zod";
import type { ServiceConfig } from "../config/mod.ts";
import { authKeyCheck } from "../http/auth.ts";
import { ServiceError } from "../errors.ts";
import { createRoute } from "../http/openapi-app.ts";
import { tagged } from "../http/openapi-tags.ts";
import { KEYS_SECURITY } from "../http/credentials-doc.ts";
import { createWorkerApp, errorResponses, methodNotAllowed, routePathAfterMount } from "../http/worker-app.ts";
import { decodeSegment } from "../storage/keys.ts";
import type { WorkerApp } from "../http/worker-app.ts";
import { routeFor } from "../rate-limit/rules.ts";
import { type AccessControl, accessControl, protect } from "../http/access.ts";
import { systemClock } from "../ports.ts";

/** Configuration of the keys worker. */
export interface KeysWorkerDeps {
  /** The service configuration: `KEYS_AUTH`, `KEYS_EXPOSED` and the values handed out. */
  config: Pick<ServiceConfig, "allowedOrigin" | "keysAuth" | "keysExposed" | "env" | "identity" | "adminAuth" | "rateLimits">;
  /**
   * Identity, admin key and rate limits; default from `config`.
   * Shared by the workers `createService` mounts together; internal.
   *
   * @ignore
   */
  access?: AccessControl;
}

const KeyNameSchema = z.object({ keyName: z.string().describe("Environment variable name, e.g. R2_KEY_SECRET") });
const readKeyRoute = createRoute({
  tags: tagged("keys"),
  method: "get",
  path: "/{keyName}",
  summary: "The value of an allow-listed key, as plain text",
  operationId: "readKey",
  security: KEYS_SECURITY,
  request: { params: KeyNameSchema },
  responses: {
    200: { description: "The value", content: { "text/plain": { schema: z.string() } } },
    ...errorResponses({ 400: "Key name missing", 403: "Bad key", 404: "Unknown or not exposed" }),
  },
});

/** The keys worker's app, with the types of its route (for hono's `hc` client). */
export type KeysWorkerApp = ReturnType<typeof keysWorker>;

/** Creates the keys worker: `GET /{keyName}` answers the value as plain text. */
export function createKeysWorker(deps: KeysWorkerDeps): WorkerApp {
  return keysWorker(deps);
}

/** The keys worker, its type inferred from its routes. */
function keysWorker(deps: KeysWorkerDeps) {
  const { config } = deps;
  const app = createWorkerApp({ allowedOrigin: config.allowedOrigin, methods: ["GET"] });
  const access = deps.access ?? accessControl(config, { clock: systemClock });
  protect(app, access, {
    status: 403,
    route: (c) => routeFor(c.req.method, "keys"),
    // Identity mode: any valid identity token (checked by `protect`) stands in for KEYS_AUTH.
    credential: access.identity === undefined ? authKeyCheck({ keys: [config.keysAuth], status: 403, variable: "KEYS_AUTH" }) : undefined,
  });
  const exposed = new Set(config.keysExposed);

  app.get("/", () => {
    throw ServiceError.validation("Key name is missing: GET /{keyName}");
  });
  const routed = app.openapi(readKeyRoute, (c) => {
    // Decoded from the raw path as every key segment is: a broken escape (%ZZ) is a 400, not a name that is not there.
    const name = decodeSegment(routePathAfterMount(c), "keyName");
    // A Map holds only own entries, so names like "__proto__" or "constructor" find nothing.
    const value = exposed.has(name) ? config.env.get(name) : undefined;
    if (value === undefined) throw ServiceError.notFound("Key not found", { keyName: name });
    return c.text(value, 200, { "Cache-Control": "no-store" });
  });
  app.all("/:keyName?", methodNotAllowed(["GET"]));
  return routed;
}
