/**
 * Two service processes over one compare-and-swap store (R2, S3, Redis, Deno KV): the reviewer's
 * `verified` signing runs in one, the owner's write of the same annotations in the other and lands
 * between the signing's check and its conditional write. The store retries the signing's update,
 * which then finds the file amended: 409, and nothing of the signature stays listed.
 */
import { describe, expect, it } from "vitest";
import { createStorage } from "unstorage";
import memoryDriver from "unstorage/drivers/memory";
import { AUDIENCE, ISSUER } from "../../helpers/identity.ts";
import { fixedClock, KEYS } from "../../helpers/service.ts";
import { memoryVersionedBackend } from "../../helpers/memory-versioned-backend.ts";
import { parseConfig } from "../../../src/core/config/mod.ts";
import { createService } from "../../../src/core/service/service.ts";
import { createVersionedBlobStore, createVersionedKvStore } from "../../../src/core/storage/versioned-store.ts";
import { createBlobStore } from "../../../src/core/storage/unstorage-stores.ts";
import { reviewKeys } from "./review-keys.ts";

const NOW = "2026-11-22T12:00:00.000Z";
const nowSeconds = Date.parse(NOW) / 1000;
type Json = Record<string, any>;

describe("review signing over a store two processes share", () => {
  const keys = reviewKeys();

  /** Two service processes over one compare-and-swap store, `landBefore` run before each conditional write of the data store. */
  const twoProcesses = (history: "on" | "off") => {
    const hooks: { landBefore?: (key: string) => Promise<void> } = {};
    const data = memoryVersionedBackend({ beforePutIf: async (key) => await hooks.landBefore?.(key) });
    const [audit, users] = [memoryVersionedBackend(), memoryVersionedBackend()];
    const images = createBlobStore(createStorage({ driver: memoryDriver() }));
    const clock = fixedClock(NOW);
    const config = parseConfig({ ...KEYS, AUTH_JWKS_URL: keys.idp.jwksUrl, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, RATE_LIMITS: "off", AUDIT_SIGNING_KEY: keys.signingKey, DATA_HISTORY: history });
    const process = () => createService({ data: createVersionedBlobStore(data), audit: createVersionedBlobStore(audit), users: createVersionedKvStore(users), images, clock }, config);
    return { hooks, clock, first: process(), second: process() };
  };

  for (const history of ["on", "off"] as const) {
    it(`DATA_HISTORY=${history}: a repeat taking over a signing past its lease while the first request is still at work writes one confirmation; both answer, the review completes once`, async () => {
      const { hooks, clock, first, second } = twoProcesses(history);
      const token = async (uid: string, authTime = nowSeconds - 10) => ({ "X-Identity-Token": await keys.idp.token(uid, { lab: "Lab A", roles: uid.startsWith("rev") ? ["reviewer"] : ["examiner"], auth_time: authTime }) });
      const headers = async () => ({ "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET, ...(await token("owner")) });
      expect((await first.request("/data/owner/C-1/data.json", { method: "PUT", headers: await headers(), body: JSON.stringify({ caseNumber: "C-1", createdAt: NOW, files: [{ id: "f1", originalFilename: "a.png", uploadedAt: NOW }] }) })).status).toBe(200);
      expect((await first.request("/data/owner/C-1/f1/data.json", { method: "PUT", headers: await headers(), body: JSON.stringify({ leftCase: "C-1", includeConfirmation: false, supportLevel: "ID", updatedAt: NOW }) })).status).toBe(200);
      expect((await first.request("/review/inbox/rev1", { headers: await token("rev1") })).status).toBe(200);
      const id = ((await (await first.request("/review/cases/owner/C-1", { method: "POST", headers: await token("owner"), body: JSON.stringify({ reviewer: "rev1", kind: "verification", blind: false }) })).json()) as Json).id as string;
      const sign = async (app: typeof first, authTime?: number) =>
        await app.request(`/review/r/${id}/signatures`, { method: "POST", headers: await token("rev1", authTime), body: JSON.stringify({ fileId: "f1", meaning: "verified", printedName: "Rita Reviewer" }) });
      const target = history === "on" ? "#history/owner/C-1/f1/data.json/head" : "owner/C-1/f1/data.json";
      // The first request stops just before its conditional write; a minute later the reviewer repeats it on the other process.
      let repeated: Response | undefined;
      hooks.landBefore = async (key) => {
        if (!key.endsWith(target) || repeated !== undefined) return;
        clock.set("2026-11-22T12:01:00.000Z");
        repeated = await sign(second, nowSeconds + 50);
      };
      const firstAnswer = await sign(first);
      expect(repeated?.status).toBe(200);
      expect(firstAnswer.status).toBe(201);
      const annotations = (await (await first.request("/data/owner/C-1/f1/data.json", { headers: await headers() })).json()) as Json;
      const view = (await (await first.request(`/review/r/${id}`, { headers: await token("owner", nowSeconds + 50) })).json()) as Json;
      expect(view.review).toMatchObject({ state: "completed", signing: [], confirmations: [{ fileId: "f1", confirmationId: annotations.confirmationData.confirmationId }] });
      expect(view.review.signatures).toHaveLength(1);
      if (history === "on") {
        const versions = ((await (await first.request("/data/owner/C-1/f1/data.json?history", { headers: await headers() })).json()) as Json).versions as Json[];
        expect(versions.map((version) => version.writtenBy)).toEqual(["owner", "rev1"]);
      }
      const trail = ((await (await first.request("/audit/audit/?userId=owner", { headers: await headers() })).json()) as Json).entries as Json[];
      expect(trail.filter((entry) => entry.details?.reviewDetails?.step === "completion")).toHaveLength(1);
    });


    it(`DATA_HISTORY=${history}: the owner's write lands between the signing's check and its conditional write: 409, no signature listed, the owner's version kept`, async () => {
      let landBefore: ((key: string) => Promise<void>) | undefined;
      const data = memoryVersionedBackend({ beforePutIf: async (key) => await landBefore?.(key) });
      const audit = memoryVersionedBackend();
      const users = memoryVersionedBackend();
      const images = createBlobStore(createStorage({ driver: memoryDriver() }));
      const config = parseConfig({ ...KEYS, AUTH_JWKS_URL: keys.idp.jwksUrl, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, RATE_LIMITS: "off", AUDIT_SIGNING_KEY: keys.signingKey, DATA_HISTORY: history });
      const process = () => createService({ data: createVersionedBlobStore(data), audit: createVersionedBlobStore(audit), users: createVersionedKvStore(users), images, clock: fixedClock(NOW) }, config);
      const [signing, owners] = [process(), process()];
      const token = async (uid: string) => ({ "X-Identity-Token": await keys.idp.token(uid, { lab: "Lab A", roles: uid.startsWith("rev") ? ["reviewer"] : ["examiner"], auth_time: nowSeconds - 10 }) });
      const put = async (app: typeof signing, path: string, body: unknown) =>
        (await app.request(`/data/owner/C-1/${path}`, { method: "PUT", headers: { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET, ...(await token("owner")) }, body: JSON.stringify(body) })).status;
      const annotations = (supportLevel: string) => ({ leftCase: "C-1", rightCase: "C-1", includeConfirmation: false, supportLevel, updatedAt: NOW });
      expect(await put(signing, "data.json", { caseNumber: "C-1", createdAt: NOW, files: [{ id: "f1", originalFilename: "a.png", uploadedAt: NOW }] })).toBe(200);
      expect(await put(signing, "f1/data.json", annotations("ID"))).toBe(200);
      expect((await signing.request("/review/inbox/rev1", { headers: await token("rev1") })).status).toBe(200);
      const created = await signing.request("/review/cases/owner/C-1", { method: "POST", headers: await token("owner"), body: JSON.stringify({ reviewer: "rev1", kind: "verification", blind: false }) });
      const id = ((await created.json()) as Json).id as string;
      const sign = async () => await signing.request(`/review/r/${id}/signatures`, { method: "POST", headers: await token("rev1"), body: JSON.stringify({ fileId: "f1", meaning: "verified", printedName: "Rita Reviewer" }) });
      // The annotations' own conditional write: the head of their history, or the value itself without one.
      const target = history === "on" ? "#history/owner/C-1/f1/data.json/head" : "owner/C-1/f1/data.json";
      let landed = 0;
      landBefore = async (key) => {
        if (!key.endsWith(target) || landed > 0) return;
        landed++;
        expect(await put(owners, "f1/data.json", annotations("Exclusion"))).toBe(200);
      };
      const signed = await sign();
      expect(landed).toBe(1);
      expect(signed.status).toBe(409);
      expect(((await signed.json()) as Json).details).toMatchObject({ fileId: "f1", changed: true });
      const view = (await (await signing.request(`/review/r/${id}`, { headers: await token("owner") })).json()) as Json;
      expect(view.review).toMatchObject({ state: "open", signatures: [], confirmations: [] });
      expect(view.files[0].changed).toBe(true);
      const stored = (await (await owners.request("/data/owner/C-1/f1/data.json", { headers: { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET, ...(await token("owner")) } })).json()) as Json;
      expect(stored).toMatchObject({ supportLevel: "Exclusion", includeConfirmation: false });
      expect(stored.confirmationData).toBeUndefined();
      expect((await sign()).status).toBe(409);
    });
  }
});
