import { conformance } from "./suite.ts";

conformance("node");
