// serve on Bun with a connection limit set runs Bun's node:http server (src/adapters/bun/serve.ts): the whole conformance suite again there.
import { conformance } from "./suite.ts";

conformance("bun", { name: "bun, node:http", env: { MAX_CONNECTIONS_PER_CLIENT: "256" } });
