/**
 * The injected SHA-256 (node:crypto under `serve`) and the core's own JavaScript one make the
 * same chain: a trail written with either verifies with the other, byte for byte the same days,
 * and the service hands the injected one to the appends of both audit addresses.
 */
import { describe, expect, it } from "vitest";
import { createStorage } from "unstorage";
import { createBlobStore } from "../../src/core/storage/unstorage-stores.ts";
import { appendAuditEntry, readAuditTrail } from "../../src/core/audit/trail.ts";
import { verifyAuditTrail } from "../../src/core/audit/verify.ts";
import { canonicalJson } from "../../src/core/encoding/canonical-json.ts";
import { sha256HexSync } from "../../src/core/encoding/sha256.ts";
import { nodeSha256Hex } from "../../src/adapters/server/node-sha256.ts";
import type { SyncSha256 } from "../../src/core/audit/chain.ts";
import type { ValidationAuditEntry } from "../../src/core/schemas/audit.ts";
import { auditEntry } from "../helpers/audit-entry.ts";
import { dataHeaders, fixedClock, testService } from "../helpers/service.ts";

const DAYS = ["2026-11-21", "2026-11-22"];

/** A trail of 2 x 10 entries (one with non-ASCII text) written with `hash`. */
async function trailWith(hash: SyncSha256 | undefined) {
  const store = createBlobStore(createStorage());
  const clock = fixedClock(`${DAYS[0]}T08:00:00Z`);
  for (const [d, day] of DAYS.entries()) {
    for (let i = 0; i < 10; i++) {
      clock.set(`${day}T${String(8 + i).padStart(2, "0")}:00:00Z`);
      const entry = auditEntry({ details: { validationErrors: i === 3 ? ["Überprüfung fehlgeschlagen ✓ 🔍"] : [], n: d * 10 + i } });
      await appendAuditEntry(store, clock, "u1", entry as ValidationAuditEntry, { hash });
    }
  }
  return { store, input: await readAuditTrail(store, "u1", DAYS) };
}

describe("the audit chain's SHA-256", () => {
  it("node:crypto and the core's JavaScript SHA-256 give the same chain; each verifies the other's", async () => {
    const native = await trailWith(nodeSha256Hex);
    const own = await trailWith(undefined);
    for (const day of DAYS) {
      const key = `audit-trails/u1-${day}.json`;
      expect(new TextDecoder().decode((await native.store.get(key))!)).toBe(new TextDecoder().decode((await own.store.get(key))!));
    }
    // verifyAuditTrail recomputes with the core's JavaScript SHA-256: the native trail verifies.
    const result = await verifyAuditTrail(native.input);
    expect(result.valid, JSON.stringify(result.firstBad)).toBe(true);
    expect(result.entries).toBe(20);
    // And the JavaScript trail's hashes are node:crypto's over the same canonical bytes.
    const entries = own.input.days.flatMap((day) => day.entries) as Record<string, unknown>[];
    expect(entries).toHaveLength(20);
    for (const entry of entries) expect(nodeSha256Hex(canonicalJson(entry, "hash"))).toBe(entry.hash);
    for (const text of ["", "ascii", "Überprüfung ✓ 🔍", "lone \ud800 surrogate", "x".repeat(10_000)]) expect(nodeSha256Hex(text)).toBe(sha256HexSync(text));
  });

  it("createService passes ports.auditHash to the appends of both audit addresses", async () => {
    let calls = 0;
    const counting: SyncSha256 = (text) => {
      calls++;
      return nodeSha256Hex(text);
    };
    const { app, ports } = testService({}, { auditHash: counting });
    for (const base of ["/data/audit/", "/audit/audit/"]) {
      const response = await app.request(`${base}?userId=u1`, { method: "POST", headers: dataHeaders, body: JSON.stringify(auditEntry()) });
      expect(response.status).toBe(200);
    }
    expect(calls).toBe(2);
    const result = await verifyAuditTrail(await readAuditTrail(ports.audit, "u1", ["2026-11-22"]));
    expect(result).toMatchObject({ valid: true, entries: 2 });
  });
});
