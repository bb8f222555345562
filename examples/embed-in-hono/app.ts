// An existing Hono app with its own middleware that mounts the whole service under
// /forensic and the data worker alone under /api/data.
// Run from the repository root after `npm ci`: npx bun examples/embed-in-hono/app.ts
import { Hono } from "hono";
import { logger } from "hono/logger";
import { secureHeaders } from "hono/secure-headers";
import { createDataWorker, createMemoryPorts, createService, parseConfig } from "@forensic-annotation/service";

const config = parseConfig({ R2_KEY_SECRET: process.env.R2_KEY_SECRET ?? "change-me", KEYS_AUTH: process.env.KEYS_AUTH });
const ports = createMemoryPorts();

export const app = new Hono();
app.use("*", logger());
app.use("*", secureHeaders());
app.get("/", (c) => c.text("the lab's own app"));
app.route("/forensic", createService(ports, config));
app.route("/api/data", createDataWorker({ blobs: ports.data, audit: ports.audit, clock: ports.clock, config }));

export default app;
