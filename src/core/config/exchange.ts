/**
 * @module
 * Signatures of case packages, read by the `export` and `import` commands.
 */
import * as z from "zod";
import { camelKeys, jwkJsonVariables, text, variable, WHEN_VALID } from "./variables.ts";

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
}).superRefine(jwkJsonVariables("EXPORT_SIGNING_KEY", "EXPORT_VERIFY_KEYS"), WHEN_VALID).transform(camelKeys);

/** What {@link ExchangeSection} parses. */
export type ExchangeConfig = z.output<typeof ExchangeSection>;
