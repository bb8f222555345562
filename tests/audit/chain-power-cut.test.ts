/**
 * Files with FSYNC=audit flush a day append with the next head write (docs/storage.md#fsync-policy),
 * so the head holds the newest two entries. A power cut cannot be staged in a test: the states it
 * can leave are written as stored bytes instead (a day lacking its newest one or two entries, a
 * day cut mid-line, a new day's file not made yet), then a fresh store (a restarted process)
 * verifies and appends. A day lacking an entry the head does not hold is still tampering.
 */
import { mkdtemp, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFileBlobStore } from "../../src/adapters/server/files/file-ports.ts";
import { appendAuditEntry, readAuditDays, readAuditTrail } from "../../src/core/audit/trail.ts";
import { verifyAuditTrail } from "../../src/core/audit/verify.ts";
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

describe("audit chain on files with FSYNC=audit: the states a power cut can leave", () => {
  it("the head holds the newest two entries; a day lacking them verifies as in flight, and the next append restores both in order", async () => {
    const store = open();
    for (let n = 1; n <= 6; n++) await append(store, DAY1, n);
    const stored = await head();
    expect((stored.entry as { seq: number }).seq).toBe(6);
    expect(stored.previous).toMatchObject({ day: DAY1, index: 4, entry: { seq: 5 } });

    const all = await lines(DAY1);
    for (const lacking of [1, 2]) {
      await writeLines(DAY1, all.slice(0, 6 - lacking));
      await writeHead(stored);
      const restarted = open();
      const verdict = await verify(restarted);
      expect(verdict.valid).toBe(true);
      expect(verdict.head).toMatchObject({ seq: 6, pending: true });
      // Reading the trail serves them from the head meanwhile.
      expect((await readAuditDays(restarted, "u1", [DAY1])).map((entry) => (entry as { seq: number }).seq)).toEqual([6, 5, 4, 3, 2, 1]);
      await append(restarted, DAY1, 7);
      expect(await seqs(DAY1)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect((await lines(DAY1)).slice(0, 6)).toEqual(all);
      expect((await verify(open())).valid).toBe(true);
      // Back to six entries for the next round.
      await writeLines(DAY1, all);
    }
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

  it("across midnight: the previous day lacking its newest entry and the new day's file not made yet are restored, each in its day", async () => {
    const store = open();
    for (let n = 1; n <= 3; n++) await append(store, DAY1, n);
    await append(store, DAY2, 4);
    const stored = await head();
    expect(stored).toMatchObject({ day: DAY2, index: 0, previous: { day: DAY1, index: 2, entry: { seq: 3 } } });
    await writeLines(DAY1, (await lines(DAY1)).slice(0, 2));
    await unlink(path(dayKey(DAY2)));
    await writeHead(stored);
    const restarted = open();
    expect(await verify(restarted)).toMatchObject({ valid: true, head: { seq: 4, pending: true } });
    await append(restarted, DAY2, 5);
    expect(await seqs(DAY1)).toEqual([1, 2, 3]);
    expect(await seqs(DAY2)).toEqual([4, 5]);
    expect((await verify(open())).valid).toBe(true);
  });

  it("a day lacking an entry the head does not hold is tampering, named; so is a held copy that was edited", async () => {
    const store = open();
    for (let n = 1; n <= 6; n++) await append(store, DAY1, n);
    const stored = await head();
    const all = await lines(DAY1);
    await writeLines(DAY1, all.slice(0, 3));
    expect((await verify(open())).firstBad).toMatchObject({ reason: "tail dropped", seq: 4 });
    // The day whole again, entry 4 taken out of its middle: the head holds 5 and 6 only.
    await writeLines(DAY1, [...all.slice(0, 3), ...all.slice(4)]);
    expect((await verify(open())).firstBad).toMatchObject({ reason: "missing", seq: 4 });
    // The head's copy of entry 5 edited, the day lacking 5 and 6.
    await writeLines(DAY1, all.slice(0, 4));
    const previous = stored.previous as { entry: Record<string, unknown> };
    await writeHead({ ...stored, previous: { ...previous, entry: { ...previous.entry, userEmail: "someone@else.test" } } });
    expect((await verify(open())).firstBad).toMatchObject({ reason: "edited", seq: 5 });
  });

  it("a head from before (holding the newest entry only) still verifies one in flight, and names a second missing one", async () => {
    const store = open();
    for (let n = 1; n <= 4; n++) await append(store, DAY1, n);
    const { previous: _previous, ...older } = await head();
    const all = await lines(DAY1);
    await writeLines(DAY1, all.slice(0, 3));
    await writeHead(older);
    expect(await verify(open())).toMatchObject({ valid: true, head: { seq: 4, pending: true } });
    await writeLines(DAY1, all.slice(0, 2));
    await writeHead(older);
    expect((await verify(open())).firstBad).toMatchObject({ reason: "tail dropped", seq: 3 });
    // Put back, the next append goes on from it and the new head holds two again.
    await writeLines(DAY1, all.slice(0, 3));
    await writeHead(older);
    await append(open(), DAY1, 5);
    expect(await seqs(DAY1)).toEqual([1, 2, 3, 4, 5]);
    expect(await head()).toMatchObject({ previous: { entry: { seq: 4 } } });
    expect((await verify(open())).valid).toBe(true);
  });

  it("FSYNC=off (nothing deferred) keeps heads of one entry", async () => {
    const store = createFileBlobStore(dir, { sync: false, auditHeads: true });
    for (let n = 1; n <= 3; n++) await append(store, DAY1, n);
    expect((await head()).previous).toBeUndefined();
  });
});
