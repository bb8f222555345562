/**
 * Encryption at rest in the real workerd (Miniflare): the R2 objects and KV values hold none
 * of what was written through the workers, everything reads back equal, a swapped object is
 * refused, and a wrong key stops the isolate at its first request with the reason.
 */
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { Miniflare } from "miniflare";
import { auditEntry } from "../../helpers/audit-entry.ts";
import { containsBytes, dataKey, keySetText } from "../../helpers/encryption.ts";
import { fixture, noisePng, uploadForm } from "../../helpers/images.ts";
import { SERVICE_STORES, useWorkerd } from "../../helpers/workerd-service.ts";
import type { KVNamespaceLike, R2BucketLike } from "../../../src/adapters/cloudflare/bindings.ts";

const SECRETS = { R2_KEY_SECRET: "r2-key", USER_DB_AUTH: "user-key", IMAGES_API_TOKEN: "image-token", HMAC_KEY: "hmac-key-0123", PUBLIC_URL: "http://w" };
const MARKER = "MARKER-workerd-0c41-EVIDENCE";
const BUCKETS = SERVICE_STORES.r2Buckets;
const workerd = useWorkerd("fa-workerd-enc-");
let scriptPath: string;

beforeAll(async () => {
  scriptPath = await workerd.bundle("all");
}, 60_000);

const start = (keys: string, persist: string): Promise<Miniflare> =>
  workerd.start({
    scriptPath,
    ...SERVICE_STORES,
    r2Persist: join(persist, "r2"),
    kvPersist: join(persist, "kv"),
    bindings: { ...SECRETS, DATA_ENCRYPTION_KEYS: keys },
  });

/** Every R2 object and KV value, as workerd stores them. */
async function dump(mf: Miniflare): Promise<Uint8Array[]> {
  const values: Uint8Array[] = [];
  for (const name of BUCKETS) {
    const bucket = (await mf.getR2Bucket(name)) as unknown as R2BucketLike;
    for (const object of (await bucket.list()).objects) values.push(new Uint8Array(await (await bucket.get(object.key))!.arrayBuffer()));
  }
  const kv = (await mf.getKVNamespace("USER_DB")) as unknown as KVNamespaceLike;
  for (const key of (await kv.list()).keys) values.push(new TextEncoder().encode((await kv.get(key.name, "text"))!));
  return values;
}

/** Uploads an image through the worker; its id and a signed delivery URL. */
async function uploadImage(mf: Miniflare, bytes: Uint8Array, name: string): Promise<{ id: string; signed: string }> {
  const bearer = { Authorization: `Bearer ${SECRETS.IMAGES_API_TOKEN}` };
  // The multipart body as bytes: Miniflare's fetch takes its own FormData class only.
  const form = new Request("http://w/", { method: "POST", body: uploadForm(bytes, name) });
  const multipart = { ...bearer, "Content-Type": form.headers.get("Content-Type")! };
  const uploaded = await mf.dispatchFetch("http://w/image/", { method: "POST", body: new Uint8Array(await form.arrayBuffer()), headers: multipart });
  expect(uploaded.status).toBe(200);
  const { result } = (await uploaded.json()) as { result: { id: string; variants: string[] } };
  const signed = await (await mf.dispatchFetch(`http://w/image/${encodeURIComponent(result.variants[0]!)}`, { headers: bearer })).text();
  return { id: result.id, signed };
}

describe("encryption at rest in workerd", () => {
  it("[workerd] a large image is sealed into R2 as a stream, reads back byte for byte, and a swapped one is refused", async () => {
    const mf = await start(keySetText(dataKey("k1")), join(workerd.dir(), "large"));
    const big = noisePng(5 * 64 * 1024 + 1000);
    const first = await uploadImage(mf, big, "big.png");
    const bucket = (await mf.getR2Bucket("STRIAE_IMAGES")) as unknown as R2BucketLike;
    const stored = new Uint8Array(await (await bucket.get(`images/${first.id}`))!.arrayBuffer());
    expect(stored.length).toBeGreaterThan(big.length);
    expect(containsBytes(stored, big.subarray(80_000, 80_032))).toBe(false);
    const delivered = await mf.dispatchFetch(first.signed);
    expect(delivered.status).toBe(200);
    expect(new Uint8Array(await delivered.arrayBuffer())).toEqual(big);
    const second = await uploadImage(mf, noisePng(2 * 64 * 1024), "other.png");
    await bucket.put(`images/${first.id}`, new Uint8Array(await (await bucket.get(`images/${second.id}`))!.arrayBuffer()));
    const swapped = await mf.dispatchFetch(first.signed);
    expect(swapped.status).toBe(500);
    expect(((await swapped.json()) as { message: string }).message).toContain(`images/${first.id} failed its integrity check`);
    await workerd.stop(mf);
  }, 120_000);

  it("[workerd] R2 and KV hold no plaintext, everything reads back equal, a swapped object is refused, a wrong key stops the isolate", async () => {
    const persist = join(workerd.dir(), "store");
    const keys = keySetText(dataKey("k1"));
    const mf = await start(keys, persist);
    const data = { "X-Custom-Auth-Key": SECRETS.R2_KEY_SECRET };
    const caseText = JSON.stringify({ caseNumber: "C-1", notes: MARKER });
    expect((await mf.dispatchFetch("http://w/data/u1/C-1/data.json", { method: "PUT", headers: data, body: caseText })).status).toBe(200);
    expect((await mf.dispatchFetch("http://w/data/u1/C-2/data.json", { method: "PUT", headers: data, body: '{"caseNumber":"C-2"}' })).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const entry = auditEntry({ details: { validationErrors: [], note: `${MARKER} ${i}` } });
      expect((await mf.dispatchFetch("http://w/audit/audit/?userId=u1", { method: "POST", headers: data, body: JSON.stringify(entry) })).status).toBe(200);
    }
    const user = { "X-Custom-Auth-Key": SECRETS.USER_DB_AUTH };
    const record = { email: "a@lab.example", firstName: "A", lastName: "B", company: MARKER, permitted: true };
    expect((await mf.dispatchFetch("http://w/user/u1", { method: "PUT", headers: user, body: JSON.stringify(record) })).status).toBeLessThan(300);
    const bearer = { Authorization: `Bearer ${SECRETS.IMAGES_API_TOKEN}` };
    // The multipart body as bytes: Miniflare's fetch takes its own FormData class only.
    const form = new Request("http://w/", { method: "POST", body: uploadForm(fixture("sample.png"), `${MARKER}.png`) });
    const multipart = { ...bearer, "Content-Type": form.headers.get("Content-Type")! };
    const uploaded = await mf.dispatchFetch("http://w/image/", { method: "POST", body: new Uint8Array(await form.arrayBuffer()), headers: multipart });
    expect(uploaded.status).toBe(200);
    const { result } = (await uploaded.json()) as { result: { variants: string[] } };
    const signed = await (await mf.dispatchFetch(`http://w/image/${encodeURIComponent(result.variants[0]!)}`, { headers: bearer })).text();

    const values = await dump(mf);
    expect(values.length).toBeGreaterThan(6);
    for (const value of values) {
      expect(containsBytes(value, new TextEncoder().encode(MARKER))).toBe(false);
      expect(containsBytes(value, fixture("sample.png").subarray(64, 96))).toBe(false);
    }
    expect(await (await mf.dispatchFetch("http://w/data/u1/C-1/data.json", { headers: data })).text()).toBe(caseText);
    const audit = (await (await mf.dispatchFetch("http://w/audit/audit/?userId=u1", { headers: data })).json()) as { entries: { details: { note: string } }[] };
    expect(audit.entries.map((entry) => entry.details.note).sort()).toEqual([`${MARKER} 0`, `${MARKER} 1`]);
    expect(((await (await mf.dispatchFetch("http://w/user/u1", { headers: user })).json()) as { company: string }).company).toBe(MARKER);
    const image = await mf.dispatchFetch(signed);
    expect(image.status).toBe(200);
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(fixture("sample.png"));

    const bucket = (await mf.getR2Bucket("STRIAE_DATA")) as unknown as R2BucketLike;
    const two = new Uint8Array(await (await bucket.get("u1/C-2/data.json"))!.arrayBuffer());
    await bucket.put("u1/C-1/data.json", two);
    const swapped = await mf.dispatchFetch("http://w/data/u1/C-1/data.json", { headers: data });
    expect(swapped.status).toBe(500);
    expect(((await swapped.json()) as { message: string }).message).toContain("u1/C-1/data.json failed its integrity check");
    await workerd.stop(mf);

    const wrong = await start(keySetText(dataKey("k1")), persist);
    const refused = await wrong.dispatchFetch("http://w/data/u1/C-2/data.json", { headers: data });
    expect(refused.status).toBe(500);
    expect(((await refused.json()) as { message: string }).message).toContain('cannot open the canary of the STRIAE_DATA store: Stored object encryption-canary cannot be decrypted: key "k1"');
  }, 120_000);
});
