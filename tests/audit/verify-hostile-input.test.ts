/**
 * verifyAuditTrail over input edited by hand or built to hurt (an export is JSON anyone can edit).
 *
 * A day whose entries skip seqs (a hand-edited store, or a hostile export) is judged in one pass:
 * each jump asked whether the missing seq comes later in the day by scanning the rest of it, so
 * a day of every other seq took quadratic time (40,000 entries: 16 s, while /health waited).
 * 100,000 such entries would take minutes that way; here they are checked well within the limit.
 */
import { expect, it } from "vitest";
import { entryHash, GENESIS_HASH } from "../../src/core/audit/chain.ts";
import { nodeSha256Hex } from "../../src/adapters/server/node-sha256.ts";
import { verifyAuditTrail } from "../../src/core/audit/verify.ts";

it("a day of 100,000 entries with every other seq missing is named (missing seq 2) in linear time", async () => {
  const date = "2026-11-22";
  const entries: Record<string, unknown>[] = [];
  let prevHash = GENESIS_HASH;
  for (let i = 0; i < 100_000; i++) {
    const entry: Record<string, unknown> = { timestamp: `${date}T08:00:00.000Z`, userId: "u1", action: "case-create", result: "success", seq: 2 * i + 1, prevHash };
    entry.hash = entryHash(entry, nodeSha256Hex);
    prevHash = entry.hash as string;
    entries.push(entry);
  }
  const result = await verifyAuditTrail({ userId: "u1", days: [{ date, entries }], head: null });
  expect(result.valid).toBe(false);
  expect(result.firstBad).toMatchObject({ date, seq: 2, index: 1, reason: "missing" });
}, 30_000);

it("a head nested too deep to write back is 'head unreadable', not a RangeError; days that are not an array are a TypeError saying so", async () => {
  let deep: Record<string, unknown> = {};
  for (let i = 0; i < 200_000; i++) deep = { a: deep };
  const result = await verifyAuditTrail({ userId: "u1", days: [], head: deep });
  expect(result.valid).toBe(false);
  expect(result.firstBad).toMatchObject({ reason: "head unreadable" });
  await expect(verifyAuditTrail({ userId: "u1", days: "2026-11-22" as unknown as [], head: null })).rejects.toThrow(/days must be an array/);
});

it("a head whose entry, or a held entry, is nested past what canonical JSON takes is named (edited), not a RangeError", async () => {
  let deep: Record<string, unknown> = {};
  for (let i = 0; i < 200; i++) deep = { a: deep };
  const date = "2026-11-22";
  const first: Record<string, unknown> = { timestamp: `${date}T08:00:00.000Z`, userId: "u1", action: "case-create", result: "success", seq: 1, prevHash: GENESIS_HASH };
  first.hash = entryHash(first);
  const facts = { format: "forensic-annotation/audit-head@1", userId: "u1", seq: 2, hash: "b".repeat(64), day: date, index: 1, firstDay: date, updatedAt: `${date}T09:00:00.000Z`, until: 0 };
  const newest = { details: deep, seq: 2, prevHash: first.hash, hash: "b".repeat(64) };
  // The held copy of seq 1 names the hash seq 2 follows, but is nested too deep to hash again.
  const second: Record<string, unknown> = { ...first, seq: 2, prevHash: first.hash };
  second.hash = entryHash(second);
  const holding = { ...facts, hash: second.hash, entry: second, held: [{ day: date, index: 0, entry: { ...first, details: deep } }] };
  for (const head of [{ ...facts, entry: newest }, holding]) {
    const result = await verifyAuditTrail({ userId: "u1", days: [{ date, entries: [first] }], head });
    expect(result.valid).toBe(false);
    expect(result.firstBad?.reason).toBe("edited");
  }
});
