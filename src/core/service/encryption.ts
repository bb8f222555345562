/**
 * @module
 * Encryption at rest for an embedder's own stores (docs/storage.md#encryption-at-rest): what
 * `serve` and the Cloudflare workers do with `DATA_ENCRYPTION_KEYS`, for ports built by hand.
 * `createService` alone never encrypts: wrap the ports first, after their canaries.
 *
 * ```ts
 * import { createMemoryPorts, createService, parseConfig } from "@forensic-annotation/service";
 * import { checkCanaries, encryptPorts, keyringOf } from "@forensic-annotation/service/encryption";
 * const config = parseConfig(env); // env.DATA_ENCRYPTION_KEYS: a JWK set, the first key encrypts
 * const raw = createMemoryPorts();
 * const keyring = keyringOf(config);
 * await checkCanaries(raw, keyring); // a wrong or missing key throws a CanaryError with the reason
 * const app = createService(encryptPorts(raw, keyring), config);
 * ```
 */
export { checkCanaries, encryptedStoresOf, encryptPorts, keyringOf } from "./encrypted-ports.ts";
export {
  CanaryError,
  type CanaryOptions,
  type CipherSuite,
  type DataKeyJwk,
  type EncryptedBlobStore,
  encryptAll,
  encryptedBlobStore,
  encryptedKvStore,
  type KeyEncryptionKey,
  Keyring,
  type KeyWrap,
  type KeyringOptions,
  type MaintainedStores,
  type MaintenanceProgress,
  OpenedObjects,
  rotateKeys,
  type SealOptions,
  type StoreName,
  webCryptoSuite,
} from "../encryption/mod.ts";
