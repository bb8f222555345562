// The Bun ceiling: Bun.serve answering each scenario's body, reading the request body first.
import { readFileSync } from "node:fs";
import { loadBodies, scenarioOf } from "./bodies.mjs";

const bodies = loadBodies(readFileSync(process.env.BENCH_BODIES, "utf8"));
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    if (request.body !== null) await request.arrayBuffer();
    const body = bodies[scenarioOf(new URL(request.url).pathname)] ?? bodies.default;
    return new Response(body.bytes, { headers: { "content-type": body.type } });
  },
});
console.log(`ready http://127.0.0.1:${server.port}`);
