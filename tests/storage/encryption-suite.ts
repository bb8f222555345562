/**
 * Encryption at rest, the same cases on every backend: what goes in through the workers'
 * API is nowhere in the backend's own bytes and comes back equal; an object swapped for
 * another in the backend is refused; key rotation and the migration of plaintext objects
 * keep everything readable; a wrong or missing key is refused by the canary.
 */
import { expect, it } from "vitest";
import { parseConfig } from "../../src/core/config/mod.ts";
import { createService, type ServicePorts } from "../../src/core/service/service.ts";
import { checkCanaries, encryptedStoresOf, encryptPorts } from "../../src/core/service/encrypted-ports.ts";
import { CanaryError, encryptAll, isSealed, Keyring, rotateKeys } from "../../src/core/encryption/mod.ts";
import { containsBytes, dataKey } from "../helpers/encryption.ts";
import { fixedClock, KEYS } from "../helpers/service.ts";
import { auditEntry } from "../helpers/audit-entry.ts";
import { fixture, noisePng, uploadForm } from "../helpers/images.ts";
import { CHUNK_BYTES } from "../../src/core/encryption/envelope.ts";
import type { BlobStore } from "../../src/core/ports.ts";

/** A backend under test: fresh raw ports, and every byte the backend itself holds for them. */
export interface EncryptionBackend {
  /** Fresh, empty stores (unwrapped). */
  ports(): Promise<ServicePorts>;
  /** Every value the backend holds for these ports, read from the backend directly (files, Redis values, objects). */
  dump(ports: ServicePorts): Promise<Uint8Array[]>;
}

const encoder = new TextEncoder();
const MARKER = "MARKER-7f3a9c-EVIDENCE";
const data = { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET };
const user = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH };
const bearer = { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` };

function serviceOver(raw: ServicePorts, keyring: Keyring | undefined) {
  const ports = encryptPorts({ ...raw, clock: fixedClock("2026-11-22T12:00:00Z") }, keyring);
  return createService(ports, parseConfig({ ...KEYS, PUBLIC_URL: "https://lab.example" }));
}
type App = ReturnType<typeof serviceOver>;

/** Writes a case, annotations, audit entries, a user record and an image, each carrying the marker. */
async function writeEvidence(app: App): Promise<{ caseText: string; imagePath: string }> {
  const caseText = JSON.stringify({ caseNumber: "C-1", notes: `${MARKER} case`, files: [] });
  expect((await app.request("/data/u1/C-1/data.json", { method: "PUT", headers: data, body: caseText })).status).toBe(200);
  const annotations = JSON.stringify({ annotations: [{ note: `${MARKER} annotation` }] });
  expect((await app.request("/data/u1/C-1/f1/data.json", { method: "PUT", headers: data, body: annotations })).status).toBe(200);
  for (let i = 0; i < 3; i++) {
    const entry = auditEntry({ details: { caseNumber: "C-1", validationErrors: [], note: `${MARKER} audit ${i}` } });
    expect((await app.request("/data/audit/?userId=u1", { method: "POST", headers: data, body: JSON.stringify(entry) })).status).toBe(200);
  }
  const record = { email: "a@lab.example", firstName: "A", lastName: "B", company: `${MARKER} lab`, permitted: true };
  expect((await app.request("/user/u1", { method: "PUT", headers: user, body: JSON.stringify(record) })).status).toBeLessThan(300);
  const uploaded = await app.request("/image/", { method: "POST", body: uploadForm(fixture("sample.png"), `${MARKER}.png`), headers: bearer });
  expect(uploaded.status).toBe(200);
  const { result } = (await uploaded.json()) as { result: { variants: string[] } };
  const signed = await (await app.request(`/image/${encodeURIComponent(result.variants[0]!)}`, { headers: bearer })).text();
  const url = new URL(signed);
  return { caseText, imagePath: `${url.pathname}${url.search}` };
}

/** Reads everything back through the API and checks it equals what was written. */
async function readEvidence(app: App, written: { caseText: string; imagePath: string }, entries = 3): Promise<void> {
  const stored = await app.request("/data/u1/C-1/data.json", { headers: data });
  expect(stored.status).toBe(200);
  expect(await stored.text()).toBe(written.caseText);
  expect(await (await app.request("/data/u1/C-1/f1/data.json", { headers: data })).text()).toContain(`${MARKER} annotation`);
  const audit = (await (await app.request("/data/audit/?userId=u1", { headers: data })).json()) as { entries: { details: { note?: string } }[] };
  expect(audit.entries.filter((entry) => entry.details.note?.startsWith(MARKER)).length).toBe(entries);
  const record = (await (await app.request("/user/u1", { headers: user })).json()) as { company: string };
  expect(record.company).toBe(`${MARKER} lab`);
  const image = await app.request(written.imagePath);
  expect(image.status).toBe(200);
  expect(new Uint8Array(await image.arrayBuffer())).toEqual(fixture("sample.png"));
}

/** A distinctive run of the image's own bytes (its pixel data), which must not be stored. */
const imageSample = () => fixture("sample.png").subarray(64, 96);

async function expectNoPlaintext(backend: EncryptionBackend, raw: ServicePorts): Promise<void> {
  const values = await backend.dump(raw);
  expect(values.length).toBeGreaterThan(6);
  const marker = encoder.encode(MARKER);
  for (const value of values) {
    expect(containsBytes(value, marker)).toBe(false);
    expect(containsBytes(value, imageSample())).toBe(false);
  }
}

/** Runs the encryption cases on one backend. */
export function encryptionSuite(name: string, backend: EncryptionBackend, timeout = 30_000): void {
  it(`[${name}] stores none of what is written through the API, and reads it all back equal`, async () => {
    const raw = await backend.ports();
    const keyring = new Keyring([dataKey("k1")]);
    await checkCanaries(raw, keyring);
    const app = serviceOver(raw, keyring);
    const written = await writeEvidence(app);
    await readEvidence(app, written);
    await expectNoPlaintext(backend, raw);
    // The same bytes written in the clear do hold the marker: the check above can fail.
    await raw.data.put("u9/C-9/data.json", encoder.encode(MARKER));
    expect((await backend.dump(raw)).some((value) => containsBytes(value, encoder.encode(MARKER)))).toBe(true);
  }, timeout);

  it(`[${name}] an array document reads back byte for byte, in the one-item-per-line form (sealed item by item) or any other (sealed whole)`, async () => {
    const raw = await backend.ports();
    const keyring = new Keyring([dataKey("k1")]);
    await checkCanaries(raw, keyring);
    const app = serviceOver(raw, keyring);
    for (const [key, text] of [["C-2", `[{"a":"${MARKER}"},{"b":2}]`], ["C-3", `[\n{"a":"${MARKER}"},\n{"b":2}\n]`], ["C-4", `[ 1, "${MARKER}" ]`]]) {
      expect((await app.request(`/data/u1/${key}/data.json`, { method: "PUT", headers: data, body: text })).status).toBe(200);
      expect(await (await app.request(`/data/u1/${key}/data.json`, { headers: data })).text(), text).toBe(text);
    }
    await expectNoPlaintext(backend, raw);
  }, timeout);

  it(`[${name}] refuses an object swapped for another in the store, and an audit entry moved to another day`, async () => {
    const raw = await backend.ports();
    const keyring = new Keyring([dataKey("k1")]);
    const app = serviceOver(raw, keyring);
    for (const caseNumber of ["C-1", "C-2"]) {
      await app.request(`/data/u1/${caseNumber}/data.json`, { method: "PUT", headers: data, body: JSON.stringify({ caseNumber }) });
    }
    const one = (await raw.data.get("u1/C-1/data.json"))!;
    const two = (await raw.data.get("u1/C-2/data.json"))!;
    await raw.data.put("u1/C-1/data.json", two);
    await raw.data.put("u1/C-2/data.json", one);
    for (const caseNumber of ["C-1", "C-2"]) {
      const response = await app.request(`/data/u1/${caseNumber}/data.json`, { headers: data });
      expect(response.status).toBe(500);
      const body = (await response.json()) as { code: string; message: string };
      expect(body.code).toBe("SERVER_ERROR");
      expect(body.message).toMatch(new RegExp(`u1/${caseNumber}/data.json failed its integrity check`));
    }
    // A sealed audit day copied under another user's key.
    await app.request("/data/audit/?userId=u1", { method: "POST", headers: data, body: JSON.stringify(auditEntry()) });
    const day = (await raw.audit.get("audit-trails/u1-2026-11-22.json"))!;
    await raw.audit.put("audit-trails/u2-2026-11-22.json", day);
    // Each of its entries is refused where it stands (reported unreadable, never served); verification names it.
    const moved = await app.request("/data/audit/?userId=u2", { headers: data });
    expect(moved.status).toBe(200);
    const { entries } = (await moved.json()) as { entries: { unreadable?: boolean; reason?: string; action?: string }[] };
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ unreadable: true, reason: expect.stringMatching(/failed its integrity check/) });
    const verdict = await app.request("/data/audit/verify?userId=u2&startDate=2026-11-22&endDate=2026-11-22", { headers: data });
    expect(verdict.status).toBe(200);
    expect(await verdict.json()).toMatchObject({ valid: false, firstBad: { reason: "unreadable" } });
  }, timeout);

  it(`[${name}] an earlier sealed version of a document put back in the store is refused, never served as current (its history names another)`, async () => {
    const raw = await backend.ports();
    const clock = fixedClock("2026-11-22T12:00:00Z");
    const app = createService(encryptPorts({ ...raw, clock }, new Keyring([dataKey("k1")])), parseConfig({ ...KEYS, PUBLIC_URL: "https://lab.example" }));
    const get = async () => {
      const response = await app.request("/data/u1/C-1/data.json", { headers: data });
      return { status: response.status, text: await response.text() };
    };
    const put = (version: number) => app.request("/data/u1/C-1/data.json", { method: "PUT", headers: data, body: JSON.stringify({ caseNumber: "C-1", version }) });
    expect((await put(1)).status).toBe(200);
    const first = (await raw.data.get("u1/C-1/data.json"))!;
    expect((await put(2)).status).toBe(200);
    expect(await get()).toEqual({ status: 200, text: JSON.stringify({ caseNumber: "C-1", version: 2 }) });
    await raw.data.put("u1/C-1/data.json", first);
    // Within a minute of the write it may be another process's write still settling: served as it is.
    expect((await get()).status).toBe(200);
    clock.set("2026-11-22T12:01:00Z");
    const refused = await get();
    expect(refused.status).toBe(500);
    expect(JSON.parse(refused.text)).toMatchObject({ code: "SERVER_ERROR", details: { key: "u1/C-1/data.json", version: 1, current: 2 } });
    expect(refused.text).toContain("failed its integrity check: it is version 1, and its history names version 2 as current");
    // A deleted document put back is refused too; the next write stands.
    expect((await app.request("/data/u1/C-1/data.json", { method: "DELETE", headers: data })).status).toBe(200);
    await raw.data.put("u1/C-1/data.json", first);
    clock.set("2026-11-22T12:02:00Z");
    expect((await get()).status).toBe(500);
    expect((await put(3)).status).toBe(200);
    expect(await get()).toEqual({ status: 200, text: JSON.stringify({ caseNumber: "C-1", version: 3 }) });
  }, timeout);

  it(`[${name}] a document and a user record read before (their plaintexts kept) are still refused once swapped or altered in the store, and read back what another process rewrote or re-wrapped`, async () => {
    const raw = await backend.ports();
    const k1 = dataKey("k1");
    const k2 = dataKey("k2");
    const keyring = new Keyring([k1, k2]);
    const app = serviceOver(raw, keyring);
    const get = async (caseNumber: string) => {
      const response = await app.request(`/data/u1/${caseNumber}/data.json`, { headers: data });
      return { status: response.status, text: await response.text() };
    };
    for (const caseNumber of ["C-1", "C-2"]) {
      await app.request(`/data/u1/${caseNumber}/data.json`, { method: "PUT", headers: data, body: JSON.stringify({ caseNumber, version: 1 }) });
      // Kept from the second read on, served from memory on the third.
      for (let i = 0; i < 3; i++) expect(await get(caseNumber)).toEqual({ status: 200, text: JSON.stringify({ caseNumber, version: 1 }) });
    }
    expect(keyring.opened.size).toBeGreaterThanOrEqual(2);
    const one = (await raw.data.get("u1/C-1/data.json"))!;
    const two = (await raw.data.get("u1/C-2/data.json"))!;
    await raw.data.put("u1/C-1/data.json", two);
    await raw.data.put("u1/C-2/data.json", one);
    for (const caseNumber of ["C-1", "C-2"]) {
      const swapped = await get(caseNumber);
      expect(swapped.status).toBe(500);
      expect(swapped.text).toMatch(new RegExp(`u1/${caseNumber}/data.json failed its integrity check`));
    }
    // Put back, it reads again; one bit of its body flipped, it is refused.
    await raw.data.put("u1/C-1/data.json", one);
    expect((await get("C-1")).status).toBe(200);
    const altered = one.slice();
    altered[altered.length - 20]! ^= 1;
    await raw.data.put("u1/C-1/data.json", altered);
    expect((await get("C-1")).status).toBe(500);
    // Another process, with the same keys, rewrites the case: this one reads the new text.
    await raw.data.put("u1/C-1/data.json", one);
    expect((await get("C-1")).status).toBe(200);
    const other = serviceOver(raw, new Keyring([k1, k2]));
    await other.request("/data/u1/C-1/data.json", { method: "PUT", headers: data, body: JSON.stringify({ caseNumber: "C-1", version: 2 }) });
    expect(await get("C-1")).toEqual({ status: 200, text: JSON.stringify({ caseNumber: "C-1", version: 2 }) });
    // Another process rotates to k2: the re-wrapped envelope is new bytes, opened under k2, same text.
    const before = (await raw.data.get("u1/C-1/data.json"))!;
    expect((await rotateKeys(encryptedStoresOf(raw), new Keyring([k2, k1]))).changed).toBeGreaterThan(0);
    expect(await raw.data.get("u1/C-1/data.json")).not.toEqual(before);
    expect(await get("C-1")).toEqual({ status: 200, text: JSON.stringify({ caseNumber: "C-1", version: 2 }) });
    // User records: read, then swapped in the store, refused.
    for (const id of ["u1", "u2"]) {
      const record = { email: `${id}@lab.example`, firstName: id, lastName: "B", company: "Lab", permitted: true };
      expect((await app.request(`/user/${id}`, { method: "PUT", headers: user, body: JSON.stringify(record) })).status).toBeLessThan(300);
      for (let i = 0; i < 3; i++) expect((await app.request(`/user/${id}`, { headers: user })).status).toBe(200);
    }
    const u1 = (await raw.users.get("u1"))!;
    await raw.users.put("u1", (await raw.users.get("u2"))!);
    await raw.users.put("u2", u1);
    for (const id of ["u1", "u2"]) expect((await app.request(`/user/${id}`, { headers: user })).status).toBe(500);
  }, timeout);

  it(`[${name}] an envelope with a byte of its magic or its version altered is refused, never served as plaintext`, async () => {
    const raw = await backend.ports();
    const clock = fixedClock("2026-11-22T12:00:00Z");
    const app = createService(encryptPorts({ ...raw, clock }, new Keyring([dataKey("k1")])), parseConfig({ ...KEYS, PUBLIC_URL: "https://lab.example" }));
    const text = JSON.stringify({ caseNumber: "C-9", files: [] });
    await app.request("/data/u1/C-9/data.json", { method: "PUT", headers: data, body: text });
    const sealed = (await raw.data.get("u1/C-9/data.json"))!;
    // One bit flipped in each of the magic's six bytes and the version's, then an unknown version.
    const damaged = [0, 1, 2, 3, 4, 5, 6].map((at) => {
      const copy = sealed.slice();
      copy[at]! ^= 1;
      return copy;
    });
    const unknownVersion = sealed.slice();
    unknownVersion[6] = 9;
    for (const [i, bytes] of [...damaged, unknownVersion].entries()) {
      await raw.data.put("u1/C-9/data.json", bytes);
      const response = await app.request("/data/u1/C-9/data.json", { headers: data });
      expect(response.status, `damaged #${i}`).toBe(500);
      expect(((await response.json()) as { message: string }).message).toMatch(/u1\/C-9\/data.json failed its integrity check/);
    }
    await raw.data.put("u1/C-9/data.json", sealed);
    expect(await (await app.request("/data/u1/C-9/data.json", { headers: data })).text()).toBe(text);
  }, timeout);

  it(`[${name}] an audit day with one entry altered in the store serves the others and names that one, on reading and verifying`, async () => {
    const raw = await backend.ports();
    const clock = fixedClock("2026-11-22T12:00:00Z");
    const app = createService(encryptPorts({ ...raw, clock }, new Keyring([dataKey("k1")])), parseConfig({ ...KEYS, PUBLIC_URL: "https://lab.example" }));
    for (const action of ["case-create", "case-rename", "case-delete"]) {
      const posted = await app.request("/data/audit/?userId=u1", { method: "POST", headers: data, body: JSON.stringify(auditEntry({ action })) });
      expect(posted.status).toBe(200);
    }
    const key = "audit-trails/u1-2026-11-22.json";
    const day = new TextDecoder().decode((await raw.audit.get(key))!);
    // One character of the second entry's sealed text changed (base64 stays base64).
    const lines = day.split("\n");
    const second = lines[2]!;
    const at = second.length - 20;
    lines[2] = second.slice(0, at) + (second[at] === "A" ? "B" : "A") + second.slice(at + 1);
    await raw.audit.put(key, new TextEncoder().encode(lines.join("\n")));
    const read = await app.request("/data/audit/?userId=u1&startDate=2026-11-22&endDate=2026-11-22", { headers: data });
    expect(read.status).toBe(200);
    const { entries, total } = (await read.json()) as { entries: Record<string, unknown>[]; total: number };
    expect(total).toBe(3);
    // Newest first: the third and the first are served, the second is reported in its place.
    expect(entries.map((entry) => entry.unreadable === true ? "unreadable" : entry.action)).toEqual(["case-delete", "unreadable", "case-create"]);
    expect(entries[1]).toMatchObject({ index: 1, reason: expect.stringMatching(/failed its integrity check/) });
    const verdict = await app.request("/data/audit/verify?userId=u1&startDate=2026-11-22&endDate=2026-11-22", { headers: data });
    expect(verdict.status).toBe(200);
    expect(await verdict.json()).toMatchObject({ valid: false, firstBad: { reason: "unreadable", seq: 2 } });
  }, timeout);

  it(`[${name}] a large image is sealed into the store chunk by chunk, reads back byte for byte, and a swapped one is refused`, async () => {
    const raw = await backend.ports();
    const keyring = new Keyring([dataKey("k1")]);
    // The image store as the backend's own, recording the largest value and stream piece it is handed.
    let largestPut = 0;
    let largestPiece = 0;
    const measure = () => new TransformStream<Uint8Array, Uint8Array>({
      transform(piece, controller) {
        largestPiece = Math.max(largestPiece, piece.length);
        controller.enqueue(piece);
      },
    });
    const images: BlobStore = {
      ...raw.images,
      put: (key, value) => {
        largestPut = Math.max(largestPut, value.length);
        return raw.images.put(key, value);
      },
      putStream: (key, size, body) => raw.images.putStream!(key, size, body.pipeThrough(measure())),
    };
    const app = serviceOver({ ...raw, images }, keyring);
    const big = noisePng(5 * CHUNK_BYTES + 1000);
    const uploaded = await app.request("/image/", { method: "POST", body: uploadForm(big, "big.png"), headers: bearer });
    expect(uploaded.status).toBe(200);
    const { result } = (await uploaded.json()) as { result: { id: string; variants: string[] } };
    // No sealed copy of the image was made whole: one sealed chunk (and its tag) at most per step.
    expect(largestPiece).toBeGreaterThan(0);
    expect(largestPiece).toBeLessThanOrEqual(CHUNK_BYTES + 16);
    expect(largestPut).toBeLessThan(CHUNK_BYTES);
    const signed = new URL(await (await app.request(`/image/${encodeURIComponent(result.variants[0]!)}`, { headers: bearer })).text());
    const delivered = await app.request(`${signed.pathname}${signed.search}`);
    expect(delivered.status).toBe(200);
    expect(new Uint8Array(await delivered.arrayBuffer())).toEqual(big);
    const stored = (await raw.images.get(`images/${result.id}`))!;
    expect(stored.length).toBeGreaterThan(big.length);
    expect(containsBytes(stored, big.subarray(80_000, 80_032))).toBe(false);
    // Another image's sealed bytes put under this one's key: refused, not served.
    const other = noisePng(2 * CHUNK_BYTES);
    const second = (await (await app.request("/image/", { method: "POST", body: uploadForm(other, "other.png"), headers: bearer })).json()) as { result: { id: string } };
    await raw.images.put(`images/${result.id}`, (await raw.images.get(`images/${second.result.id}`))!);
    const swapped = await app.request(`${signed.pathname}${signed.search}`);
    expect(swapped.status).toBe(500);
    expect(((await swapped.json()) as { message: string }).message).toMatch(new RegExp(`images/${result.id} failed its integrity check`));
  }, timeout);

  it(`[${name}] rotation: a new first key writes, the old key still reads, keys rotate re-wraps everything`, async () => {
    const raw = await backend.ports();
    const old = dataKey("old");
    const fresh = dataKey("new");
    const first = new Keyring([old]);
    await checkCanaries(raw, first);
    const written = await writeEvidence(serviceOver(raw, first));
    // The new key first: the canary (under "old") still opens, everything reads, new writes use "new".
    const both = new Keyring([fresh, old]);
    await checkCanaries(raw, both);
    const during = serviceOver(raw, both);
    await readEvidence(during, written);
    await during.request("/data/audit/?userId=u1", { method: "POST", headers: data, body: JSON.stringify(auditEntry({ details: { validationErrors: [], note: `${MARKER} audit 3` } })) });
    // Without the old key, what it wrapped cannot be opened.
    await expect(checkCanaries(raw, new Keyring([fresh]))).rejects.toThrow(/encrypted under key "old"/);
    const seen: number[] = [];
    const result = await rotateKeys(encryptedStoresOf(raw), both, (state) => seen.push(state.done));
    expect(result.changed).toBeGreaterThan(5);
    expect(seen.at(-1)).toBe(result.total);
    // Again: nothing left to re-wrap (a stopped run is resumed by running it again).
    expect((await rotateKeys(encryptedStoresOf(raw), both)).changed).toBe(0);
    const only = new Keyring([fresh]);
    await checkCanaries(raw, only);
    await readEvidence(serviceOver(raw, only), written, 4);
    await expectNoPlaintext(backend, raw);
  }, timeout);

  it(`[${name}] migration: plaintext written before stays readable, is sealed on its next write, and encrypt-all seals the rest`, async () => {
    const raw = await backend.ports();
    await checkCanaries(raw, undefined);
    const written = await writeEvidence(serviceOver(raw, undefined));
    expect((await backend.dump(raw)).some((value) => containsBytes(value, encoder.encode(MARKER)))).toBe(true);
    const keyring = new Keyring([dataKey("k1")]);
    await checkCanaries(raw, keyring);
    const app = serviceOver(raw, keyring);
    await readEvidence(app, written);
    // The next write of the case seals it; an append to a plaintext day seals only the new entry.
    await app.request("/data/u1/C-1/data.json", { method: "PUT", headers: data, body: written.caseText });
    expect(isSealed((await raw.data.get("u1/C-1/data.json"))!)).toBe(true);
    expect(isSealed((await raw.data.get("u1/C-1/f1/data.json"))!)).toBe(false);
    await app.request("/data/audit/?userId=u1", { method: "POST", headers: data, body: JSON.stringify(auditEntry({ details: { validationErrors: [], note: `${MARKER} audit 3` } })) });
    await readEvidence(app, written, 4);
    const result = await encryptAll(encryptedStoresOf(raw), keyring);
    expect(result.changed).toBeGreaterThan(3);
    expect((await encryptAll(encryptedStoresOf(raw), keyring)).changed).toBe(0);
    await readEvidence(app, written, 4);
    await expectNoPlaintext(backend, raw);
    // Once encrypted, starting without the key is refused by the canary.
    await expect(checkCanaries(raw, undefined)).rejects.toThrow(CanaryError);
  }, timeout);

  it(`[${name}] after encrypt-all, plaintext written into the store (a forged case, user record or audit head) is refused, not served`, async () => {
    const raw = await backend.ports();
    const key = dataKey("k1");
    const keyring = new Keyring([key]);
    await checkCanaries(raw, keyring);
    const written = await writeEvidence(serviceOver(raw, keyring));
    const forgedCase = JSON.stringify({ caseNumber: "C-1", files: [], note: "FORGED" });
    // Before encrypt-all, plaintext may still be data written before encryption was turned on: served.
    await raw.data.put("u1/C-9/data.json", encoder.encode(forgedCase));
    expect(await (await serviceOver(raw, keyring).request("/data/u1/C-9/data.json", { headers: data })).text()).toBe(forgedCase);
    await encryptAll(encryptedStoresOf(raw), keyring);
    // A restart: a fresh keyring reads the canaries again, which now say every value is sealed.
    const restarted = new Keyring([key]);
    await checkCanaries(raw, restarted);
    const app = serviceOver(raw, restarted);
    await readEvidence(app, written);
    // Written into the store by someone without the key, over sealed values and beside them.
    await raw.data.put("u1/C-1/data.json", encoder.encode(forgedCase));
    await raw.data.put("u1/C-2/data.json", encoder.encode(forgedCase));
    await raw.users.put("u1", JSON.stringify({ email: "evil@x.example", firstName: "A", lastName: "B", company: "C", permitted: true, cases: [] }));
    await raw.audit.put("audit-heads/u1.json", encoder.encode(JSON.stringify({ format: "forensic-annotation/audit-head@1", userId: "u1", seq: 1 })));
    for (const path of ["/data/u1/C-1/data.json", "/data/u1/C-2/data.json"]) {
      const refused = await app.request(path, { headers: data });
      expect(refused.status, path).toBe(500);
      expect(await refused.json(), path).toMatchObject({ message: expect.stringMatching(/is not encrypted, though every object of its store was/) });
    }
    expect((await app.request("/user/u1", { headers: user })).status).toBe(500);
    const verified = (await (await app.request("/audit/audit/verify?userId=u1", { headers: data })).json()) as { valid: boolean };
    expect(verified.valid).toBe(false);
    // An empty array stays what the service writes in the clear (nothing to hide), and reads as it is.
    expect((await app.request("/data/u2/C-3/list.json", { method: "PUT", headers: data, body: "[]" })).status).toBe(200);
    expect(await (await app.request("/data/u2/C-3/list.json", { headers: data })).text()).toBe("[]");
  }, timeout);

  it(`[${name}] a wrong key is refused by the canary with the reason`, async () => {
    const raw = await backend.ports();
    await checkCanaries(raw, new Keyring([dataKey("k1")]));
    const wrong = checkCanaries(raw, new Keyring([dataKey("k1")]));
    await expect(wrong).rejects.toThrow(CanaryError);
    await expect(wrong).rejects.toThrow(/cannot open the canary of the data store.*key "k1" of DATA_ENCRYPTION_KEYS is not the key it was encrypted with/);
  }, timeout);
}
