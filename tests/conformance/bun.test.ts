import { conformance } from "./suite.ts";

conformance("bun");
