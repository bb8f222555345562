/**
 * @module
 * Whether the service serves its API reference page.
 */
import * as z from "zod";
import { camelKeys, variable } from "./variables.ts";

/** The API docs variable. */
export const ApiDocsSection = z.object({
  API_DOCS: variable(
    z.enum(["on", "off"]).default("on"),
    "`on` serves the API reference page (Swagger UI over `/openapi.json`) at `/docs`, its assets from the service itself; `off` leaves `/docs` out ([docs page](docs/api.md#api-reference-page))",
    { usedBy: "service" },
  ),
}).transform(camelKeys);

/** What {@link ApiDocsSection} parses. */
export type ApiDocsConfig = z.output<typeof ApiDocsSection>;
