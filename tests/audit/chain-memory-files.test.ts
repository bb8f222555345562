import { mkdtemp, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll } from "vitest";
import { createStorage } from "unstorage";
import { createBlobStore } from "../../src/core/storage/unstorage-stores.ts";
import { createFileBlobStore } from "../../src/adapters/server/files/file-ports.ts";
import { auditChainSuite } from "./chain-suite.ts";
import { headText } from "../helpers/head-file.ts";
import { encryptedBlobStore } from "../../src/core/encryption/encrypted-stores.ts";
import { Keyring } from "../../src/core/encryption/keyring.ts";
import { dataKey } from "../helpers/encryption.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

auditChainSuite("memory", () => ({ store: createBlobStore(createStorage()) }));

// Tampering edits the files under the data folder, as someone with the disk would.
const filesChain = (sync: boolean) => async () => {
  const dir = await mkdtemp(join(tmpdir(), sync ? "fa-chain-sync-" : "fa-chain-"));
  dirs.push(dir);
  const path = (key: string) => join(dir, ...key.split("/"));
  return {
    store: createFileBlobStore(dir, { sync, auditHeads: true }),
    raw: {
      // A head file is two slots (docs/storage.md#audit-heads-on-disk): tampering starts from its current JSON.
      read: async (key: string) => {
        const bytes = new Uint8Array(await readFile(path(key)));
        return key.startsWith("audit-heads/") ? new TextEncoder().encode(headText(bytes)) : bytes;
      },
      write: (key: string, bytes: Uint8Array) => writeFile(path(key), bytes),
      remove: (key: string) => unlink(path(key)),
    },
  };
};
auditChainSuite("files", filesChain(false));
// FSYNC=audit: day appends are flushed every few appends, and heads hold the entries not known flushed.
auditChainSuite("files, FSYNC=audit", filesChain(true));

// Encryption at rest sits below the chain: the chain is over plaintext entries, each entry is
// sealed on its own, and appends at a position pass through. Tampering here holds the key.
auditChainSuite("files, encrypted at rest", async () => {
  const dir = await mkdtemp(join(tmpdir(), "fa-chain-enc-"));
  dirs.push(dir);
  const keyring = new Keyring([dataKey("k1")]);
  const files = createFileBlobStore(dir, { sync: false, auditHeads: true });
  return {
    store: encryptedBlobStore(files, keyring, { appendLog: true }),
    sealed: {
      read: (key: string) => files.get(key),
      // A head goes into its slots as the store writes it.
      write: async (key: string, bytes: Uint8Array) => {
        await files.update(key, () => bytes);
      },
      remove: async (key: string) => {
        await files.delete(key);
      },
    },
  };
});
