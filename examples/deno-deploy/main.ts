// The whole service on Deno (Deno.serve) with every store in Deno KV: on Deno Deploy the
// platform's KV (durable, shared by every isolate), locally a file (KV_PATH) or memory.
// Run from a clone after `npm ci`: cd examples/deno-deploy && npx deno task start
// (Deno comes from node_modules; with Deno installed, `deno task start`.)
// Keys come from the environment (on Deno Deploy, the project's environment variables):
// R2_KEY_SECRET, USER_DB_AUTH, KEYS_AUTH, IMAGES_API_TOKEN, HMAC_KEY, ACCOUNT_HASH. Unlike
// `serve`, nothing is generated here: each unset key is named in one line at start, and the
// worker it guards answers 403 (401 for users) saying "this server has no … configured".
// (Behind a TLS-intercepting proxy, DENO_TLS_CA_STORE=system lets Deno fetch the npm packages.)
import { createService, parseConfig } from "@forensic-annotation/service";
import { answerUnreadableUrl, denoKvPorts, withDotSegmentsResolved } from "@forensic-annotation/service/deno";

const kv = await Deno.openKv(Deno.env.get("KV_PATH"));
const app = createService(denoKvPorts(kv), parseConfig(Deno.env.toObject()));
const port = Number(Deno.env.get("PORT") ?? 8000);

// Deno hands the URL over as sent: one that does not parse (a bad Host) is a 400, and
// `/data/u1/%2e%2e/u2/...` is resolved, as Node, Bun and Cloudflare do.
Deno.serve({ port, hostname: "127.0.0.1" }, (request, info) =>
  answerUnreadableUrl(request) ?? app.fetch(withDotSegmentsResolved(request), { clientIp: info.remoteAddr.hostname }));
