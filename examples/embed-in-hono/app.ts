// An existing Hono app with its own middleware that mounts the whole service under
// /forensic and the data worker alone under /api/data.
// Run from the repository root after `npm ci`: npx bun examples/embed-in-hono/app.ts
// (R2_KEY_SECRET and the other variables of the README come from the environment; a worker
// whose key is unset says so in one line at start and in each 403.)
import { Hono } from "hono";
import { logger } from "hono/logger";
import { secureHeaders } from "hono/secure-headers";
import { createDataWorker, createMemoryPorts, createService, parseConfig } from "@forensic-annotation/service";
import { passClientIp } from "@forensic-annotation/service/bun";

const config = parseConfig(process.env);
const ports = createMemoryPorts();

// A default Hono app (strict about trailing slashes): the service routes `/forensic/keys/`
// as `/forensic/keys` whatever the host's options.
export const app = new Hono();
app.use("*", logger());
app.use("*", secureHeaders());
// Before the mounts: per-IP rate limits need the client's address, which Bun gives the app
// (from @forensic-annotation/service/node, /deno or /cloudflare on those runtimes).
app.use("*", passClientIp());
app.get("/", (c) => c.text("the lab's own app"));
app.route("/forensic", createService(ports, config));
app.route("/api/data", createDataWorker({ blobs: ports.data, audit: ports.audit, clock: ports.clock, config }));

// Bun serves the default export and prints "Started development server: <url>".
export default { port: Number(process.env.PORT ?? 8787), hostname: "127.0.0.1", fetch: app.fetch };
