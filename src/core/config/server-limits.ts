/**
 * @module
 * What one `serve` process admits at once: connections (in all and per client address), how
 * long a request's headers may take, and the request-body bytes read into memory at once.
 */
import * as z from "zod";
import { camelKeys, positiveInt, variable, variableProblem, WHEN_VALID } from "./variables.ts";

/** A header block slower than about four minutes is no client's. */
const MAX_HEADERS_TIMEOUT_SECONDS = 255;

/** A client's own timeout comes long before five minutes in line. */
const MAX_BODY_WAIT_SECONDS = 300;

/** The server-limit variables. */
export const ServerLimitsSection = z.object({
  MAX_CONNECTIONS: variable(
    positiveInt(4096, 1_000_000),
    "open connections `serve` holds at once; one more is closed at accept (keep it well under `ulimit -n`: the stores need descriptors too); Node, Deno, Bun unless `BUN_SERVER=bun-serve` ([connections](docs/configuration.md#connections))",
    { usedBy: "serve" },
  ),
  MAX_CONNECTIONS_PER_CLIENT: variable(
    positiveInt(256, 1_000_000),
    "open connections from one client address; one more is answered 503 with `Retry-After` and closed; Node, Deno, Bun unless `BUN_SERVER=bun-serve` (behind a proxy every client has its address)",
    { usedBy: "serve" },
  ),
  HEADERS_TIMEOUT_SECONDS: variable(
    positiveInt(10, MAX_HEADERS_TIMEOUT_SECONDS),
    "seconds a request's headers may take to arrive, then 408 and closed; Node, Deno, Bun unless `BUN_SERVER=bun-serve` (then Bun closes such connections after its own ~10 s: [connections](docs/configuration.md#connections))",
    { usedBy: "serve" },
  ),
  BUN_SERVER: variable(
    z.enum(["node-http", "bun-serve"]).default("node-http"),
    "the HTTP server `serve` runs on Bun: `node-http` (Bun's Node-compatible HTTP module) holds the three connection limits above; `bun-serve` (Bun's own server) costs about 40 µs less CPU a request but holds none of them, for a server behind a proxy that bounds connections ([connections](docs/configuration.md#connections))",
    { usedBy: "serve" },
  ),
  MAX_BODY_BYTES_IN_FLIGHT: variable(
    positiveInt(64 * 1024 * 1024),
    "image-upload and `/pdf` body bytes read at once in one process; more wait in line, then 503 with `Retry-After` ([bodies in flight](docs/configuration.md#bodies-in-flight))",
    { usedBy: "image, pdf", defaultText: "`67108864` (64 MiB)" },
  ),
  BODY_WAIT_SECONDS: variable(
    positiveInt(10, MAX_BODY_WAIT_SECONDS),
    "seconds an upload or `/pdf` body waits in line for room under `MAX_BODY_BYTES_IN_FLIGHT` before its 503 with `Retry-After` ([bodies in flight](docs/configuration.md#bodies-in-flight))",
    { usedBy: "image, pdf" },
  ),
}).superRefine((e, ctx) => {
  // Per client above the total would never apply.
  if (e.MAX_CONNECTIONS_PER_CLIENT > e.MAX_CONNECTIONS) {
    variableProblem(ctx, ["MAX_CONNECTIONS_PER_CLIENT", "MAX_CONNECTIONS"], "the limit per client must not exceed the total");
  }
}, WHEN_VALID).transform(camelKeys);

/** What {@link ServerLimitsSection} parses. */
export type ServerLimitsConfig = z.output<typeof ServerLimitsSection>;
