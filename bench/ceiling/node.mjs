// The Node ceiling: node:http answering each scenario's body, reading the request body first.
import http from "node:http";
import { readFileSync } from "node:fs";
import { loadBodies, scenarioOf } from "./bodies.mjs";

const bodies = loadBodies(readFileSync(process.env.BENCH_BODIES, "utf8"));
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    const body = bodies[scenarioOf(req.url)] ?? bodies.default;
    res.writeHead(200, { "content-type": body.type, "content-length": body.bytes.byteLength });
    res.end(body.bytes);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => console.log(`ready http://127.0.0.1:${server.address().port}`));
process.on("SIGTERM", () => process.exit(0));
