import { type Agent, request as httpRequest } from "node:http";
import type { GeneratedRequest } from "./request-arbitraries.ts";

/**
 * Sends a request over node:http with its path exactly as written (fetch would normalise
 * `..` and percent-encodings); answers the status and the body as text.
 */
export function sendRaw(baseUrl: string, request: GeneratedRequest, agent?: Agent): Promise<{ status: number; body: string }> {
  const target = new URL(baseUrl);
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: request.method,
        path: request.path,
        ...(agent ? { agent } : {}),
        headers: { ...request.headers, ...(body ? { "Content-Length": String(body.length) } : {}) },
        timeout: 15_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within 15 s: ${request.method} ${request.path}`)));
    req.on("error", reject);
    req.end(body);
  });
}
