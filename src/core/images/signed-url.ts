/**
 * @module
 * Signed delivery URLs as Cloudflare Images documents them: `exp` (unix seconds) is added
 * to the query, then `sig` = hex HMAC-SHA256 with the signing key over
 * `pathname + "?" + query`. The local host verifies what it signed the same way.
 */
import { secretsEqual } from "../encoding/secrets-equal.ts";
import { bytesToHex } from "../encoding/hex.ts";

const encoder = new TextEncoder();

// A service signs with one key (HMAC_KEY): imported once, not on every signature and check.
const MAX_KEPT_KEYS = 8;
const importedKeys = new Map<string, Promise<CryptoKey>>();

function hmacKey(key: string): Promise<CryptoKey> {
  let imported = importedKeys.get(key);
  if (imported === undefined) {
    imported = crypto.subtle.importKey("raw", encoder.encode(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    if (importedKeys.size >= MAX_KEPT_KEYS) importedKeys.clear();
    importedKeys.set(key, imported);
    // A key that failed to import is not kept: the next call tries again.
    imported.catch(() => importedKeys.delete(key));
  }
  return imported;
}

async function hmacHex(key: string, message: string): Promise<string> {
  return bytesToHex(await crypto.subtle.sign("HMAC", await hmacKey(key), encoder.encode(message)));
}

/** Adds `exp` and `sig` to a delivery URL. */
export async function signDeliveryUrl(url: URL, key: string, expiresAtSeconds: number): Promise<string> {
  const signed = new URL(url.href);
  signed.searchParams.delete("sig");
  signed.searchParams.set("exp", String(expiresAtSeconds));
  const sig = await hmacHex(key, `${signed.pathname}?${signed.searchParams.toString()}`);
  signed.searchParams.set("sig", sig);
  return signed.href;
}

/** Why a signed URL was refused, or null when it is valid now. */
export async function checkSignedUrl(url: URL, key: string, nowSeconds: number): Promise<string | null> {
  const sig = url.searchParams.get("sig");
  const exp = url.searchParams.get("exp");
  if (sig === null || exp === null) return "missing signature";
  if (!/^\d{1,12}$/.test(exp)) return "malformed expiry";
  const unsigned = new URL(url.href);
  unsigned.searchParams.delete("sig");
  const expected = await hmacHex(key, `${unsigned.pathname}?${unsigned.searchParams.toString()}`);
  if (!secretsEqual(sig.toLowerCase(), expected)) return "bad signature";
  if (Number(exp) < nowSeconds) return "expired";
  return null;
}
