/**
 * `keys encrypt-all` and `keys rotate` rewrite user records beside a running `serve` on Redis,
 * S3 or Deno KV. They checked the record, then put: a record `serve` wrote between the two
 * was overwritten with the old one sealed. With a compare-and-set the record written
 * meanwhile is read again and sealed, so nothing `serve` wrote is lost.
 */
import { describe, expect, it } from "vitest";
import { createStorage } from "unstorage";
import { createKvStore } from "../../../src/core/storage/unstorage-stores.ts";
import { encryptAll, openRecord, SEALED_RECORD_PREFIX } from "../../../src/core/encryption/mod.ts";
import { keyringOf } from "../../../src/core/service/encryption.ts";
import { parseConfig } from "../../../src/core/config/mod.ts";
import { dataKey, keySetText } from "../../helpers/encryption.ts";
import { KEYS } from "../../helpers/service.ts";
import { writeBeforeFirstCompareAndSet } from "../../helpers/interfering-kv.ts";

describe("encrypt-all on user records", () => {
  it("a record serve writes between the command's read and its write is sealed as serve wrote it, not overwritten", async () => {
    const keyring = keyringOf(parseConfig({ ...KEYS, DATA_ENCRYPTION_KEYS: keySetText(dataKey("k1")) }));
    if (keyring === undefined) throw new Error("DATA_ENCRYPTION_KEYS makes a keyring");
    const inner = createKvStore(createStorage());
    await inner.put("u1", '{"version":"before"}');
    const users = writeBeforeFirstCompareAndSet(inner, (store, key) => store.put(key, '{"version":"written by serve meanwhile"}'));
    const state = await encryptAll({ blobs: [], kvs: [{ name: "users", store: users }] }, keyring);
    expect(state.changed).toBe(1);
    const stored = (await inner.get("u1"))!;
    expect(stored.startsWith(SEALED_RECORD_PREFIX)).toBe(true);
    expect(await openRecord(keyring, "u1", stored)).toBe('{"version":"written by serve meanwhile"}');
  });
});
