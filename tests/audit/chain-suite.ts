/**
 * The audit-chain suite: every backend runs the same cases. A trail over three days verifies;
 * each kind of tampering, done on the stored bytes (the object or file, not the API), is
 * detected and names the entry; 32 writers x 50 concurrent appends make one gap-free chain.
 */
import { describe, expect, it } from "vitest";
import { exportJWK, generateKeyPair } from "jose";
import type { BlobStore, Clock } from "../../src/core/ports.ts";
import { appendAuditEntry, auditVerifyDays, readAuditEntryJson, readAuditTrail, verifyStoredTrail } from "../../src/core/audit/trail.ts";
import { verifyAuditTrail } from "../../src/core/audit/verify.ts";
import { auditKeys } from "../../src/core/audit/signing-keys.ts";
import { signAuditHead, signAuditHeads, SigningBegun } from "../../src/core/audit/sign-heads.ts";
import { AuditDayFull, type HeadFacts, headFacts } from "../../src/core/audit/chain.ts";
import { STATUS_OF_KIND } from "../../src/core/http/errors.ts";
import { sameBytes } from "../../src/core/encoding/same-bytes.ts";
import { canonicalJson } from "../../src/core/encoding/canonical-json.ts";
import { auditEntry } from "../helpers/audit-entry.ts";
import type { ValidationAuditEntry } from "../../src/core/schemas/audit.ts";

/** Raw access to what a backend stores under a key (the object, the file on disk). */
export interface RawBytes {
  read(key: string): Promise<Uint8Array | null>;
  write(key: string, bytes: Uint8Array): Promise<void>;
  remove(key: string): Promise<void>;
}

/** A fresh store and raw access to its bytes. */
export interface ChainBackend {
  store: BlobStore;
  raw?: RawBytes;
  /** A second store over the same backend, as another process or isolate holds it. */
  other?: BlobStore;
  /** Under encryption at rest: the sealed bytes as the store below the encryption holds them. */
  sealed?: RawBytes;
}

const DAYS = ["2026-11-20", "2026-11-21", "2026-11-22"];
const PER_DAY = 4;
const decoder = new TextDecoder();
const encoder = new TextEncoder();

function movableClock(start: string): Clock & { set(time: string): void } {
  let now = new Date(start);
  return { now: () => now, set: (time) => { now = new Date(time); } };
}

const storeRaw = (store: BlobStore): RawBytes => ({
  read: (key) => store.get(key),
  write: (key, bytes) => store.put(key, bytes),
  remove: async (key) => {
    await store.delete(key);
  },
});

const dayKey = (day: string) => `audit-trails/u1-${day}.json`;
const HEAD = "audit-heads/u1.json";

/**
 * On a store whose head holds the entries its days may lack (files with fsync), a tail the head
 * holds is in flight (the next append restores it): the tampering goes on and takes those
 * copies out of the head too (they are not under its signature, only chained to its newest entry).
 */
async function dropHeld(raw: RawBytes): Promise<void> {
  const head = JSON.parse(decoder.decode((await raw.read(HEAD))!)) as Record<string, unknown>;
  if (head.held === undefined) return;
  const { held: _held, ...rest } = head;
  await raw.write(HEAD, encoder.encode(JSON.stringify(rest)));
}

/** The stored day's item lines (one per entry, as stored). */
async function lines(raw: RawBytes, day: string): Promise<string[]> {
  const text = decoder.decode((await raw.read(dayKey(day)))!);
  return text.split("\n").slice(1, -1).map((line) => line.replace(/,$/, ""));
}
async function writeLines(raw: RawBytes, day: string, items: string[]): Promise<void> {
  await raw.write(dayKey(day), encoder.encode(items.length === 0 ? "[]" : `[\n${items.join(",\n")}\n]`));
}

/** Runs the audit-chain cases against `make()` (a fresh, empty backend per call). */
export function auditChainSuite(
  name: string,
  make: () => Promise<ChainBackend> | ChainBackend,
  options: {
    /** Concurrent writers and appends per writer (default 32 x 50). */
    writers?: number;
    appends?: number;
    /**
     * False when the caller runs the concurrent case its own way (R2: POSTs to the audit
     * worker in workerd, so the bucket is driven inside workerd rather than from Node).
     */
    concurrent?: boolean;
  } = {},
): void {
  const writers = options.writers ?? 32;
  const appends = options.appends ?? 50;
  const total = writers * appends;
  describe(`audit chain on ${name}`, () => {
    async function trail(signingKey?: string) {
      const backend = await make();
      const raw = backend.raw ?? storeRaw(backend.store);
      const clock = movableClock(`${DAYS[0]}T09:00:00Z`);
      const keys = auditKeys({ auditSigningKey: signingKey });
      let n = 0;
      for (const day of DAYS) {
        for (let i = 0; i < PER_DAY; i++) {
          clock.set(`${day}T${String(9 + i).padStart(2, "0")}:00:00Z`);
          const entry = auditEntry({ details: { validationErrors: [], n: ++n } }) as ValidationAuditEntry;
          await appendAuditEntry(backend.store, clock, "u1", entry, { signer: keys.signer });
        }
      }
      const verify = async () =>
        verifyAuditTrail(await readAuditTrail(backend.store, "u1", DAYS), { publicKeys: await keys.publicKeys() });
      // As GET /audit/verify and `audit verify` without a range choose the days (the whole trail).
      const verifyWhole = async (userId = "u1") =>
        verifyAuditTrail(await readAuditTrail(backend.store, userId, await auditVerifyDays(backend.store, userId, undefined, undefined, clock.now())), {
          publicKeys: await keys.publicKeys(),
        });
      return { ...backend, raw, verify, verifyWhole, keys, clock };
    }

    it(`[${name}] a trail over three days verifies: seq 1..12 across days, the head names the newest`, async () => {
      const { verify, raw } = await trail();
      const result = await verify();
      expect(result.valid, JSON.stringify(result.firstBad)).toBe(true);
      expect(result.entries).toBe(12);
      expect(result.days.map((day) => [day.date, day.entries, day.valid])).toEqual(DAYS.map((day) => [day, PER_DAY, true]));
      expect(result.head).toMatchObject({ seq: 12, day: DAYS[2], signature: "unsigned" });
      const stored = (await lines(raw, DAYS[1]!)).map((line) => JSON.parse(line) as { seq: number });
      expect(stored.map((entry) => entry.seq)).toEqual([5, 6, 7, 8]);
    });

    it(`[${name}] an edited field of one stored entry is named: edited, seq 6`, async () => {
      const { verify, raw } = await trail();
      const items = await lines(raw, DAYS[1]!);
      expect(items[1]).toContain('"action":"case-create"');
      items[1] = items[1]!.replace('"action":"case-create"', '"action":"case-delete"');
      await writeLines(raw, DAYS[1]!, items);
      const result = await verify();
      expect(result.valid).toBe(false);
      expect(result.firstBad).toMatchObject({ date: DAYS[1], seq: 6, index: 1, reason: "edited" });
      expect(result.days.filter((day) => !day.valid).map((day) => day.date)).toEqual([DAYS[1]]);
    });

    it(`[${name}] a deleted entry is named: missing, seq 6`, async () => {
      const { verify, raw } = await trail();
      const items = await lines(raw, DAYS[1]!);
      items.splice(1, 1);
      await writeLines(raw, DAYS[1]!, items);
      expect((await verify()).firstBad).toMatchObject({ date: DAYS[1], seq: 6, reason: "missing" });
    });

    it(`[${name}] two swapped entries are named: reordered, seq 6`, async () => {
      const { verify, raw } = await trail();
      const items = await lines(raw, DAYS[1]!);
      [items[1], items[2]] = [items[2]!, items[1]!];
      await writeLines(raw, DAYS[1]!, items);
      expect((await verify()).firstBad).toMatchObject({ date: DAYS[1], seq: 6, index: 1, reason: "reordered" });
    });

    it(`[${name}] an inserted entry is named: inserted, a copy of seq 2 after seq 6`, async () => {
      const { verify, raw } = await trail();
      const first = await lines(raw, DAYS[0]!);
      const items = await lines(raw, DAYS[1]!);
      items.splice(2, 0, first[1]!);
      await writeLines(raw, DAYS[1]!, items);
      expect((await verify()).firstBad).toMatchObject({ date: DAYS[1], seq: 2, index: 2, reason: "inserted" });
    });

    it(`[${name}] the dropped last entries of a day are named: missing on the next day; of the newest day, tail dropped`, async () => {
      const { verify, raw } = await trail();
      await writeLines(raw, DAYS[1]!, (await lines(raw, DAYS[1]!)).slice(0, 2));
      expect((await verify()).firstBad).toMatchObject({ date: DAYS[2], seq: 7, index: 0, reason: "missing" });
      const again = await trail();
      await writeLines(again.raw, DAYS[2]!, (await lines(again.raw, DAYS[2]!)).slice(0, 1));
      await dropHeld(again.raw);
      expect((await again.verify()).firstBad).toMatchObject({ date: DAYS[2], seq: 10, reason: "tail dropped" });
    });

    it(`[${name}] a dropped whole day is named: missing seq 5 on the day after it; the newest day dropped: tail dropped`, async () => {
      const { verify, raw } = await trail();
      await raw.remove(dayKey(DAYS[1]!));
      expect((await verify()).firstBad).toMatchObject({ date: DAYS[2], seq: 5, reason: "missing" });
      const again = await trail();
      await again.raw.remove(dayKey(DAYS[2]!));
      await dropHeld(again.raw);
      expect((await again.verify()).firstBad).toMatchObject({ date: DAYS[2], seq: 9, reason: "tail dropped" });
    });

    it(`[${name}] a removed head hides nothing: the whole trail is read from its first stored day (head missing), and a chain started again after it is named (inserted)`, async () => {
      const { verifyWhole, raw, store, clock } = await trail();
      expect((await verifyWhole()).valid).toBe(true);
      await raw.remove(HEAD);
      const headless = await verifyWhole();
      expect(headless.valid).toBe(false);
      expect(headless.from).toBe(DAYS[0]);
      expect(headless.firstBad).toMatchObject({ reason: "head missing" });
      clock.set(`${DAYS[2]}T20:00:00Z`);
      await appendAuditEntry(store, clock, "u1", auditEntry() as ValidationAuditEntry);
      const restarted = await verifyWhole();
      expect(restarted.valid).toBe(false);
      expect(restarted.firstBad).toMatchObject({ date: DAYS[2], seq: 1, reason: "inserted" });
    });

    it(`[${name}] a day append whose answer is lost after it wrote keeps its entry, and the next acknowledged entry is stored`, async () => {
      const { store, clock, verify } = await trail();
      let lose = true;
      // The store's own append, then an error as if its reply were lost (a timeout after the write).
      const lossy = new Proxy(store, {
        get(target, property) {
          if (property === "appendToJsonArray") {
            return async (...args: Parameters<BlobStore["appendToJsonArray"]>) => {
              const count = await target.appendToJsonArray(...args);
              if (lose && args[0].startsWith("audit-trails/")) {
                lose = false;
                throw new Error("reply lost");
              }
              return count;
            };
          }
          const value: unknown = Reflect.get(target, property);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      clock.set(`${DAYS[2]}T20:00:00Z`);
      const numbered = (n: number) => auditEntry({ details: { validationErrors: [], n } }) as ValidationAuditEntry;
      await expect(appendAuditEntry(lossy, clock, "u1", numbered(13))).rejects.toThrow(/reply lost/);
      await appendAuditEntry(lossy, clock, "u1", numbered(14));
      await appendAuditEntry(store, clock, "u1", numbered(15));
      const result = await verify();
      expect(result.valid, JSON.stringify(result.firstBad)).toBe(true);
      expect(result.head?.seq).toBe(15);
      const served = (await readAuditEntryJson(store, "u1", [DAYS[2]!])).map((bytes) => (JSON.parse(decoder.decode(bytes)) as { details: { n: number } }).details.n);
      expect(served.slice(0, 3)).toEqual([15, 14, 13]);
    });

    it(`[${name}] a day past MAX_AUDIT_DAY_BYTES takes no more: the append is refused (429, nothing written), the service's own entry goes in the reserve once, the next day appends again`, async () => {
      const { store, clock, verifyWhole } = await trail();
      clock.set(`${DAYS[2]}T20:00:00Z`);
      const cap = { maxDayBytes: 8 * 1024 };
      const padded = (n: number) => auditEntry({ details: { validationErrors: [], n, note: "p".repeat(1000) } }) as ValidationAuditEntry;
      let refused: unknown;
      let accepted = 0;
      for (let n = 13; n < 40 && refused === undefined; n++) {
        await appendAuditEntry(store, clock, "u1", padded(n), cap).then(() => accepted++, (err: unknown) => (refused = err));
      }
      expect(refused).toBeInstanceOf(AuditDayFull);
      expect(STATUS_OF_KIND[(refused as AuditDayFull).kind]).toBe(429);
      const full = (await store.get(dayKey(DAYS[2]!)))!;
      // The day as stored: its entries, separators and brackets, within the cap.
      expect(full.length).toBeLessThanOrEqual(cap.maxDayBytes + 2);
      await expect(appendAuditEntry(store, clock, "u1", padded(50), cap)).rejects.toBeInstanceOf(AuditDayFull);
      expect(sameBytes((await store.get(dayKey(DAYS[2]!)))!, full)).toBe(true);
      // A head written before days were counted (no dayBytes): its day is measured, and the append refused all the same.
      const head = JSON.parse(decoder.decode((await store.get(HEAD))!)) as Record<string, unknown>;
      delete head.dayBytes;
      await store.put(HEAD, encoder.encode(JSON.stringify(head)));
      await expect(appendAuditEntry(store, clock, "u1", padded(51), cap)).rejects.toBeInstanceOf(AuditDayFull);
      expect(sameBytes((await store.get(dayKey(DAYS[2]!)))!, full)).toBe(true);
      // The service's record of the refusal uses the reserve, and is written once while it is the day's newest entry.
      const notice = auditEntry({ action: "security-violation", result: "blocked", details: { securityDetails: { reason: "audit day full" } } }) as ValidationAuditEntry;
      const once = { ...cap, reserve: true, unlessNewest: (entry: Record<string, unknown>) => entry.action === "security-violation" };
      const first = await appendAuditEntry(store, clock, "u1", notice, once);
      const second = await appendAuditEntry(store, clock, "u1", notice, once);
      expect(second).toEqual(first);
      // The service's own entries record what was already done (an upload, a deletion): never refused, past any reserve.
      const done = (n: number) => auditEntry({ action: "file-upload", details: { validationErrors: [], n, note: "u".repeat(60_000) } }) as ValidationAuditEntry;
      for (let n = 0; n < 20; n++) await appendAuditEntry(store, clock, "u1", done(n), { ...cap, reserve: true });
      clock.set("2026-11-23T00:00:01Z");
      await appendAuditEntry(store, clock, "u1", padded(60), cap);
      const result = await verifyWhole();
      expect(result.valid, JSON.stringify(result.firstBad)).toBe(true);
      expect(result.entries).toBe(12 + accepted + 2 + 20);
      expect(result.head?.seq).toBe(12 + accepted + 2 + 20);
    });

    it(`[${name}] verifyStoredTrail (day by day, entry by entry) answers what verifyAuditTrail over readAuditTrail answers, intact and tampered`, async () => {
      const { store, raw, clock, keys } = await trail();
      const days = () => auditVerifyDays(store, "u1", undefined, undefined, clock.now());
      const both = async () => {
        const publicKeys = await keys.publicKeys();
        const whole = await verifyAuditTrail(await readAuditTrail(store, "u1", await days()), { publicKeys });
        return { whole, streamed: await verifyStoredTrail(store, "u1", await days(), { publicKeys }) };
      };
      const intact = await both();
      expect(intact.streamed.valid).toBe(true);
      expect(intact.streamed).toEqual(intact.whole);
      // Entries 6 and 7 swapped (a jump whose seq comes later in the day), then a day file not in the line form.
      const stored = await lines(raw, DAYS[1]!);
      await writeLines(raw, DAYS[1]!, [stored[0]!, stored[2]!, stored[1]!, stored[3]!]);
      const swapped = await both();
      expect(swapped.streamed.firstBad?.reason).toBe("reordered");
      expect(swapped.streamed).toEqual(swapped.whole);
      await writeLines(raw, DAYS[1]!, [stored[0]!, stored[2]!, stored[3]!]);
      const missing = await both();
      expect(missing.streamed.firstBad?.reason).toBe("missing");
      expect(missing.streamed).toEqual(missing.whole);
    });

    it(`[${name}] an item written into a day behind the service's back does not take the next entry's place: the entry is kept after it`, async () => {
      const { store, raw, clock, verify } = await trail();
      await writeLines(raw, DAYS[2]!, [...(await lines(raw, DAYS[2]!)), JSON.stringify({ foreign: true })]);
      clock.set(`${DAYS[2]}T20:00:00Z`);
      const numbered = (n: number) => auditEntry({ details: { validationErrors: [], n } }) as ValidationAuditEntry;
      await appendAuditEntry(store, clock, "u1", numbered(13));
      await appendAuditEntry(store, clock, "u1", numbered(14));
      const served = (await readAuditEntryJson(store, "u1", [DAYS[2]!])).map((bytes) => (JSON.parse(decoder.decode(bytes)) as { details?: { n?: number } }).details?.n);
      expect(served.filter((n) => n !== undefined && n > 12)).toEqual([14, 13]);
      // The trail is named tampered where the foreign item sits.
      expect((await verify()).firstBad).toMatchObject({ date: DAYS[2], index: 4 });
    });

    it(`[${name}] a trail copied under another user's name is named: wrong user (or, sealed, unreadable)`, async () => {
      const { verifyWhole, raw } = await trail();
      for (const day of DAYS) await raw.write(`audit-trails/u2-${day}.json`, (await raw.read(dayKey(day)))!);
      await raw.write("audit-heads/u2.json", (await raw.read(HEAD))!);
      const copied = await verifyWhole("u2");
      expect(copied.valid).toBe(false);
      // Encrypted at rest, each object is bound to its key and does not open under another.
      expect(["wrong user", "unreadable", "head unreadable"]).toContain(copied.firstBad?.reason);
      if (!name.includes("encrypted")) expect(copied.firstBad?.reason).toBe("wrong user");
    });

    it(`[${name}] an append over another user's head copied in is refused (500), and neither trail changes`, async () => {
      const { store, raw, clock } = await trail();
      const before = await Promise.all(DAYS.map((day) => raw.read(dayKey(day))));
      await raw.write("audit-heads/u2.json", (await raw.read(HEAD))!);
      await expect(appendAuditEntry(store, clock, "u2", auditEntry({ userId: "u2" }) as ValidationAuditEntry)).rejects.toThrow(
        name.includes("encrypted") ? /integrity|another user/ : /another user's trail/,
      );
      expect(await Promise.all(DAYS.map((day) => raw.read(dayKey(day))))).toEqual(before);
      expect(await store.get("audit-trails/u2-2026-11-22.json")).toBeNull();
    });

    it(`[${name}] an entry moved to the end of the day before (its seq still in order) is named: reordered, received on another day`, async () => {
      const { verify, raw } = await trail();
      const later = await lines(raw, DAYS[1]!);
      await writeLines(raw, DAYS[0]!, [...(await lines(raw, DAYS[0]!)), later[0]!]);
      await writeLines(raw, DAYS[1]!, later.slice(1));
      const moved = await verify();
      expect(moved.firstBad).toMatchObject({ date: DAYS[0], seq: 5, index: 4, reason: "reordered" });
      expect(moved.firstBad?.message).toContain(`received on ${DAYS[1]}`);
    });

    it(`[${name}] a head overwritten with other bytes is named: head unreadable, not a failure`, async () => {
      const { verifyWhole, raw, store, clock, sealed } = await trail();
      const stored = sealed === undefined ? undefined : (await sealed.read(HEAD))!;
      await raw.write(HEAD, (await raw.read(dayKey(DAYS[0]!)))!);
      expect((await verifyWhole()).firstBad).toMatchObject({ reason: "head unreadable" });
      // Nor is it signed (encrypted at rest: a head that does not open), and nothing fails.
      const keys = auditKeys({ auditSigningKey: await newKey() });
      const signing = await signAuditHead(store, "u1", { signer: keys.signer!, publicKeys: await keys.publicKeys() }, clock.now());
      expect(signing).toMatchObject({ outcome: "tampered", verification: { firstBad: { reason: "head unreadable" } } });
      if (sealed !== undefined && stored !== undefined) {
        // A sealed head with one byte changed does not open: named, not thrown.
        const broken = stored.slice();
        const middle = broken.length >> 1;
        broken[middle] = broken[middle]! ^ 1;
        await sealed.write(HEAD, broken);
        expect((await verifyWhole()).firstBad).toMatchObject({ reason: "head unreadable" });
        expect((await signAuditHead(store, "u1", { signer: keys.signer!, publicKeys: await keys.publicKeys() }, clock.now())).outcome).toBe("tampered");
      }
    });

    it(`[${name}] a head replaced without the key is named: signature invalid; an older head put back: inserted`, async () => {
      const { privateKey } = await generateKeyPair("ES256", { extractable: true });
      const jwk = JSON.stringify(await exportJWK(privateKey));
      const signed = await trail(jwk);
      expect((await signed.verify()).head).toMatchObject({ seq: 12, signature: "valid" });
      // Hide the newest two entries: drop them and point the head at seq 10, keeping its signature.
      const head = JSON.parse(decoder.decode((await signed.raw.read(HEAD))!)) as Record<string, unknown>;
      const items = await lines(signed.raw, DAYS[2]!);
      const tenth = JSON.parse(items[1]!) as { hash: string };
      await writeLines(signed.raw, DAYS[2]!, items.slice(0, 2));
      await signed.raw.write(HEAD, encoder.encode(JSON.stringify({ ...head, seq: 10, hash: tenth.hash, index: 1, entry: JSON.parse(items[1]!) })));
      const forged = await signed.verify();
      expect(forged.valid).toBe(false);
      expect(forged.firstBad).toMatchObject({ date: DAYS[2], seq: 10, reason: "signature invalid" });
      expect(forged.head?.signature).toBe("invalid");

      const unsigned = await trail();
      const older = await unsigned.raw.read(HEAD);
      const clock = movableClock(`${DAYS[2]}T20:00:00Z`);
      await appendAuditEntry(unsigned.store, clock, "u1", auditEntry() as ValidationAuditEntry);
      await unsigned.raw.write(HEAD, older!);
      expect((await unsigned.verify()).firstBad).toMatchObject({ date: DAYS[2], seq: 13, reason: "inserted" });
    });

    /** Verified as the service does with AUDIT_SIGNING_KEY set: heads must be signed. */
    const verifySigned = async (store: BlobStore, keys: ReturnType<typeof auditKeys>) =>
      verifyAuditTrail(await readAuditTrail(store, "u1", DAYS), { publicKeys: await keys.publicKeys(), requireSignature: true });
    const newKey = async () => JSON.stringify(await exportJWK((await generateKeyPair("ES256", { extractable: true })).privateKey));

    /** Drops the newest two entries (seq 11, 12) and writes a head naming seq 10: `signature` as given (none: unsigned). */
    async function hideNewestTwo(raw: RawBytes, signature?: (facts: HeadFacts) => Promise<string>): Promise<void> {
      const { signature: _signature, held: _held, ...head } = JSON.parse(decoder.decode((await raw.read(HEAD))!)) as Record<string, unknown>;
      const items = await lines(raw, DAYS[2]!);
      const tenth = JSON.parse(items[1]!) as { hash: string };
      await writeLines(raw, DAYS[2]!, items.slice(0, 2));
      const forged: Record<string, unknown> = { ...head, seq: 10, hash: tenth.hash, index: 1, entry: tenth };
      if (signature !== undefined) forged.signature = await signature(headFacts(forged as unknown as HeadFacts));
      await raw.write(HEAD, encoder.encode(JSON.stringify(forged)));
    }

    it(`[${name}] a signed head replaced by an unsigned one (its tail dropped) is named: signature missing; later appends with the key do not sign over it`, async () => {
      const signed = await trail(await newKey());
      await hideNewestTwo(signed.raw);
      const forged = await verifySigned(signed.store, signed.keys);
      expect(forged.valid).toBe(false);
      expect(forged.firstBad).toMatchObject({ date: DAYS[2], seq: 10, reason: "signature missing" });
      expect(forged.head).toMatchObject({ seq: 10, signature: "unsigned" });
      // A verifier not told that heads are signed judges the chain alone, which the forgery keeps whole.
      expect((await signed.verify()).valid).toBe(true);
      // The next append (this writer, then another process's) stores its entry but vouches for nothing: still unsigned.
      signed.clock.set(`${DAYS[2]}T20:00:00Z`);
      await appendAuditEntry(signed.store, signed.clock, "u1", auditEntry() as ValidationAuditEntry, { signer: signed.keys.signer });
      await appendAuditEntry(signed.other ?? signed.store, signed.clock, "u1", auditEntry() as ValidationAuditEntry, { signer: signed.keys.signer });
      const after = await verifySigned(signed.store, signed.keys);
      expect(after.entries, JSON.stringify(after)).toBe(12);
      expect(after.head).toMatchObject({ seq: 12, signature: "unsigned" });
      expect(after.firstBad).toMatchObject({ date: DAYS[2], seq: 12, reason: "signature missing" });
    });

    it(`[${name}] a head signed with a key not configured is not signed over by the next append: signature invalid, then missing`, async () => {
      const signed = await trail(await newKey());
      const attacker = auditKeys({ auditSigningKey: await newKey() });
      await hideNewestTwo(signed.raw, (facts) => attacker.signer!.sign(canonicalJson(facts)));
      expect((await verifySigned(signed.store, signed.keys)).firstBad).toMatchObject({ seq: 10, reason: "signature invalid" });
      signed.clock.set(`${DAYS[2]}T20:00:00Z`);
      await appendAuditEntry(signed.other ?? signed.store, signed.clock, "u1", auditEntry() as ValidationAuditEntry, { signer: signed.keys.signer });
      const after = await verifySigned(signed.store, signed.keys);
      expect(after.head).toMatchObject({ seq: 11, signature: "unsigned" });
      expect(after.firstBad).toMatchObject({ seq: 11, reason: "signature missing" });
    });

    it(`[${name}] a trail begun unsigned stays unsigned under a key until its head is signed (sign-heads); then appends sign, with unsignedUntil`, async () => {
      const unsigned = await trail();
      const keys = auditKeys({ auditSigningKey: await newKey() });
      unsigned.clock.set(`${DAYS[2]}T20:00:00Z`);
      await appendAuditEntry(unsigned.store, unsigned.clock, "u1", auditEntry() as ValidationAuditEntry, { signer: keys.signer });
      expect((await verifySigned(unsigned.store, keys)).firstBad).toMatchObject({ seq: 13, reason: "signature missing" });
      const signing = { signer: keys.signer!, publicKeys: await keys.publicKeys() };
      // Every user with a head, found by listing the store's heads.
      expect((await signAuditHeads(unsigned.store, signing, unsigned.clock.now())).map(({ userId, outcome }) => [userId, outcome])).toEqual([["u1", "signed"]]);
      // Signing has begun here: an unsigned head may now be a forgery, so a second run must be forced.
      await expect(signAuditHeads(unsigned.store, signing, unsigned.clock.now())).rejects.toThrow(SigningBegun);
      expect((await signAuditHeads(unsigned.store, signing, unsigned.clock.now(), { force: true }))[0]?.outcome).toBe("already signed");
      const adopted = await verifySigned(unsigned.store, keys);
      expect(adopted.valid, JSON.stringify(adopted.firstBad)).toBe(true);
      expect(adopted.head).toMatchObject({ seq: 13, signature: "valid", unsignedUntil: 13 });
      // Signed from here on, by this writer and by another process (which checks the head's signature first).
      await appendAuditEntry(unsigned.store, unsigned.clock, "u1", auditEntry() as ValidationAuditEntry, { signer: keys.signer });
      await appendAuditEntry(unsigned.other ?? unsigned.store, unsigned.clock, "u1", auditEntry() as ValidationAuditEntry, { signer: keys.signer });
      const later = await verifySigned(unsigned.store, keys);
      expect(later.valid, JSON.stringify(later.firstBad)).toBe(true);
      expect(later.head).toMatchObject({ seq: 15, signature: "valid", unsignedUntil: 13 });
      // Its signature removed, the head still says unsignedUntil, which only a signed head carries.
      const { signature: _signature, ...stripped } = JSON.parse(decoder.decode((await unsigned.raw.read(HEAD))!)) as Record<string, unknown>;
      await unsigned.raw.write(HEAD, encoder.encode(JSON.stringify(stripped)));
      expect((await unsigned.verify()).firstBad).toMatchObject({ seq: 15, reason: "signature missing" });
      expect((await signAuditHead(unsigned.store, "u1", signing, unsigned.clock.now())).outcome).toBe("tampered");
    });

    if (options.concurrent ?? true) it(`[${name}] ${writers} writers x ${appends} concurrent appends: ${total} entries, one gap-free chain that verifies`, async () => {
      const backend = await make();
      const clock = movableClock(`${DAYS[0]}T12:00:00Z`);
      const stores = backend.other === undefined ? [backend.store] : [backend.store, backend.other];
      await Promise.all(Array.from({ length: writers }, async (_, writer) => {
        for (let i = 0; i < appends; i++) {
          const entry = auditEntry({ details: { validationErrors: [], writer, i } }) as ValidationAuditEntry;
          await appendAuditEntry(stores[writer % stores.length]!, clock, "u1", entry);
        }
      }));
      const input = await readAuditTrail(backend.store, "u1", [DAYS[0]!]);
      const result = await verifyAuditTrail(input);
      expect(result.valid, JSON.stringify(result.firstBad)).toBe(true);
      expect(result.entries).toBe(total);
      expect((input.days[0]!.entries as { seq: number }[]).map((entry) => entry.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      expect(result.head?.seq).toBe(total);
    }, 240_000);
  });
}
