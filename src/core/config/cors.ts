/**
 * @module
 * The one origin browsers may call from.
 */
import * as z from "zod";
import { camelKeys, text, variable, variableProblem, WHEN_VALID } from "./variables.ts";

/** The CORS variable. */
export const CorsSection = z.object({
  ALLOWED_ORIGIN: variable(text(), "the one origin browsers may call from ([CORS](docs/api.md#cors))", {
    usedBy: "all",
    defaultText: "unset (no origin allowed)",
    typeText: "origin",
  }),
}).superRefine((e, ctx) => {
  // A typo here would refuse every browser silently; an origin has a scheme and a host only.
  if (e.ALLOWED_ORIGIN !== undefined && !isOrigin(e.ALLOWED_ORIGIN)) {
    variableProblem(ctx, ["ALLOWED_ORIGIN"], "must be an origin such as https://lab.example (scheme, host and optional port, nothing after)");
  }
}, WHEN_VALID).transform(camelKeys);

function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return /^https?:$/.test(url.protocol) && url.origin === value.replace(/\/$/, "");
  } catch {
    return false;
  }
}

/** What {@link CorsSection} parses. */
export type CorsConfig = z.output<typeof CorsSection>;
