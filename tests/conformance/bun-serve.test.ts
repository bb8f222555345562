// serve on Bun with BUN_SERVER=bun-serve runs Bun.serve, not its default node:http
// (src/adapters/bun/serve.ts): the whole conformance suite again there.
import { conformance } from "./suite.ts";

conformance("bun", { name: "bun, Bun.serve", env: { BUN_SERVER: "bun-serve" } });
