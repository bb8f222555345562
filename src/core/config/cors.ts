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
  if (e.ALLOWED_ORIGIN !== undefined && originOf(e.ALLOWED_ORIGIN) === undefined) {
    variableProblem(ctx, ["ALLOWED_ORIGIN"], "must be an origin such as https://lab.example (scheme, host and optional port, nothing after)");
  }
}, WHEN_VALID).transform((e) => camelKeys({ ...e, ALLOWED_ORIGIN: e.ALLOWED_ORIGIN === undefined ? undefined : originOf(e.ALLOWED_ORIGIN) }));

/**
 * The origin a browser sends for `value` (`https://Lab.example:443/` is `https://lab.example`),
 * which CORS compares byte for byte; undefined when `value` holds more than an origin.
 */
function originOf(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  const onlyOrigin = /^https?:$/.test(url.protocol) && url.username === "" && url.password === "" && url.pathname === "/" && !/[?#]/.test(value);
  return onlyOrigin ? url.origin : undefined;
}

/** What {@link CorsSection} parses. */
export type CorsConfig = z.output<typeof CorsSection>;
