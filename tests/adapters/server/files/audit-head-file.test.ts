/**
 * Audit heads on disk (docs/storage.md#audit-heads-on-disk): two slots written in place by
 * turns, each with its generation, length and CRC-32. The file is read back with the test's own
 * reader of the documented format (tests/helpers/head-file.ts), torn and tampered on disk, and
 * the trail still verifies or names what was done; heads written whole before are read.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFileBlobStore, createFilePorts } from "../../../../src/adapters/server/files/file-ports.ts";
import { appendAuditEntry, readAuditTrail } from "../../../../src/core/audit/trail.ts";
import { verifyAuditTrail } from "../../../../src/core/audit/verify.ts";
import type { ValidationAuditEntry } from "../../../../src/core/schemas/audit.ts";
import { auditEntry } from "../../../helpers/audit-entry.ts";
import { headSlot, headText } from "../../../helpers/head-file.ts";
import { encryptedBlobStore } from "../../../../src/core/encryption/encrypted-stores.ts";
import { Keyring } from "../../../../src/core/encryption/keyring.ts";
import { dataKey } from "../../../helpers/encryption.ts";

const DAY = "2026-11-22";
const clock = { now: () => new Date(`${DAY}T12:00:00Z`) };
let dir: string;
const headPath = () => join(dir, "audit-heads", "u1.json");
const dayPath = () => join(dir, "audit-trails", `u1-${DAY}.json`);
const headFile = async () => new Uint8Array(await readFile(headPath()));
// A store over the folder as a freshly started process holds it (nothing remembered).
const store = () => createFileBlobStore(dir, { auditHeads: true });
const append = (s = store(), n = 0) => appendAuditEntry(s, clock, "u1", auditEntry({ details: { validationErrors: [], n } }) as ValidationAuditEntry);
const verify = async () => verifyAuditTrail(await readAuditTrail(store(), "u1", [DAY]));

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-head-file-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("audit heads on disk", () => {
  it("a head file is two slots written by turns; the store reads the newer valid one", async () => {
    const s = store();
    for (let n = 1; n <= 3; n++) await append(s, n);
    const file = await headFile();
    expect(file.length).toBe(8_192);
    // The first append made the file (slot 0, generation 1); the second wrote slot 1, the third slot 0.
    expect(headSlot(file, 0)?.generation).toBe(3);
    expect(headSlot(file, 1)?.generation).toBe(2);
    expect(JSON.parse(headSlot(file, 1)!.text)).toMatchObject({ seq: 2 });
    expect(headText(file)).toBe(new TextDecoder().decode((await store().get("audit-heads/u1.json"))!));
    expect(JSON.parse(headText(file))).toMatchObject({ seq: 3, index: 2 });
    expect(await verify()).toMatchObject({ valid: true, entries: 3 });
  });

  it("a head file put back or rewritten by hand while the store is open is read as it is, not as the store last wrote it", async () => {
    const s = store();
    const key = "audit-heads/u1.json";
    const seen: number[] = [];
    const seqOf = (bytes: Uint8Array | null) => (bytes === null ? 0 : (JSON.parse(new TextDecoder().decode(bytes)) as { seq: number }).seq);
    const look = () => s.update(key, (current) => (seen.push(seqOf(current)), current ?? new Uint8Array()), { inPlace: true });
    for (let n = 1; n <= 2; n++) await append(s, n);
    const second = await headFile();
    await append(s, 3);
    await look();
    // The file as it was after the second append (a backup restored): the same size and layout, other headers.
    await writeFile(headPath(), second);
    await look();
    // Written whole (the form of earlier versions), then slotted again by the next append.
    await writeFile(headPath(), JSON.stringify({ ...JSON.parse(headText(second)), seq: 7 }));
    await look();
    expect(seen).toEqual([3, 2, 7]);
  });

  it("encrypted at rest, heads sealed under the current key are written in place too; a plaintext head is replaced whole", async () => {
    for (let n = 1; n <= 2; n++) await append(undefined, n);
    const keyring = new Keyring([dataKey("k1")]);
    const sealed = () => encryptedBlobStore(store(), keyring, { appendLog: true });
    await append(sealed(), 3);
    // The plaintext head before is not kept in the other slot: the file was made anew.
    let file = await headFile();
    expect([headSlot(file, 0)?.generation, headSlot(file, 1)]).toEqual([3, undefined]);
    await append(sealed(), 4);
    await append(sealed(), 5);
    file = await headFile();
    expect([headSlot(file, 0)?.generation, headSlot(file, 1)?.generation]).toEqual([5, 4]);
    const result = await verifyAuditTrail(await readAuditTrail(sealed(), "u1", [DAY]));
    expect(result).toMatchObject({ valid: true, entries: 5 });
  });

  it("a head write torn by a crash before its day append: the slot before is read, nothing acknowledged is lost, the chain goes on", async () => {
    for (let n = 1; n <= 5; n++) await append(undefined, n);
    const day = await readFile(dayPath());
    await append(undefined, 6);
    // The crash: the day never got entry 6, and its head slot is half written.
    await writeFile(dayPath(), day);
    const file = await headFile();
    const newest = headSlot(file, 0)!.generation > headSlot(file, 1)!.generation ? 0 : 1;
    const at = newest * (file.length / 2);
    file.fill(0x20, at + 200, at + 400);
    await writeFile(headPath(), file);
    expect(await verify()).toMatchObject({ valid: true, entries: 5, head: { seq: 5 } });
    expect((await append(undefined, 7)).entryCount).toBe(6);
    const result = await verify();
    expect(result, JSON.stringify(result.firstBad)).toMatchObject({ valid: true, entries: 6, head: { seq: 6 } });
  });

  it("a head written whole, as before this layout, is read and becomes two slots on the next append", async () => {
    for (let n = 1; n <= 3; n++) await append(undefined, n);
    await writeFile(headPath(), headText(await headFile()));
    expect(await verify()).toMatchObject({ valid: true, entries: 3 });
    await append(undefined, 4);
    const file = await headFile();
    expect(new TextDecoder().decode(file.subarray(0, 13))).toBe("fa-head-slot ");
    expect(JSON.parse(headText(file))).toMatchObject({ seq: 4 });
    expect(await verify()).toMatchObject({ valid: true, entries: 4 });
  });

  it("tampering with the head file's bytes is detected: an edited slot falls back to the head before (inserted), both spoiled stop appends", async () => {
    for (let n = 1; n <= 4; n++) await append(undefined, n);
    const file = await headFile();
    const newest = headSlot(file, 0)!.generation > headSlot(file, 1)!.generation ? 0 : 1;
    const at = newest * (file.length / 2);
    // Edit one digit of the newest head's JSON (its index) without its checksum.
    const text = headSlot(file, newest)!.text;
    const offset = at + 48 + new TextEncoder().encode(text.slice(0, text.indexOf(`"index":3`) + 8)).length;
    file[offset] = "2".charCodeAt(0);
    await writeFile(headPath(), file);
    expect((await verify()).firstBad).toMatchObject({ seq: 4, reason: "inserted" });

    file.fill(0x20, (1 - newest) * (file.length / 2) + 60, (1 - newest) * (file.length / 2) + 80);
    await writeFile(headPath(), file);
    expect((await verify()).firstBad).toMatchObject({ reason: "head unreadable" });
    await expect(append(undefined, 5)).rejects.toThrow(/cannot be read/);
  });

  it("only the audit store keeps heads as slots: in the data store an audit-heads/ key is a plain file, read and written as it is", async () => {
    const { data, audit } = createFilePorts(dir, { fsync: "off" });
    const key = "audit-heads/u1.json";
    const bytes = new TextEncoder().encode('{"seq":1}');
    await data.update(key, () => bytes);
    await audit.update(key, () => bytes);
    expect(new Uint8Array(await readFile(join(dir, "data", "audit-heads", "u1.json")))).toEqual(bytes);
    const slotted = new Uint8Array(await readFile(join(dir, "audit", "audit-heads", "u1.json")));
    expect(headSlot(slotted, 0)).toEqual({ generation: 1, text: '{"seq":1}' });
    // A slotted file put in the data store is its bytes there, not the head inside.
    await writeFile(join(dir, "data", "audit-heads", "u1.json"), slotted);
    expect(await data.get(key)).toEqual(slotted);
    expect(await audit.get(key)).toEqual(bytes);
  });
});
