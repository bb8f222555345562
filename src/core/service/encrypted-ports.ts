/**
 * @module
 * Encryption at rest for a whole set of ports (docs/storage.md#encryption-at-rest): the data,
 * audit, image and user stores wrapped so they hold only envelopes, after each store's canary
 * showed that `DATA_ENCRYPTION_KEYS` opens what it already holds. The mail outbox is left as
 * it is: it is read by whoever relays the mail.
 */
import type { ServiceConfig } from "../config/mod.ts";
import { type CanaryOptions, checkBlobCanary, checkKvCanary, type CipherSuite, encryptedBlobStore, encryptedKvStore, Keyring, type MaintainedStores } from "../encryption/mod.ts";
import type { ServicePorts } from "./service.ts";

/** The keyring of `DATA_ENCRYPTION_KEYS` (Web Crypto unless `suite` is given), or undefined when encryption at rest is off. */
export function keyringOf(config: Pick<ServiceConfig, "dataEncryptionKeys">, suite?: CipherSuite): Keyring | undefined {
  return config.dataEncryptionKeys === undefined ? undefined : new Keyring(config.dataEncryptionKeys, suite);
}

/** The ports with their stores encrypted under `keyring`, or as they are without one (no check). */
export function encryptPorts(ports: ServicePorts, keyring: Keyring | undefined): ServicePorts {
  if (keyring === undefined) return ports;
  return {
    ...ports,
    // Named as checkCanaries names them: a store whose canary says every object is sealed refuses plaintext.
    data: encryptedBlobStore(ports.data, keyring, { store: "data" }),
    audit: encryptedBlobStore(ports.audit, keyring, { appendLog: true, store: "audit" }),
    images: encryptedBlobStore(ports.images, keyring, { store: "image" }),
    users: encryptedKvStore(ports.users, keyring, { store: "user" }),
  };
}

/**
 * Checks every store's canary against `keyring` (writing it on a first encrypted start; with
 * no keyring, refusing stores that hold encrypted objects). Throws a `CanaryError` naming the
 * store and the reason.
 */
export async function checkCanaries(ports: ServicePorts, keyring: Keyring | undefined, options: CanaryOptions = {}): Promise<void> {
  await checkBlobCanary(ports.data, keyring, "data", options);
  await checkBlobCanary(ports.audit, keyring, "audit", options);
  await checkBlobCanary(ports.images, keyring, "image", options);
  await checkKvCanary(ports.users, keyring, "user", options);
}

/** The stores of `ports` that encryption at rest covers, for the `keys` commands. */
export function encryptedStoresOf(ports: ServicePorts): MaintainedStores {
  return {
    blobs: [
      { name: "data", store: ports.data },
      { name: "audit", store: ports.audit, appendLog: true },
      { name: "image", store: ports.images },
    ],
    kvs: [{ name: "user", store: ports.users }],
  };
}
