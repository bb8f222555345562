/**
 * @module
 * Signed audit heads (docs/storage.md#audit-chain): the key that signs them and the keys that verify them.
 */
import * as z from "zod";
import { camelKeys, jwkVariables, text, variable, WHEN_VALID } from "./variables.ts";

/** The audit variables. */
export const AuditSection = z.object({
  AUDIT_SIGNING_KEY: variable(
    text(),
    "a private JWK as JSON that signs every audit head ([audit chain](docs/storage.md#audit-chain)); while set, an unsigned head verifies as `signature missing` (trails begun before it: `audit sign-heads`); never returned by the keys worker",
    { usedBy: "data, audit", defaultText: "unset (heads unsigned)", typeText: "JSON" },
  ),
  AUDIT_VERIFY_KEYS: variable(
    text(),
    "a JWK, an array of JWKs or a JWKS (each key needs `kty`) that verify audit heads signed earlier, besides the signing key's public half",
    { usedBy: "data, audit", typeText: "JSON" },
  ),
}).superRefine(jwkVariables("AUDIT_SIGNING_KEY", "AUDIT_VERIFY_KEYS", { symmetric: false }), WHEN_VALID).transform(camelKeys);

/** What {@link AuditSection} parses. */
export type AuditConfig = z.output<typeof AuditSection>;
