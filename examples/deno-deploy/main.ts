// The whole service on Deno (Deno.serve). Deno Deploy has no writable disk: this example
// keeps the stores in memory, so data lasts as long as the isolate. Point STORAGE at a
// durable backend for real use (see the README's storage table).
// Run: cd examples/deno-deploy && deno task start
import { createMemoryPorts, createService, parseConfig } from "@forensic-annotation/service";

const app = createService(createMemoryPorts(), parseConfig(Deno.env.toObject()));
const port = Number(Deno.env.get("PORT") ?? 8000);

Deno.serve({ port, hostname: "127.0.0.1" }, (request, info) => app.fetch(request, { clientIp: info.remoteAddr.hostname }));
