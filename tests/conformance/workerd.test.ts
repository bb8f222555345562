import { conformance } from "./suite.ts";

conformance("workerd");
