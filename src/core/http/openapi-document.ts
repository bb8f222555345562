/**
 * @module
 * The OpenAPI document generators (zod-to-openapi's), apart from the routing app of
 * openapi-app.ts: a worker bundled alone for Cloudflare serves no document, so its bundle
 * carries none of them (about 6 KiB gzipped); the service and the package's entry load them.
 */
import { OpenApiGeneratorV3, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import { setDocumentGenerators } from "./openapi-app.ts";

/** Lets every worker app generate its OpenAPI document (`getOpenAPI31Document`, `doc31`, ...); calling it again changes nothing. */
export function loadOpenApiGenerators(): void {
  setDocumentGenerators({
    v3: (definitions, options) => new OpenApiGeneratorV3(definitions, options),
    v31: (definitions, options) => new OpenApiGeneratorV31(definitions, options),
  });
}
