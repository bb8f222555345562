/**
 * @module
 * Encryption at rest: the key-encryption keys every store's objects are sealed under.
 */
import * as z from "zod";
import { camelKeys, variable } from "./variables.ts";
import { type DataKeyJwk, DataKeySetSchema } from "../encryption/keyring.ts";

/** `DATA_ENCRYPTION_KEYS` as JSON text, read into its keys. */
const keySet = z.string().optional().transform((value, ctx): readonly DataKeyJwk[] | undefined => {
  if (value === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    ctx.addIssue({ code: "custom", message: "must be a JWK set as JSON: {\"keys\": [{\"kty\": \"oct\", \"kid\": \"...\", \"k\": \"<32 bytes base64url>\"}]}" });
    return z.NEVER;
  }
  const parsed = DataKeySetSchema.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = first !== undefined && first.path.length > 0 ? ` (at ${first.path.join(".")})` : "";
    ctx.addIssue({ code: "custom", message: `not a usable key set${where}: ${first?.message ?? "invalid"}` });
    return z.NEVER;
  }
  return parsed.data;
});

/** The encryption variables. */
export const EncryptionSection = z.object({
  DATA_ENCRYPTION_KEYS: variable(
    keySet,
    "a JWK set of AES-256 keys (`kty: \"oct\"`, a `kid` each): every object of every store is encrypted at rest with its own data key, wrapped by the first key; every key decrypts ([encryption at rest](docs/storage.md#encryption-at-rest)); never returned by the keys worker",
    { usedBy: "serve, all workers, keys commands", defaultText: "unset (stored as plaintext)", typeText: "JSON (secret)" },
  ),
}).transform(camelKeys);

/** What {@link EncryptionSection} parses. */
export type EncryptionConfig = z.output<typeof EncryptionSection>;
