/**
 * @module
 * The key-encryption keys of `DATA_ENCRYPTION_KEYS`: a JWK set of AES-256 keys (`kty: "oct"`,
 * a `kid` each). The first key wraps the data keys of new writes; every key unwraps, so
 * objects written before a rotation stay readable (docs/storage.md#encryption-at-rest).
 */
import * as z from "zod";
import { decodeBase64Url } from "../encoding/base64url.ts";
import { ServiceError } from "../errors.ts";
import { type CipherSuite, type KeyEncryptionKey, webCryptoSuite } from "./cipher-suite.ts";
import { OPENED_OBJECTS_BYTES, OpenedObjects } from "./opened-objects.ts";

/** One key-encryption key as a JWK. */
export interface DataKeyJwk {
  /** Always `oct` (a symmetric key). */
  kty: "oct";
  /** The key's id, stored in every envelope it wraps (1 to 64 printable ASCII characters). */
  kid: string;
  /** The 32 key bytes, base64url without padding (43 characters). */
  k: string;
}

const KeySchema = z.object({
  kty: z.literal("oct", { error: "kty must be \"oct\" (an AES key)" }),
  kid: z.string().regex(/^[\x21-\x7e]{1,64}$/, "kid must be 1 to 64 printable ASCII characters"),
  k: z.string().refine((k) => decodeBase64Url(k)?.length === 32, "k must be 32 bytes (AES-256), base64url without padding"),
  // Either names how the data keys are wrapped: A256GCMKW now, A256KW in version 1 envelopes.
  alg: z.enum(["A256GCMKW", "A256KW"], { error: "alg, when given, must be A256GCMKW or A256KW" }).optional(),
});

/** `{"keys": [...]}`: at least one key, ids unique; the first encrypts. */
export const DataKeySetSchema: z.ZodType<readonly DataKeyJwk[], unknown> = z.object({ keys: z.array(KeySchema).min(1, "the set holds no key") })
  .refine((set) => new Set(set.keys.map((key) => key.kid)).size === set.keys.length, "two keys share a kid")
  .transform((set): readonly DataKeyJwk[] => set.keys.map(({ kty, kid, k }) => ({ kty, kid, k })));

/** Options of a {@link Keyring}. */
export interface KeyringOptions {
  /**
   * Bytes of recently opened small objects (envelope and plaintext) kept in this process's
   * memory, so a read of an unchanged object skips its decryption; 0 keeps none. Default 4 MiB.
   */
  openedObjectsBytes?: number;
}

/** The key-encryption keys by id, and the cipher suite envelopes are sealed and opened with. */
export class Keyring {
  /** The id of the key new writes are wrapped with (the set's first). */
  readonly currentKid: string;
  /** AES-GCM and AES-KW (Web Crypto unless an adapter passes a faster suite with the same output). */
  readonly suite: CipherSuite;
  /** Small objects opened lately, with their plaintexts (used only for the very envelope they were opened from). */
  readonly opened: OpenedObjects;
  /**
   * The stores (by the name their canary was checked under) whose canary says `keys encrypt-all`
   * sealed everything they held: a plaintext object there was written by something other than
   * this service, and is refused instead of served.
   */
  readonly sealedStores: Set<string> = new Set();

  /** Whether the store named `store` refuses plaintext (see {@link Keyring.sealedStores}); never for an unnamed store. */
  refusesPlaintext(store: string | undefined): boolean {
    return store !== undefined && this.sealedStores.has(store);
  }
  readonly #keys: ReadonlyMap<string, KeyEncryptionKey>;

  /** Keeps the keys of a parsed set. */
  constructor(keys: readonly DataKeyJwk[], suite: CipherSuite = webCryptoSuite(), options: KeyringOptions = {}) {
    if (keys.length === 0) throw new Error("A keyring needs at least one key");
    this.currentKid = keys[0]!.kid;
    this.suite = suite;
    this.opened = new OpenedObjects(options.openedObjectsBytes ?? OPENED_OBJECTS_BYTES, suite.equal);
    this.#keys = new Map(keys.map((key) => [key.kid, { kid: key.kid, bytes: decodeBase64Url(key.k)! }]));
  }

  /** The key with this id; an integrity failure naming the object when the set lacks it. */
  kek(kid: string, objectKey: string): KeyEncryptionKey {
    const key = this.#keys.get(kid);
    if (key === undefined) {
      throw ServiceError.integrity(`Stored object ${objectKey} is encrypted under key "${kid}", which DATA_ENCRYPTION_KEYS does not hold`, { key: objectKey, kid });
    }
    return key;
  }
}
