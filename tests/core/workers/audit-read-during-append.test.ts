/**
 * Reading or verifying a trail while appends land: the days are read, then the head. Appends
 * that completed in between moved the head past the days read, and a verification of an
 * intact trail said `tail dropped` while GET left the entries in between out (seen under
 * `serve` with 4 appends at a time: 20 of 526 verifications invalid, 24 of 526 reads with a
 * gap). Reads now take the days and the head as of one moment.
 */
import { describe, expect, it } from "vitest";
import { createStorage } from "unstorage";
import memoryDriver from "unstorage/drivers/memory";
import { createBlobStore } from "../../../src/core/storage/unstorage-stores.ts";
import type { BlobStore } from "../../../src/core/ports.ts";
import { dataHeaders, testService } from "../../helpers/service.ts";
import { auditEntry } from "../../helpers/audit-entry.ts";

/** The audit store, where the next read of a day file lets `during` run before it answers (again and again when `times` says so). */
function interleaved(): { store: BlobStore; arm(during: (read: number) => Promise<void>, times?: number): void } {
  const inner = createBlobStore(createStorage({ driver: memoryDriver() }));
  let pending: ((read: number) => Promise<void>) | undefined;
  let left = 0;
  let reads = 0;
  const store: BlobStore = {
    ...inner,
    async get(key) {
      const bytes = await inner.get(key);
      const during = pending;
      // The day file itself (audit-trails/{user}-{day}.json), not the legacy key read beside it.
      if (during !== undefined && /^audit-trails\/[^/]+\.json$/.test(key)) {
        if (--left === 0) pending = undefined;
        await during(++reads);
      }
      return bytes;
    },
  };
  return {
    store,
    arm: (during, times = 1) => {
      pending = during;
      left = times;
      reads = 0;
    },
  };
}

describe("audit trail read while appends land", () => {
  for (const route of ["/data/audit", "/audit/audit"]) {
    it(`${route}/verify and ${route}/ see every entry of an intact trail when two appends complete between reading the day and the head`, async () => {
      const audit = interleaved();
      const { app } = testService({}, { audit: audit.store });
      const append = async () => {
        const response = await app.request(`${route}/?userId=u1`, { method: "POST", headers: dataHeaders, body: JSON.stringify(auditEntry()) });
        expect(response.status).toBe(200);
      };
      for (let i = 0; i < 3; i++) await append();

      audit.arm(async () => {
        await append();
        await append();
      });
      const verify = await app.request(`${route}/verify?userId=u1`, { headers: dataHeaders });
      expect(verify.status).toBe(200);
      expect(await verify.json()).toMatchObject({ valid: true });

      audit.arm(async () => {
        await append();
        await append();
      });
      const read = await app.request(`${route}/?userId=u1`, { headers: dataHeaders });
      const { entries } = (await read.json()) as { entries: { seq: number }[] };
      const seqs = entries.map((entry) => entry.seq);
      // Newest first, without a gap: whatever moment the read stands for, it holds every entry up to it.
      expect(seqs.length).toBeGreaterThanOrEqual(5);
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => seqs[0]! - i));
      expect(seqs.at(-1)).toBe(1);
    });

    it(`${route}/verify is not fooled when appends land during every read of the days: the last read holds them back`, async () => {
      const audit = interleaved();
      const { app } = testService({}, { audit: audit.store });
      const post = () => app.request(`${route}/?userId=u1`, { method: "POST", headers: dataHeaders, body: JSON.stringify(auditEntry()) });
      for (let i = 0; i < 3; i++) expect((await post()).status).toBe(200);
      const late: (Response | Promise<Response>)[] = [];
      // The first reads see two appends complete in between; later ones start two and read on.
      audit.arm(async (read) => {
        if (read <= 2) {
          for (let i = 0; i < 2; i++) expect((await post()).status).toBe(200);
        } else {
          // Given every chance to land before this read answers (turns of the event loop, no clock):
          // they must not, or the head read after it would be past the days.
          late.push(post(), post());
          for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setTimeout(resolve, 0));
        }
      }, 3);
      const verify = await app.request(`${route}/verify?userId=u1`, { headers: dataHeaders });
      expect(await verify.json()).toMatchObject({ valid: true });
      for (const response of await Promise.all(late)) expect(response.status).toBe(200);
      const after = await app.request(`${route}/verify?userId=u1`, { headers: dataHeaders });
      expect(await after.json()).toMatchObject({ valid: true, entries: 3 + 4 + late.length });
    });
  }
});
