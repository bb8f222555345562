/**
 * @module
 * `GET /ready` (docs/operations.md#readiness): every configured store answers a read, the audit,
 * export and exchange decryption keys import, and whatever the adapter adds (the file store's lock). Each check
 * names what failed in words that hold nothing secret.
 */
import type { BlobStore, KvStore } from "../ports.ts";
import type { ServiceConfig } from "../config/mod.ts";
import { checkAuditKeys } from "../audit/signing-keys.ts";
import { importJWK } from "jose";
import { algorithmOf } from "../exchange/package/signature.ts";
import { openingKeyOf } from "../exchange/sealed/sealing-keys.ts";
import { jwkListOf } from "../config/variables.ts";

/** One check: resolves when ready, rejects (its message shown) when not. */
export type ReadinessCheck = () => Promise<void>;

/** What `/ready` answers. */
export interface Readiness {
  ready: boolean;
  /** `"ok"` or what failed, by check. */
  checks: Record<string, string>;
}

/** A failure whose message `/ready` may show as it is. */
export class NotReady extends Error {}

/** How long a store may take to answer a read before it counts as down. */
const STORE_TIMEOUT_MS = 2_000;

/** A read of a key no one writes: any answer, found or not, proves the store serves. */
const PROBE = "ready-probe";

/** The checks of the service's own ports and keys. */
export function serviceReadiness(
  stores: Record<string, BlobStore | KvStore | undefined>,
  config: Pick<ServiceConfig, "auditSigningKey" | "auditVerifyKeys" | "exportSigningKey" | "exchangeDecryptionKey">,
): Record<string, ReadinessCheck> {
  const checks: Record<string, ReadinessCheck> = {};
  for (const [name, store] of Object.entries(stores)) {
    if (store === undefined) continue;
    checks[name] = async () => {
      await ("has" in store ? store.has(PROBE) : store.get(PROBE));
    };
  }
  // Keys do not change while the process runs: imported once.
  let keys: Promise<void> | undefined;
  checks.keys = () => (keys ??= importKeys(config));
  return checks;
}

async function importKeys(config: Pick<ServiceConfig, "auditSigningKey" | "auditVerifyKeys" | "exportSigningKey" | "exchangeDecryptionKey">): Promise<void> {
  try {
    await checkAuditKeys(config);
  } catch {
    throw new NotReady("AUDIT_SIGNING_KEY or AUDIT_VERIFY_KEYS does not import");
  }
  if (config.exportSigningKey !== undefined) {
    try {
      const jwk = JSON.parse(config.exportSigningKey) as JsonWebKey;
      await importJWK(jwk, algorithmOf(jwk));
    } catch {
      throw new NotReady("EXPORT_SIGNING_KEY does not import");
    }
  }
  if (config.exchangeDecryptionKey === undefined) return;
  try {
    await openingKeyOf(jwkListOf(config.exchangeDecryptionKey)?.[0]);
  } catch {
    throw new NotReady("EXCHANGE_DECRYPTION_KEY does not import as an EC P-256 or RSA (2048 to 8192 bits) private key");
  }
}

/** Runs every check at once, each bounded in time. */
export async function checkReadiness(checks: Record<string, ReadinessCheck>): Promise<Readiness> {
  const results = await Promise.all(Object.entries(checks).map(async ([name, check]) => [name, await outcome(name, check)] as const));
  return { ready: results.every(([, result]) => result === "ok"), checks: Object.fromEntries(results) };
}

async function outcome(name: string, check: ReadinessCheck): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${STORE_TIMEOUT_MS / 1000} s`), STORE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([check().then(() => "ok"), timeout]);
  } catch (err) {
    // A driver's message can name hosts or carry credentials: only our own are shown.
    return err instanceof NotReady ? err.message : `the ${name} store is not answering`;
  } finally {
    clearTimeout(timer);
  }
}
