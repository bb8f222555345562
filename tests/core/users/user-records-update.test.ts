/**
 * userRecords.update over a store with a compare-and-set: a write another process made between
 * the read and the write makes the change run again on the new record (nothing lost), a key
 * that stays contended gives up after 50 attempts and CONTENDED_MS, and a store without one is
 * written plainly.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createStorage } from "unstorage";
import memoryDriver from "unstorage/drivers/memory";
import type { KvStore } from "../../../src/core/ports.ts";
import { createKvStore } from "../../../src/core/storage/unstorage-stores.ts";
import { CONTENDED_MS, ContentionError } from "../../../src/core/storage/conflict-retry.ts";
import { userRecords } from "../../../src/core/users/user-records.ts";
import { writeBeforeFirstCompareAndSet } from "../../helpers/interfering-kv.ts";
import type { UserData } from "../../../src/core/schemas/user.ts";

const createdAt = "2026-11-22T12:00:00.000Z";
const record = (cases: string[]): UserData => ({
  uid: "u1",
  email: null,
  firstName: "Ada",
  lastName: "Lovelace",
  company: "Lab",
  permitted: true,
  cases: cases.map((caseNumber) => ({ caseNumber, createdAt })),
  createdAt,
});
const memory = () => createKvStore(createStorage({ driver: memoryDriver() }));
const caseNumbers = (text: string | null) => (JSON.parse(text!) as UserData).cases.map((assignment) => assignment.caseNumber);

describe("user record updates over a compare-and-set", () => {
  it("a write by another process between the read and the write: the change runs again on it, and both are kept", async () => {
    const inner = memory();
    await inner.put("u1", JSON.stringify(record(["C-1"])));
    // The other process adds C-2 just before this one's first compare-and-set.
    const users = writeBeforeFirstCompareAndSet(inner, (store, key) => store.put(key, JSON.stringify(record(["C-1", "C-2"]))));
    const seen: string[][] = [];
    await userRecords(users).update("u1", (current) => {
      seen.push(current!.cases.map((assignment) => assignment.caseNumber));
      return { next: { ...current!, cases: [...current!.cases, { caseNumber: "C-3", createdAt }] }, result: undefined };
    });
    expect(seen).toEqual([["C-1"], ["C-1", "C-2"]]);
    expect(caseNumbers(await inner.get("u1"))).toEqual(["C-1", "C-2", "C-3"]);
  });

  // The contended writes pause between attempts: timers faked, so 20 s of contention take none.
  describe("while another writer keeps winning", () => {
    beforeEach(() => {
      vi.useFakeTimers();
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    it("gives up once the record stayed contended for CONTENDED_MS and 50 attempts, writing nothing", async () => {
      const inner = memory();
      await inner.put("u1", JSON.stringify(record(["C-1"])));
      const users: KvStore = { ...inner, put: () => Promise.reject(new Error("put is not used")), replaceIf: () => Promise.resolve(false) };
      let runs = 0;
      const update = userRecords(users).update("u1", (current) => {
        runs++;
        return { next: { ...current!, company: "changed" }, result: undefined };
      });
      const refused = expect(update).rejects.toBeInstanceOf(ContentionError);
      await vi.advanceTimersByTimeAsync(CONTENDED_MS + 1_000);
      await refused;
      expect(runs).toBeGreaterThanOrEqual(50);
      expect(caseNumbers(await inner.get("u1"))).toEqual(["C-1"]);
    });

    it("a record another writer keeps winning for 10 s (far more than 50 attempts) is written once it lets go", async () => {
      const inner = memory();
      await inner.put("u1", JSON.stringify(record(["C-1"])));
      const busyUntil = Date.now() + 10_000;
      let runs = 0;
      const users: KvStore = { ...inner, replaceIf: (key, expected, value) => (Date.now() < busyUntil ? Promise.resolve(false) : inner.replaceIf!(key, expected, value)) };
      const update = userRecords(users).update("u1", (current) => {
        runs++;
        return { next: { ...current!, company: "changed" }, result: "done" };
      });
      await vi.advanceTimersByTimeAsync(11_000);
      expect(await update).toBe("done");
      expect(runs).toBeGreaterThan(50);
      expect((JSON.parse((await inner.get("u1"))!) as { company: string }).company).toBe("changed");
    });
  });

  it("creates a record only where none is (a record created meanwhile is changed instead), and writes nothing for next: null", async () => {
    const inner = memory();
    // Another process creates the record (with C-0) just before this one's first compare-and-set.
    const users = writeBeforeFirstCompareAndSet(inner, (store, key) => store.put(key, JSON.stringify(record(["C-0"]))));
    const records = userRecords(users);
    const seen: (string[] | null)[] = [];
    await records.update("u1", (current) => {
      seen.push(current === null ? null : current.cases.map((assignment) => assignment.caseNumber));
      return { next: current === null ? record(["C-1"]) : { ...current, cases: [...current.cases, { caseNumber: "C-1", createdAt }] }, result: undefined };
    });
    expect(seen).toEqual([null, ["C-0"]]);
    expect(caseNumbers(await inner.get("u1"))).toEqual(["C-0", "C-1"]);
    expect(await records.update("u1", () => ({ next: null, result: "kept" }))).toBe("kept");
    expect(caseNumbers(await inner.get("u1"))).toEqual(["C-0", "C-1"]);
  });

  it("a store without a compare-and-set (Workers KV) is written with put, the change run once", async () => {
    const inner = memory();
    await inner.put("u1", JSON.stringify(record(["C-1"])));
    const { replaceIf: _, ...withoutCas } = inner;
    let runs = 0;
    await userRecords(withoutCas).update("u1", (current) => {
      runs++;
      return { next: { ...current!, cases: [...current!.cases, { caseNumber: "C-2", createdAt }] }, result: undefined };
    });
    expect(runs).toBe(1);
    expect(caseNumbers(await inner.get("u1"))).toEqual(["C-1", "C-2"]);
  });
});
