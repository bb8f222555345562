/**
 * A user record is parsed and checked once per stored text: reads of an unchanged record
 * answer the text validated before, and a record changed in the store by anyone else (another
 * process, another isolate) is read and checked again.
 */
import { describe, expect, it } from "vitest";
import { createStorage } from "unstorage";
import memoryDriver from "unstorage/drivers/memory";
import { createKvStore } from "../../../src/core/storage/unstorage-stores.ts";
import { userRecords } from "../../../src/core/users/user-records.ts";

const record = (company: string) => ({
  uid: "u1",
  email: "u1@lab.example",
  firstName: "Ada",
  lastName: "Lovelace",
  company,
  permitted: true,
  cases: [{ caseNumber: "C-1", createdAt: "2026-11-22T12:00:00.000Z", note: "kept" }],
  createdAt: "2026-11-22T12:00:00.000Z",
});

describe("user record reads", () => {
  it("answers the validated record's JSON, the same for repeated reads, and a fresh copy to change each time", async () => {
    const users = createKvStore(createStorage({ driver: memoryDriver() }));
    await users.put("u1", `  ${JSON.stringify(record("Lab A"))}\n`);
    const records = userRecords(users);
    const first = await records.answer("u1");
    expect(first).toBe(JSON.stringify(record("Lab A")));
    expect(await records.answer("u1")).toBe(first);
    const copy = await records.get("u1");
    copy!.company = "changed by the caller";
    expect((await records.get("u1"))!.company).toBe("Lab A");
    expect(await records.answer("u1")).toBe(first);
    expect(await records.answer("nobody")).toBeNull();
  });

  it("a record changed or removed behind its back is read again: the new record, a refusal of a bad one, or none", async () => {
    const users = createKvStore(createStorage({ driver: memoryDriver() }));
    const records = userRecords(users);
    await users.put("u1", JSON.stringify(record("Lab A")));
    expect(JSON.parse((await records.answer("u1"))!)).toMatchObject({ company: "Lab A" });
    await users.put("u1", JSON.stringify(record("Lab B")));
    expect(JSON.parse((await records.answer("u1"))!)).toMatchObject({ company: "Lab B" });
    await users.put("u1", JSON.stringify({ ...record("Lab C"), permitted: "yes" }));
    await expect(records.answer("u1")).rejects.toThrow(/does not match UserData/);
    await users.put("u1", "{not json");
    await expect(records.get("u1")).rejects.toThrow(/not valid JSON/);
    await users.delete("u1");
    expect(await records.answer("u1")).toBeNull();
    expect(await records.get("u1")).toBeNull();
  });
});
