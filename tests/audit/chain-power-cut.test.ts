/**
 * Files with FSYNC=audit flush a day's appends once every few appends, apart from the heads
 * (docs/storage.md#fsync-policy), so the head holds every entry whose day flush has not resolved
 * (at most MAX_HELD). A power cut cannot be staged in a test: the states it can leave are
 * written as stored bytes instead (a day lacking the entries the head holds, a day cut mid-line,
 * a new day's file not made yet), then a fresh store (a restarted process) verifies and
 * appends. A day lacking an entry the head does not hold is still tampering.
 */
import { mkdtemp, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFileBlobStore } from "../../src/adapters/server/files/file-ports.ts";
import { appendAuditEntry, readAuditEntryJson, readAuditTrail } from "../../src/core/audit/trail.ts";
import { verifyAuditTrail } from "../../src/core/audit/verify.ts";
import { FLUSH_AT, MAX_HELD } from "../../src/core/audit/chain.ts";
import type { BlobStore, Clock } from "../../src/core/ports.ts";
import type { ValidationAuditEntry } from "../../src/core/schemas/audit.ts";
import { auditEntry } from "../helpers/audit-entry.ts";
import { headText } from "../helpers/head-file.ts";

const DAY1 = "2026-11-21";
const DAY2 = "2026-11-22";
const decoder = new TextDecoder();

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-power-cut-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const path = (key: string) => join(dir, ...key.split("/"));
const dayKey = (day: string) => `audit-trails/u1-${day}.json`;
const HEAD = "audit-heads/u1.json";
const open = (): BlobStore => createFileBlobStore(dir, { sync: true, auditHeads: true });
const clockAt = (day: string): Clock => ({ now: () => new Date(`${day}T12:00:00Z`) });

async function append(store: BlobStore, day: string, n: number): Promise<void> {
  await appendAuditEntry(store, clockAt(day), "u1", auditEntry({ details: { validationErrors: [], n } }) as ValidationAuditEntry);
}

/** The stored day's item lines, as stored. */
async function lines(day: string): Promise<string[]> {
  const text = decoder.decode(await readFile(path(dayKey(day))));
  return text.split("\n").slice(1, -1).map((line) => line.replace(/,$/, ""));
}
const writeLines = (day: string, items: string[]) => writeFile(path(dayKey(day)), items.length === 0 ? "[]" : `[\n${items.join(",\n")}\n]`);
const seqs = async (day: string) => (await lines(day)).map((line) => (JSON.parse(line) as { seq: number }).seq);

/** The stored head's JSON. */
async function head(): Promise<Record<string, unknown>> {
  return JSON.parse(headText(new Uint8Array(await readFile(path(HEAD))))) as Record<string, unknown>;
}
/** Writes a head (the whole form) whose writer's lease ran out: the time of a restart after the cut. */
const writeHead = (value: Record<string, unknown>) => writeFile(path(HEAD), JSON.stringify({ ...value, until: 0 }));

async function verify(store: BlobStore, days = [DAY1, DAY2]) {
  return verifyAuditTrail(await readAuditTrail(store, "u1", days));
}

interface Held {
  day: string;
  index: number;
  entry: { seq: number } & Record<string, unknown>;
}
const heldOf = (stored: Record<string, unknown>) => (stored.held ?? []) as Held[];
const heldSeqs = (stored: Record<string, unknown>) => heldOf(stored).map((held) => held.entry.seq);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe("audit chain on files with FSYNC=audit: the states a power cut can leave", () => {
  it("the head holds every entry its day flush has not resolved; a day lacking them verifies as in flight, and the next append restores them in order", async () => {
    const store = open();
    // Fewer than FLUSH_AT entries: no day flush has started, the head holds them all.
    const count = FLUSH_AT - 1;
    for (let n = 1; n <= count; n++) await append(store, DAY1, n);
    const stored = await head();
    expect((stored.entry as { seq: number }).seq).toBe(count);
    expect(heldOf(stored).map(({ index, entry }) => [index, entry.seq])).toEqual(range(1, count - 1).map((seq) => [seq - 1, seq]));

    const all = await lines(DAY1);
    for (const lacking of [1, 2, count]) {
      await writeLines(DAY1, all.slice(0, count - lacking));
      await writeHead(stored);
      const restarted = open();
      const verdict = await verify(restarted);
      expect(verdict.valid).toBe(true);
      expect(verdict.head).toMatchObject({ seq: count, pending: true });
      // Reading the trail serves them from the head meanwhile.
      expect((await readAuditEntryJson(restarted, "u1", [DAY1])).map((json) => (JSON.parse(new TextDecoder().decode(json)) as { seq: number }).seq)).toEqual(range(1, count).reverse());
      await append(restarted, DAY1, count + 1);
      expect(await seqs(DAY1)).toEqual(range(1, count + 1));
      expect((await lines(DAY1)).slice(0, count)).toEqual(all);
      expect((await verify(open())).valid).toBe(true);
      // Back to the entries before, for the next round.
      await writeLines(DAY1, all);
    }
  });

  it("past FLUSH_AT entries the day is flushed and later heads drop what it made durable; a cut with several appends unflushed restores them in order", async () => {
    const store = open();
    for (let n = 1; n <= 3 * FLUSH_AT; n++) {
      await append(store, DAY1, n);
      const stored = await head();
      // Seqs in a row up to the newest, never more than MAX_HELD in all.
      const held = heldSeqs(stored);
      expect(held).toEqual(held.length === 0 ? [] : range(n - held.length, n - 1));
      expect(held.length + 1).toBeLessThanOrEqual(MAX_HELD);
    }
    // A day flush resolved on the way: the head no longer holds the first entries.
    const stored = await head();
    expect(heldSeqs(stored)[0] ?? 3 * FLUSH_AT).toBeGreaterThan(1);
    const lacking = heldOf(stored).length + 1;
    const all = await lines(DAY1);
    await writeLines(DAY1, all.slice(0, all.length - lacking));
    await writeHead(stored);
    const restarted = open();
    expect(await verify(restarted)).toMatchObject({ valid: true, head: { seq: 3 * FLUSH_AT, pending: true } });
    await append(restarted, DAY1, 3 * FLUSH_AT + 1);
    expect(await seqs(DAY1)).toEqual(range(1, 3 * FLUSH_AT + 1));
    expect((await verify(open())).valid).toBe(true);
  });

  it("while its days' flush has not resolved, the head holds MAX_HELD entries at most: the next append waits for the flush, then its head drops what it made durable", async () => {
    const files = open();
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    // The disk slow to flush the day: its syncs wait for the gate.
    const store: BlobStore = { ...files, syncJsonArray: (key) => gate.then(() => files.syncJsonArray!(key)) };
    for (let n = 1; n <= MAX_HELD; n++) await append(store, DAY1, n);
    expect(heldSeqs(await head())).toEqual(range(1, MAX_HELD - 1));
    let done = false;
    const waiting = append(store, DAY1, MAX_HELD + 1).then(() => (done = true));
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    expect((await head()).seq).toBe(MAX_HELD);
    release();
    await waiting;
    const stored = await head();
    expect(stored.seq).toBe(MAX_HELD + 1);
    expect(heldSeqs(stored)[0]).toBeGreaterThan(FLUSH_AT - 1);
    expect(await seqs(DAY1)).toEqual(range(1, MAX_HELD + 1));
    expect((await verify(open())).valid).toBe(true);
  });

  it("a day cut mid-line (its last append torn) keeps every line before it, and the next append restores the rest", async () => {
    const store = open();
    for (let n = 1; n <= 5; n++) await append(store, DAY1, n);
    const stored = await head();
    const bytes = await readFile(path(dayKey(DAY1)));
    const all = await lines(DAY1);
    // Entry 5's line half written, the closing bracket gone.
    await writeFile(path(dayKey(DAY1)), bytes.subarray(0, bytes.length - 2 - Math.floor(all[4]!.length / 2)));
    await writeHead(stored);
    const restarted = open();
    expect(await verify(restarted)).toMatchObject({ valid: true, head: { seq: 5, pending: true } });
    await append(restarted, DAY1, 6);
    expect(await seqs(DAY1)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await verify(open())).valid).toBe(true);
  });

  it("across midnight: the previous day lacking its newest entries and the new day's file not made yet are restored, each in its day", async () => {
    const store = open();
    for (let n = 1; n <= 3; n++) await append(store, DAY1, n);
    await append(store, DAY2, 4);
    const stored = await head();
    expect(stored).toMatchObject({ day: DAY2, index: 0 });
    expect(heldOf(stored).map(({ day, index, entry }) => [day, index, entry.seq])).toEqual([[DAY1, 0, 1], [DAY1, 1, 2], [DAY1, 2, 3]]);
    await writeLines(DAY1, (await lines(DAY1)).slice(0, 1));
    await unlink(path(dayKey(DAY2)));
    await writeHead(stored);
    const restarted = open();
    expect(await verify(restarted)).toMatchObject({ valid: true, head: { seq: 4, pending: true } });
    await append(restarted, DAY2, 5);
    expect(await seqs(DAY1)).toEqual([1, 2, 3]);
    expect(await seqs(DAY2)).toEqual([4, 5]);
    expect((await verify(open())).valid).toBe(true);
  });

  it("a day lacking an entry the head does not hold is tampering, named; so are a held entry missing from the middle, two swapped, and a held copy edited", async () => {
    // The day flush held back until MAX_HELD entries are held, then let through: the head holds FLUSH_AT + 1 and on.
    const files = open();
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const store: BlobStore = { ...files, syncJsonArray: (key) => gate.then(() => files.syncJsonArray!(key)) };
    for (let n = 1; n <= MAX_HELD; n++) await append(store, DAY1, n);
    release();
    await append(store, DAY1, MAX_HELD + 1);
    const stored = await head();
    const firstHeld = FLUSH_AT + 1;
    expect(heldSeqs(stored)).toEqual(range(firstHeld, MAX_HELD));
    const all = await lines(DAY1);
    // One entry more than the head holds dropped from the tail.
    await writeLines(DAY1, all.slice(0, firstHeld - 2));
    expect((await verify(open())).firstBad).toMatchObject({ reason: "tail dropped", seq: firstHeld - 1 });
    // A held entry taken out of the middle, the entries after it kept.
    await writeLines(DAY1, [...all.slice(0, firstHeld), ...all.slice(firstHeld + 1)]);
    expect((await verify(open())).firstBad).toMatchObject({ reason: "missing", seq: firstHeld + 1 });
    // Two held entries swapped.
    await writeLines(DAY1, [...all.slice(0, firstHeld), all[firstHeld + 1]!, all[firstHeld]!, ...all.slice(firstHeld + 2)]);
    expect((await verify(open())).firstBad).toMatchObject({ reason: "reordered", seq: firstHeld + 1 });
    // The head's copy of a held entry edited, the day lacking every entry the head holds.
    await writeLines(DAY1, all.slice(0, firstHeld - 1));
    const held = heldOf(stored);
    const edited = held.map((entry, i) => (i === 1 ? { ...entry, entry: { ...entry.entry, userEmail: "someone@else.test" } } : entry));
    await writeHead({ ...stored, held: edited });
    expect((await verify(open())).firstBad).toMatchObject({ reason: "edited", seq: held[1]!.entry.seq });
  });

  it("a head of the release before (the entry before the newest as `previous`) verifies two in flight, names a third missing one, and the next append holds them as `held`", async () => {
    const store = open();
    for (let n = 1; n <= 4; n++) await append(store, DAY1, n);
    const { held, ...rest } = await head();
    const older = { ...rest, previous: (held as Held[]).at(-1) };
    const all = await lines(DAY1);
    await writeLines(DAY1, all.slice(0, 2));
    await writeHead(older);
    expect(await verify(open())).toMatchObject({ valid: true, head: { seq: 4, pending: true } });
    await writeLines(DAY1, all.slice(0, 1));
    await writeHead(older);
    expect((await verify(open())).firstBad).toMatchObject({ reason: "tail dropped", seq: 2 });
    await writeLines(DAY1, all.slice(0, 2));
    await writeHead(older);
    await append(open(), DAY1, 5);
    expect(await seqs(DAY1)).toEqual([1, 2, 3, 4, 5]);
    // Entries 3 and 4 were made durable by the restarted process before its head dropped them.
    expect(heldSeqs(await head())).toEqual([]);
    expect((await verify(open())).valid).toBe(true);
  });

  it("a head from before (holding the newest entry only) still verifies one in flight, and names a second missing one", async () => {
    const store = open();
    for (let n = 1; n <= 4; n++) await append(store, DAY1, n);
    const { held: _held, ...older } = await head();
    const all = await lines(DAY1);
    await writeLines(DAY1, all.slice(0, 3));
    await writeHead(older);
    expect(await verify(open())).toMatchObject({ valid: true, head: { seq: 4, pending: true } });
    await writeLines(DAY1, all.slice(0, 2));
    await writeHead(older);
    expect((await verify(open())).firstBad).toMatchObject({ reason: "tail dropped", seq: 3 });
    // Put back, the next append goes on from it.
    await writeLines(DAY1, all.slice(0, 3));
    await writeHead(older);
    const restarted = open();
    await append(restarted, DAY1, 5);
    await append(restarted, DAY1, 6);
    expect(await seqs(DAY1)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(heldSeqs(await head())).toEqual([5]);
    expect((await verify(open())).valid).toBe(true);
  });

  it("FSYNC=off (nothing deferred) keeps heads of one entry", async () => {
    const store = createFileBlobStore(dir, { sync: false, auditHeads: true });
    for (let n = 1; n <= 3; n++) await append(store, DAY1, n);
    expect((await head()).held).toBeUndefined();
  });
});
