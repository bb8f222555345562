// The Deno ceiling: Deno.serve answering each scenario's body, reading the request body first.
import { loadBodies, scenarioOf } from "./bodies.mjs";

const bodies = loadBodies(Deno.readTextFileSync(Deno.env.get("BENCH_BODIES")));
Deno.serve({
  port: 0,
  hostname: "127.0.0.1",
  onListen: ({ port }) => console.log(`ready http://127.0.0.1:${port}`),
}, async (request) => {
  if (request.body !== null) await request.arrayBuffer();
  const body = bodies[scenarioOf(new URL(request.url).pathname)] ?? bodies.default;
  return new Response(body.bytes, { headers: { "content-type": body.type } });
});
