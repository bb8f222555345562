/**
 * @module
 * Signatures of case packages, read by the `export` and `import` commands.
 */
import * as z from "zod";
import { camelKeys, text, variable, variableProblem, WHEN_VALID } from "./variables.ts";

/** The exchange variables. */
export const ExchangeSection = z.object({
  EXPORT_SIGNING_KEY: variable(
    text(),
    "a private JWK as JSON that signs export manifests ([signatures](docs/exchange.md#signatures)); never returned by the keys worker",
    { usedBy: "export", defaultText: "unset (unsigned)", typeText: "JSON" },
  ),
  EXPORT_VERIFY_KEYS: variable(
    text(),
    "a JWK, an array of JWKs or a JWKS (each key needs `kty`) whose signatures imports accept, besides the signing key's public half",
    { usedBy: "import", typeText: "JSON" },
  ),
  EXPORT_REQUIRE_SIGNATURE: variable(
    z.string().optional().transform((value) => /^(1|true|yes)$/i.test(value ?? "")),
    "`1`, `true` or `yes` (any case): unsigned packages, or packages with an invalid signature, are refused",
    { usedBy: "import", typeText: "flag" },
  ),
}).superRefine((e, ctx) => {
  for (const name of ["EXPORT_SIGNING_KEY", "EXPORT_VERIFY_KEYS"] as const) {
    const value = e[name];
    if (value !== undefined && !isJsonObjectOrArray(value)) variableProblem(ctx, [name], "must be JSON: a JWK object (or for EXPORT_VERIFY_KEYS an array of JWKs or a JWKS)");
  }
}, WHEN_VALID).transform(camelKeys);

function isJsonObjectOrArray(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object";
  } catch {
    return false;
  }
}

/** What {@link ExchangeSection} parses. */
export type ExchangeConfig = z.output<typeof ExchangeSection>;
