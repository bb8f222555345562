/**
 * @module
 * The one origin browsers may call from.
 */
import * as z from "zod";
import { camelKeys, text, variable } from "./variables.ts";

/** The CORS variable. */
export const CorsSection = z.object({
  ALLOWED_ORIGIN: variable(text(), "the one origin browsers may call from ([CORS](docs/api.md#cors))", {
    usedBy: "all",
    defaultText: "unset (no origin allowed)",
    typeText: "origin",
  }),
}).transform(camelKeys);

/** What {@link CorsSection} parses. */
export type CorsConfig = z.output<typeof CorsSection>;
