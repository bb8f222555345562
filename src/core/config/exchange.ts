/**
 * @module
 * Signatures of case packages, read by the `export` and `import` commands and the exchange
 * worker, and the largest package the exchange worker takes.
 */
import * as z from "zod";
import { camelKeys, jwkVariables, positiveInt, text, variable, WHEN_VALID } from "./variables.ts";

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
    z.string().optional().transform((value, ctx): boolean => {
      const flag = value?.trim().toLowerCase();
      if (flag === undefined || flag === "0" || flag === "false" || flag === "no") return false;
      if (flag === "1" || flag === "true" || flag === "yes") return true;
      // A security switch: a value it cannot read is refused, never taken as off.
      ctx.addIssue({ code: "custom", message: "must be 1, true or yes (or 0, false or no)" });
      return z.NEVER;
    }),
    "`1`, `true` or `yes` (any case): unsigned packages, or packages with an invalid signature, are refused; `0`, `false` or `no`: they are imported",
    { usedBy: "import", typeText: "flag" },
  ),
  MAX_IMPORT_BYTES: variable(
    // A case package is never ZIP64: at most 4 GiB - 1.
    positiveInt(1024 * 1024 * 1024, 0xffff_ffff),
    "largest case package `POST /exchange/{uid}/imports` takes, in bytes (413 beyond, refused before it is read whole; at most 4294967295)",
    { usedBy: "exchange", defaultText: "`1073741824` (1 GiB)" },
  ),
}).superRefine(jwkVariables("EXPORT_SIGNING_KEY", "EXPORT_VERIFY_KEYS", { symmetric: true }), WHEN_VALID).transform(camelKeys);

/** What {@link ExchangeSection} parses. */
export type ExchangeConfig = z.output<typeof ExchangeSection>;
