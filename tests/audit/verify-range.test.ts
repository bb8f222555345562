/**
 * `GET /audit/verify` of a range of days: the answer lists only the range's days with entries
 * (docs/api.md: days without entries are left out); a range after the trail's newest day
 * listed that day with no entries, and one after it holding entries still names them.
 */
import { describe, expect, it } from "vitest";
import { createStorage } from "unstorage";
import { createBlobStore } from "../../src/core/storage/unstorage-stores.ts";
import { appendAuditEntry, readAuditTrail } from "../../src/core/audit/trail.ts";
import { type AuditTrailInput, verifyAuditTrail } from "../../src/core/audit/verify.ts";
import type { ValidationAuditEntry } from "../../src/core/schemas/audit.ts";
import { auditEntry } from "../helpers/audit-entry.ts";
import { fixedClock } from "../helpers/service.ts";

async function trail(days: string[]) {
  const store = createBlobStore(createStorage());
  const clock = fixedClock(`${days[0]}T08:00:00Z`);
  for (const day of days) {
    for (let i = 0; i < 3; i++) {
      clock.set(`${day}T${String(8 + i).padStart(2, "0")}:00:00Z`);
      await appendAuditEntry(store, clock, "u1", auditEntry({ userId: "u1" }) as ValidationAuditEntry);
    }
  }
  return store;
}

describe("verifying a range of days", () => {
  it("a range after the newest day lists no day; one before the oldest neither; one around the trail lists its days", async () => {
    const store = await trail(["2026-11-24", "2026-11-25"]);
    const after = await verifyAuditTrail(await readAuditTrail(store, "u1", ["2026-11-26", "2026-11-27"]));
    expect(after).toMatchObject({ valid: true, from: "2026-11-26", to: "2026-11-27", entries: 0, days: [] });
    const before = await verifyAuditTrail(await readAuditTrail(store, "u1", ["2026-11-20", "2026-11-21"]));
    expect(before).toMatchObject({ valid: true, entries: 0, days: [] });
    const around = await verifyAuditTrail(await readAuditTrail(store, "u1", ["2026-11-23", "2026-11-24", "2026-11-25", "2026-11-26"]));
    expect(around).toMatchObject({ valid: true, entries: 6 });
    expect(around.days.map((day) => [day.date, day.entries])).toEqual([["2026-11-24", 3], ["2026-11-25", 3]]);
  });

  it("entries stored on a day after the head's are still named as inserted when the range starts after the head", async () => {
    const store = await trail(["2026-11-24"]);
    const later = await trail(["2026-11-24", "2026-11-26"]);
    // The day after the head's, copied in from another trail behind the store's back.
    await store.put("audit-trails/u1-2026-11-26.json", (await later.get("audit-trails/u1-2026-11-26.json"))!);
    const verdict = await verifyAuditTrail(await readAuditTrail(store, "u1", ["2026-11-26"]));
    expect(verdict.valid).toBe(false);
    expect(verdict.days.map((day) => day.date)).toEqual(["2026-11-26"]);
    expect(verdict.firstBad).toMatchObject({ date: "2026-11-26", reason: "inserted" });
  });

  it("a finding about the head of a trail that ends before an open range's first day is put on that first day, not the head's", async () => {
    const store = await trail(["2026-11-24"]);
    const input = await readAuditTrail(store, "u1", ["2026-11-24"]);
    const head = JSON.parse(JSON.stringify(input.head)) as { entry: { details: unknown } };
    head.entry.details = { edited: true };
    const verdict = await verifyAuditTrail({ userId: "u1", days: [], head: head as unknown as AuditTrailInput["head"], from: "2026-11-26" });
    expect(verdict.valid).toBe(false);
    expect(verdict.days.map((day) => day.date)).toEqual(["2026-11-26"]);
    expect(verdict.firstBad).toMatchObject({ date: "2026-11-26", reason: "edited" });
  });
});
