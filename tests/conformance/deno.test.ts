import { conformance } from "./suite.ts";

conformance("deno");
