/**
 * @module
 * The API reference page at `/docs`: Swagger UI (`@hono/swagger-ui`) over the service's own
 * `/openapi.json`, its script and stylesheet served by the service itself from
 * `docs-assets.ts` (no CDN, nothing outside the origin), loaded only when first asked for.
 */
import { SwaggerUI } from "@hono/swagger-ui";
import type { Context } from "hono";
import { methodNotAllowed, mountOf, type WorkerApp, type WorkerEnv } from "./worker-app.ts";

/** Where the page and its assets are, under the service's mount. */
export const DOCS_PATH = "/docs";
const ASSETS = `${DOCS_PATH}/assets`;

const ASSET_TYPES = {
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui.css": "text/css; charset=utf-8",
} as const;
type AssetName = keyof typeof ASSET_TYPES;

let unpacked: Promise<Record<AssetName, Uint8Array>> | undefined;

/** The assets, decompressed once per process (isolate) on first use. */
function assets(): Promise<Record<AssetName, Uint8Array>> {
  unpacked ??= import("./docs-assets.ts").then(async (packed) => ({
    "swagger-ui-bundle.js": await gunzipBase64(packed.SWAGGER_UI_BUNDLE),
    "swagger-ui.css": await gunzipBase64(packed.SWAGGER_UI_CSS),
  }));
  return unpacked;
}

async function gunzipBase64(base64: string): Promise<Uint8Array> {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

async function sha256Base64(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return btoa(String.fromCharCode(...digest));
}

/**
 * The page: Swagger UI pointed at this mount's `/openapi.json` and assets. Its one inline
 * script is allowed by its hash; everything else must come from the origin.
 */
async function page(c: Context<WorkerEnv>): Promise<Response> {
  const mount = mountOf(c);
  const markup = SwaggerUI({
    url: `${mount}/openapi.json`,
    baseUrl: `${mount}${ASSETS}`,
    // The online validator badge would call validator.swagger.io.
    validatorUrl: "none",
    persistAuthorization: false,
    displayOperationId: true,
  });
  const scripts = [...markup.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1]!);
  const hashes = await Promise.all(scripts.map(async (script) => `'sha256-${await sha256Base64(script)}'`));
  c.set("contentSecurityPolicy", [
    "default-src 'none'",
    `script-src 'self' ${hashes.join(" ")}`,
    // Swagger UI sets element styles itself.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; "));
  return c.html(
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Forensic Annotation Service API</title>
<link rel="icon" href="data:,">
</head>
<body>
${markup}
</body>
</html>
`,
    200,
    { "Cache-Control": "no-cache" },
  );
}

async function asset(c: Context<WorkerEnv>): Promise<Response> {
  const name = c.req.param("name") as string;
  if (!Object.hasOwn(ASSET_TYPES, name)) return c.notFound();
  const body = (await assets())[name as AssetName];
  // A copy per answer: a runtime may take over (detach) the buffer it is given as a body.
  return c.body(body.slice(), 200, { "Content-Type": ASSET_TYPES[name as AssetName], "Cache-Control": "public, max-age=86400" });
}

/** Adds `GET /docs` and its assets to the service's app; another method there is a 405 with Allow. */
export function registerDocsPage(app: WorkerApp): void {
  for (const [path, handler] of [[DOCS_PATH, page], [`${ASSETS}/swagger-ui-dist/:name`, asset]] as const) {
    app.get(path, handler);
    app.all(path, methodNotAllowed(["GET"], false));
  }
}
