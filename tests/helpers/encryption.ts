import { encodeBase64Url } from "../../src/core/encoding/base64url.ts";
import type { DataKeyJwk } from "../../src/core/encryption/keyring.ts";

/** A fresh AES-256 key-encryption key as a JWK. */
export function dataKey(kid: string): DataKeyJwk {
  return { kty: "oct", kid, k: encodeBase64Url(crypto.getRandomValues(new Uint8Array(32))) };
}

/** `DATA_ENCRYPTION_KEYS` for these keys, the first encrypting. */
export const keySetText = (...keys: DataKeyJwk[]): string => JSON.stringify({ keys });

/** Whether `haystack` holds the bytes of `needle` anywhere. */
export function containsBytes(haystack: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}
