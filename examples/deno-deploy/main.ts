// The whole service on Deno (Deno.serve) with every store in Deno KV: on Deno Deploy the
// platform's KV (durable, shared by every isolate), locally a file (KV_PATH) or memory.
// Run: cd examples/deno-deploy && deno task start
// (Behind a TLS-intercepting proxy, DENO_TLS_CA_STORE=system lets Deno fetch the npm packages.)
import { createService, parseConfig } from "@forensic-annotation/service";
import { denoKvPorts } from "@forensic-annotation/service/deno";

const kv = await Deno.openKv(Deno.env.get("KV_PATH"));
const app = createService(denoKvPorts(kv), parseConfig(Deno.env.toObject()));
const port = Number(Deno.env.get("PORT") ?? 8000);

Deno.serve({ port, hostname: "127.0.0.1" }, (request, info) => app.fetch(request, { clientIp: info.remoteAddr.hostname }));
