/**
 * @module
 * Encryption at rest (docs/storage.md#encryption-at-rest): envelope encryption of every stored
 * object under `DATA_ENCRYPTION_KEYS`, as wrappers of any store.
 */
export { type DataKeyJwk, DataKeySetSchema, Keyring, type KeyringOptions } from "./keyring.ts";
export { OPENED_OBJECTS_BYTES, OpenedObjects } from "./opened-objects.ts";
export { BLOB_CANARY_KEY, type EncryptedBlobStore, encryptedBlobStore, encryptedKvStore, KV_CANARY_KEY, type StoreName } from "./encrypted-stores.ts";
export { type CanaryOptions, CanaryError, checkBlobCanary, checkKvCanary } from "./canary.ts";
export { isSealed, openRecord, openValue, rewrapRecord, rewrapValue, type SealOptions, sealRecord, sealValue, SEALED_RECORD_PREFIX } from "./stored-value.ts";
export { encryptAll, type MaintainedStores, type MaintenanceProgress, rotateKeys } from "./maintenance.ts";
export { type CipherSuite, GCM_WRAPPED_BYTES, type KeyEncryptionKey, type KeyWrap, webCryptoSuite } from "./cipher-suite.ts";
