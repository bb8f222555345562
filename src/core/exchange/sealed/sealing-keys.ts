/**
 * @module
 * The keys of sealed packages: a recipient's public JWK (EC P-256 for ECDH-ES+A256KW, RSA of
 * at least 2048 bits for RSA-OAEP-256) and the private key that opens what was sealed for it
 * (`EXCHANGE_DECRYPTION_KEY`). A key is known by its RFC 7638 SHA-256 thumbprint. Only the
 * members of the public key are ever copied out of a JWK, so no private member can leak.
 */
import { base64url, calculateJwkThumbprint, importJWK, type JWK } from "jose";
import { ServiceError } from "../../errors.ts";
import type { ExchangeJwk } from "../package/signature.ts";

/** The JWE key management algorithms of sealed packages. */
export type SealingAlgorithm = "ECDH-ES+A256KW" | "RSA-OAEP-256";

/** A public key packages are sealed for. */
export interface RecipientKey {
  /** The public JWK, its public members only (`kty`, `crv`, `x`, `y` or `kty`, `n`, `e`). */
  readonly jwk: ExchangeJwk;
  /** How the content key is wrapped for it. */
  readonly algorithm: SealingAlgorithm;
  /** Its RFC 7638 SHA-256 thumbprint (base64url). */
  readonly thumbprint: string;
}

/** A private key that opens packages sealed for its public half. */
export interface OpeningKey extends RecipientKey {
  /** The private key, imported for {@link RecipientKey.algorithm}. */
  readonly privateKey: CryptoKey | Uint8Array;
}

const MIN_RSA_BITS = 2048;
/** RSA moduli above this are refused: a hostile recipient cannot make each seal slow. */
const MAX_RSA_BITS = 8192;

/** The public members of an EC or RSA JWK, or why it cannot seal (undefined members are left out). */
function publicMembers(value: unknown, role: "recipient" | "decryption"): { jwk: ExchangeJwk; algorithm: SealingAlgorithm } | string {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return "must be a JWK (a JSON object)";
  const key = value as Record<string, unknown>;
  if (role === "recipient" && key.d !== undefined) return "must be a public key; it has a private member \"d\"";
  if (role === "decryption" && typeof key.d !== "string") return "must be a private key (it has no \"d\")";
  if (key.use !== undefined && key.use !== "enc") return `has "use": ${JSON.stringify(key.use)}; a sealing key is for "enc"`;
  let result: { jwk: ExchangeJwk; algorithm: SealingAlgorithm };
  if (key.kty === "EC") {
    if (key.crv !== "P-256") return `an EC key must be on P-256 (it is on ${JSON.stringify(key.crv)})`;
    if (byteLength(key.x) !== 32 || byteLength(key.y) !== 32) return "an EC P-256 key needs \"x\" and \"y\" of 32 bytes each (base64url)";
    // Checked here, not left to the runtime: Deno's Web Crypto imports a point that is off the curve.
    if (!onCurve(key.x as string, key.y as string)) return "is not a point on P-256";
    result = { jwk: { kty: "EC", crv: "P-256", x: key.x as string, y: key.y as string }, algorithm: "ECDH-ES+A256KW" };
  } else if (key.kty === "RSA") {
    const modulus = byteLength(key.n);
    const exponent = byteLength(key.e);
    if (modulus === undefined || exponent === undefined || exponent > 8) return "an RSA key needs \"n\" and \"e\" (base64url)";
    const bits = modulusBits(key.n as string);
    if (bits < MIN_RSA_BITS || bits > MAX_RSA_BITS) return `an RSA key must have ${MIN_RSA_BITS} to ${MAX_RSA_BITS} bits (it has ${bits})`;
    result = { jwk: { kty: "RSA", n: key.n as string, e: key.e as string }, algorithm: "RSA-OAEP-256" };
  } else {
    return `must be an EC P-256 or RSA key (its "kty" is ${JSON.stringify(key.kty)})`;
  }
  // "alg" is not checked: runtimes export it differently (Deno writes "ECDH"); the key type decides.
  return result;
}

const P256_P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
const P256_B = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn;

/** Whether (x, y) satisfies y² = x³ − 3x + b over P-256's field. */
function onCurve(x: string, y: string): boolean {
  const big = (value: string): bigint => BigInt(`0x${Array.from(base64url.decode(value), (byte) => byte.toString(16).padStart(2, "0")).join("")}`);
  const px = big(x);
  const py = big(y);
  if (px >= P256_P || py >= P256_P) return false;
  const mod = (value: bigint): bigint => ((value % P256_P) + P256_P) % P256_P;
  return mod(py * py) === mod(px * px * px - 3n * px + P256_B);
}

function byteLength(value: unknown): number | undefined {
  if (typeof value !== "string" || !/^[A-Za-z0-9_-]+$/.test(value)) return undefined;
  try {
    return base64url.decode(value).length;
  } catch {
    return undefined;
  }
}

function modulusBits(n: string): number {
  const bytes = base64url.decode(n);
  let at = 0;
  while (at < bytes.length && bytes[at] === 0) at++;
  if (at === bytes.length) return 0;
  return (bytes.length - at - 1) * 8 + (32 - Math.clz32(bytes[at]!));
}

/**
 * The recipient a package is sealed for, from a public JWK sent by a caller.
 *
 * @throws {ServiceError} 400 naming what is wrong with the key.
 */
export async function recipientKeyOf(value: unknown): Promise<RecipientKey> {
  const members = publicMembers(value, "recipient");
  if (typeof members === "string") throw ServiceError.validation(`The recipient key ${members}`, { field: "recipient" });
  try {
    // Importing checks that the point is on the curve, so a bad key is refused before sealing.
    await importJWK(members.jwk as JWK, members.algorithm);
  } catch {
    throw ServiceError.validation("The recipient key does not import as a public key", { field: "recipient" });
  }
  return { ...members, thumbprint: await calculateJwkThumbprint(members.jwk as JWK) };
}

/**
 * The key that opens packages sealed for its public half, from a private JWK
 * (`EXCHANGE_DECRYPTION_KEY`).
 *
 * @throws {Error} when the JWK is not a private EC P-256 or RSA key that imports.
 */
export async function openingKeyOf(value: unknown): Promise<OpeningKey> {
  const members = publicMembers(value, "decryption");
  if (typeof members === "string") throw new Error(`EXCHANGE_DECRYPTION_KEY ${members}`);
  const source = value as Record<string, unknown>;
  const { alg: _alg, use: _use, key_ops: _ops, ext: _ext, kid: _kid, ...material } = source;
  const privateKey = await importJWK(material as JWK, members.algorithm);
  return { ...members, privateKey, thumbprint: await calculateJwkThumbprint(members.jwk as JWK) };
}
