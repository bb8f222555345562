/**
 * @module
 * The operator's routes (docs/operations.md): `GET /ready` without authentication, and
 * `GET /metrics` in the Prometheus text format behind `METRICS_TOKEN`.
 */
import * as z from "zod";
import { createRoute } from "../http/openapi-app.ts";
import { OPEN } from "../http/credentials-doc.ts";
import { tagged } from "../http/openapi-tags.ts";
import { answerJson, methodNotAllowed, type WorkerApp } from "../http/worker-app.ts";
import type { MetricsRegistry } from "../http/metrics.ts";
import { matchesAnyKey } from "../http/auth.ts";
import { ServiceError } from "../errors.ts";
import { checkReadiness, type Readiness, type ReadinessCheck } from "./readiness.ts";

const ReadinessSchema = z.object({ ready: z.boolean(), checks: z.record(z.string(), z.string()) });

const readyRoute = createRoute({
  method: "get",
  path: "/ready",
  summary: "Readiness: every configured store answers a read, the keys import",
  operationId: "ready",
  tags: tagged("service"),
  security: OPEN,
  responses: {
    200: { description: "Ready", content: { "application/json": { schema: ReadinessSchema } } },
    503: { description: "Not ready: the failing check named", content: { "application/json": { schema: ReadinessSchema } } },
  },
});

const metricsRoute = createRoute({
  method: "get",
  path: "/metrics",
  summary: "Metrics in the Prometheus text format (on when METRICS_TOKEN is set)",
  operationId: "metrics",
  tags: tagged("service"),
  security: [{ metricsToken: [] }],
  responses: {
    200: { description: "The metrics (text exposition format 0.0.4)", content: { "text/plain": { schema: z.string() } } },
  },
});

/** Mounts `/ready`, and `/metrics` when a token is configured. */
export function registerOperationsRoutes(app: WorkerApp, options: { readiness: Record<string, ReadinessCheck>; metrics: MetricsRegistry; metricsToken: string | undefined }): void {
  // Checks run at most once at a time: a flood of /ready shares one round of store reads.
  let running: Promise<Readiness> | undefined;
  app.openapi(readyRoute, async (c) => {
    running ??= checkReadiness(options.readiness).finally(() => {
      running = undefined;
    });
    const result = await running;
    return result.ready ? answerJson(c, result, 200) : answerJson(c, result, 503);
  });
  app.all("/ready", methodNotAllowed(["GET"], false));
  const token = options.metricsToken;
  if (token === undefined) return;
  app.openapi(metricsRoute, (c) => {
    const header = c.req.header("authorization");
    const given = header !== undefined && /^Bearer /i.test(header) ? header.slice(7).trim() : undefined;
    if (!matchesAnyKey(given, [token])) throw new ServiceError("unauthenticated", "GET /metrics needs Authorization: Bearer with METRICS_TOKEN", {});
    return c.text(options.metrics.text(), 200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8", "Cache-Control": "no-store" });
  });
  app.all("/metrics", methodNotAllowed(["GET"], false));
}
