/**
 * The review worker against what a red team tried (docs/review.md): an image of someone else
 * listed in one's own case, a signature moved from one review into another or pasted into
 * another report, an owner's write racing a signature, two reviews of one file, annotations that
 * are no object, names and comments that hide characters, a sign-in dated in the future, and
 * methods a route does not take.
 */
import { describe, expect, it } from "vitest";
import { AUDIENCE, ISSUER } from "../../helpers/identity.ts";
import { reviewKeys } from "./review-keys.ts";
import { fixedClock, KEYS, testService } from "../../helpers/service.ts";
import { fixture, uploadForm } from "../../helpers/images.ts";
import { createMemoryPorts } from "../../../src/core/service/memory-ports.ts";
import type { BlobStore } from "../../../src/core/ports.ts";
import { pdfText } from "../pdf/poppler.ts";
import { sha256Hex } from "../../../src/core/encoding/digest.ts";
import { GREY_PNG } from "../pdf/requests.ts";

const NOW = "2026-11-22T12:00:00.000Z";
const nowSeconds = Date.parse(NOW) / 1000;
const dataKey = { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET };
type Json = Record<string, any>;

/**
 * A data store on which the owner's `write`, once set, lands right after the next read of `key`:
 * the signing request has read the pinned bytes, and the owner's PUT comes before it goes on.
 */
function ownersWriteOnRead(key: string): { data: BlobStore; write: (() => Promise<unknown>) | undefined } {
  const base = createMemoryPorts().data;
  const landing: { data: BlobStore; write: (() => Promise<unknown>) | undefined } = {
    write: undefined,
    data: {
      ...base,
      get: async (read) => {
        const bytes = await base.get(read);
        const owners = landing.write;
        if (owners !== undefined && read === key) {
          landing.write = undefined;
          await owners();
        }
        return bytes;
      },
    },
  };
  return landing;
}

describe("review worker under attack", () => {
  const keys = reviewKeys();

  const setup = async (data?: BlobStore, env: Record<string, string> = {}, audit?: BlobStore) => {
    const clock = fixedClock(NOW);
    const built = testService(
      { AUTH_JWKS_URL: keys.idp.jwksUrl, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, RATE_LIMITS: "off", AUDIT_SIGNING_KEY: keys.signingKey, ...env },
      { clock, ...(data === undefined ? {} : { data }), ...(audit === undefined ? {} : { audit }) },
    );
    const { app } = built;
    const as = async (uid: string, claims: Json = {}) => ({
      "X-Identity-Token": await keys.idp.token(uid, { lab: "Lab A", roles: uid.startsWith("rev") ? ["reviewer"] : ["examiner"], auth_time: nowSeconds - 10, ...claims }),
    });
    const call = async (path: string, uid: string, init: RequestInit & { claims?: Json } = {}) => {
      const { claims, ...rest } = init;
      const response = await app.request(path, { ...rest, headers: { ...(await as(uid, claims)), ...(rest.headers as Record<string, string> | undefined) } });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: (text === "" ? null : JSON.parse(text)) as Json };
    };
    const put = async (uid: string, path: string, body: unknown) =>
      await app.request(`/data/${uid}/${path}`, { method: "PUT", headers: { ...dataKey, ...(await as(uid)) }, body: typeof body === "string" ? body : JSON.stringify(body) });
    const annotations = (caseNumber: string, supportLevel = "ID") => ({ leftCase: caseNumber, rightCase: caseNumber, leftItem: "1", rightItem: "2", includeConfirmation: false, supportLevel, classType: "Bullet", updatedAt: NOW });
    const seed = async (uid: string, caseNumber: string, fileIds: string[], body: (fileId: string) => unknown = () => annotations(caseNumber)) => {
      expect((await put(uid, `${caseNumber}/data.json`, { caseNumber, createdAt: NOW, files: fileIds.map((id) => ({ id, originalFilename: `${id}.png`, uploadedAt: NOW })) })).status).toBe(200);
      for (const fileId of fileIds) expect((await put(uid, `${caseNumber}/${fileId}/data.json`, body(fileId))).status).toBe(200);
    };
    const open = async (body: Json = {}, uid = "owner", caseNumber = "C-1") =>
      await call(`/review/cases/${uid}/${caseNumber}`, uid, { method: "POST", body: JSON.stringify({ reviewer: "rev1", kind: "verification", blind: false, ...body }) });
    const sign = async (id: string, uid: string, body: Json, claims: Json = {}) =>
      await call(`/review/r/${id}/signatures`, uid, { method: "POST", body: JSON.stringify({ fileId: "f1", meaning: "verified", printedName: "Rita Reviewer", ...body }), claims });
    /** An image uploaded by `uid`: its id. */
    const upload = async (uid: string) => {
      const response = await app.request("/image/", { method: "POST", body: uploadForm(fixture("sample.png"), "item.png"), headers: { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}`, ...(await as(uid)) } });
      expect(response.status).toBe(200);
      return ((await response.json()) as { result: { id: string } }).result.id;
    };
    /** A case whose files are `count` images the owner uploaded: their ids. */
    const imageCase = async (uid: string, caseNumber: string, count: number) => {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) ids.push(await upload(uid));
      await seed(uid, caseNumber, ids);
      return ids;
    };
    /** The report of `annotationData` over the image at `imageUrl`, as text. */
    const report = async (annotationData: unknown, imageUrl: string, caseNumber = "C-1") => {
      const response = await app.request("/pdf", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ imageUrl, caseNumber, annotationData, activeAnnotations: [] }) });
      expect(response.status).toBe(200);
      return pdfText(new Uint8Array(await response.arrayBuffer())).replace(/\s+/g, " ");
    };
    const read = async (uid: string, path: string) => (await app.request(`/data/${uid}/${path}`, { headers: { ...dataKey, ...(await as(uid)) } })).json() as Promise<Json>;
    // Reviewers have used the service once: their token's lab and roles are remembered.
    for (const reviewer of ["rev1", "rev2"]) expect((await call(`/review/inbox/${reviewer}`, reviewer)).status).toBe(200);
    return { ...built, clock, as, call, put, seed, open, sign, read, annotations, upload, imageCase, report };
  };

  it("gives no image URL for an image another user uploaded, though the owner's case document lists it; the owner's own image gets one", async () => {
    const { app, put, open, call, upload } = await setup();
    const theirs = await upload("victim");
    const mine = await upload("owner");
    expect((await put("owner", "C-1/data.json", { caseNumber: "C-1", createdAt: NOW, files: [theirs, mine].map((id) => ({ id, originalFilename: "x.png", uploadedAt: NOW })) })).status).toBe(200);
    for (const id of [theirs, mine]) expect((await put("owner", `C-1/${id}/data.json`, { leftCase: "C-1", includeConfirmation: false, updatedAt: NOW })).status).toBe(200);
    const created = await open();
    expect(created.status).toBe(201);
    for (const uid of ["owner", "rev1"]) {
      const view = await call(`/review/r/${created.body.id}`, uid);
      expect(view.status).toBe(200);
      expect(view.body.files[0].fileId).toBe(theirs);
      expect(view.body.files[0].imageUrl).toBeUndefined();
      const url = new URL(view.body.files[1].imageUrl as string);
      const image = await app.request(url.pathname + url.search);
      expect(image.status).toBe(200);
      expect(image.headers.get("content-type")).toBe("image/png");
    }
  });

  it("verify calls a genuine signature invalid in a review it does not belong to: moved from another review, by another signer, over another record, or a second one of a file", async () => {
    const { seed, open, sign, call, ports: { audit } } = await setup();
    await seed("owner", "C-1", ["f1"]);
    const a = await open({ reviewer: "rev1" });
    const b = await open({ reviewer: "rev2", kind: "technical" });
    const signedA = await sign(a.body.id, "rev1", { meaning: "reviewed" });
    expect(signedA.status).toBe(201);
    expect((await call(`/review/r/${a.body.id}/verify`, "owner")).body.signatures).toEqual([{ fileId: "f1", status: "valid" }]);
    const signedB = await sign(b.body.id, "rev2", { meaning: "reviewed", printedName: "Rob Reviewer" });
    expect(signedB.status).toBe(201);
    const key = `reviews/${b.body.id}/review.json`;
    const tamper = async (signatures: Json[]) => {
      const stored = JSON.parse(new TextDecoder().decode((await audit.get(key))!)) as Json;
      await audit.put(key, new TextEncoder().encode(JSON.stringify({ ...stored, signatures, state: "completed" })));
      return (await call(`/review/r/${b.body.id}/verify`, "owner")).body.signatures as Json[];
    };
    expect(await tamper([signedA.body])).toEqual([{ fileId: "f1", status: "invalid", reason: expect.stringContaining(`belongs to review ${a.body.id}`) }]);
    // B's own genuine signature, then A's copied beside it.
    const statuses = await tamper([signedB.body, { ...signedA.body }]);
    expect(statuses.map((each) => each.status)).toEqual(["valid", "invalid"]);
  });

  it("prints a signature as electronically signed only over the image and the results it sealed: pasted into another owner's case of the same number, with another conclusion, or over another image (a data: URL too), it prints unsigned", async () => {
    const { imageCase, open, sign, read, call, report } = await setup();
    const [f1 = "", f2 = ""] = await imageCase("owner", "C-1", 2);
    const created = await open();
    const signed = await sign(created.body.id, "rev1", { fileId: f1 });
    expect(signed.status).toBe(201);
    const stored = await read("owner", `C-1/${f1}/data.json`);
    expect(stored.confirmationData.seal).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const urls = (await call(`/review/r/${created.body.id}`, "owner")).body.files.map((file: Json) => file.imageUrl as string);
    // The line names the file; a long id is cut with "…" at the form's width.
    const signedLine = `verified, electronically signed by rev1 for file ${f1.slice(0, 8)}`;
    const printed = await report(stored, urls[0]);
    expect(printed).toContain(signedLine);
    expect(printed).toContain("Rita Reviewer");
    // A client that fills in empty defaults prints the same results: still signed.
    expect(await report({ ...stored, boxAnnotations: [], classNote: "", hasSubclass: false }, urls[0])).toContain(signedLine);
    expect(await report({ ...stored, supportLevel: "Exclusion" }, urls[0])).not.toContain("electronically signed");
    expect(await report({ ...stored, leftItem: "9" }, urls[0])).not.toContain("electronically signed");
    // The same annotations over the case's other image, or over an image given as a data: URL.
    expect(await report(stored, urls[1])).not.toContain("electronically signed");
    expect(await report(stored, GREY_PNG)).not.toContain("electronically signed");
    expect(f2).not.toBe(f1);
    // Another user's case "C-1" with another conclusion, the genuine signature and seal pasted in.
    const pasted = { leftCase: "C-1", rightCase: "C-1", leftItem: "7", rightItem: "8", supportLevel: "Exclusion", includeConfirmation: true, updatedAt: NOW, confirmationData: stored.confirmationData };
    expect(await report(pasted, urls[0])).not.toContain("electronically signed");
    // Without its seal the genuine signature prints unsigned.
    const { seal: _seal, ...unsealed } = stored.confirmationData as Json;
    expect(await report({ ...stored, confirmationData: unsealed }, urls[0])).not.toContain("electronically signed");
  });

  it("an owner's write between the signing request's check and its confirmation: 409, no signature stored, nothing written over the owner's version", async () => {
    const landing = ownersWriteOnRead("owner/C-1/f1/data.json");
    const { seed, open, sign, put, read, call, annotations } = await setup(landing.data);
    await seed("owner", "C-1", ["f1"]);
    const created = await open();
    landing.write = async () => expect((await put("owner", "C-1/f1/data.json", annotations("C-1", "Exclusion"))).status).toBe(200);
    const signed = await sign(created.body.id, "rev1", {});
    expect(landing.write).toBeUndefined();
    expect(signed.status).toBe(409);
    expect(signed.body.details).toMatchObject({ fileId: "f1", changed: true });
    const view = await call(`/review/r/${created.body.id}`, "owner");
    expect(view.body.review).toMatchObject({ state: "open", signatures: [], confirmations: [] });
    expect(view.body.files[0].changed).toBe(true);
    expect(await read("owner", "C-1/f1/data.json")).toMatchObject({ supportLevel: "Exclusion", includeConfirmation: false });
    expect((await sign(created.body.id, "rev1", {})).status).toBe(409);
  });

  it("a failure after the confirmation was written leaves the signing under way: the reviewer's repeat finishes it (200, its version, the audit step, completion) without writing it twice; an identical request while one is under way waits", async () => {
    const base = createMemoryPorts().audit;
    let failAt = 0;
    let updates = 0;
    const audit: BlobStore = {
      ...base,
      update: (key, change, options) => {
        if (key.startsWith("reviews/") && key.endsWith("/review.json") && ++updates === failAt) return Promise.reject(new Error("store went away"));
        return base.update(key, change, options);
      },
    };
    const { seed, open, sign, read, call, clock, ports } = await setup(undefined, {}, audit);
    await seed("owner", "C-1", ["f1"]);
    const created = await open();
    const id = created.body.id as string;
    // The review's updates while signing: listed as under way, the bytes' hash, listed as written (fails), off the list.
    updates = 0;
    failAt = 3;
    expect((await sign(id, "rev1", {})).status).toBe(500);
    const written = await read("owner", "C-1/f1/data.json");
    expect(written).toMatchObject({ includeConfirmation: true, confirmationData: { confirmedBy: "rev1" } });
    const underWay = (await call(`/review/r/${id}`, "owner")).body.review;
    expect(underWay).toMatchObject({ state: "open", confirmations: [], signing: [{ fileId: "f1", confirmationId: written.confirmationData.confirmationId }] });
    expect(underWay.signatures).toHaveLength(1);
    // Another meaning, name or comment is no repeat.
    expect((await sign(id, "rev1", { meaning: "reviewed" })).status).toBe(409);
    expect((await sign(id, "rev1", { printedName: "Someone Else" })).status).toBe(409);
    const repeated = await sign(id, "rev1", {});
    expect(repeated.status).toBe(200);
    expect(repeated.body.jws).toBe(underWay.signatures[0].jws);
    const done = (await call(`/review/r/${id}`, "owner")).body.review;
    expect(done).toMatchObject({ state: "completed", signing: [], confirmations: [{ fileId: "f1", version: 2, confirmationId: written.confirmationData.confirmationId }] });
    const history = (await call("/data/owner/C-1/f1/data.json?history", "owner", { headers: dataKey })).body;
    expect(history.versions.map((version: Json) => version.writtenBy)).toEqual(["owner", "rev1"]);
    expect((await sign(id, "rev1", {})).status).toBe(409);
    // A request for a signing another request still holds (a double click) waits; the owner's cancellation too.
    await seed("owner", "C-2", ["f1"]);
    const second = (await open({}, "owner", "C-2")).body.id as string;
    const stored = JSON.parse(new TextDecoder().decode((await base.get(`reviews/${second}/review.json`))!)) as Json;
    const held = await sign(second, "rev1", {});
    expect(held.status).toBe(201);
    // As if the first request were still at work: listed, under way since now, its bytes' hash recorded and written, not yet listed as written.
    const landed = await sha256Hex((await ports.data.get("owner/C-2/f1/data.json"))!);
    const confirmationId = (await read("owner", "C-2/f1/data.json")).confirmationData.confirmationId as string;
    const atWork = { fileId: "f1", signature: held.body.jws, confirmationId, sha256s: [landed], since: NOW };
    await base.put(`reviews/${second}/review.json`, new TextEncoder().encode(JSON.stringify({ ...stored, signatures: [held.body], signing: [atWork] })));
    const waiting = await sign(second, "rev1", {});
    expect(waiting.status).toBe(409);
    expect(waiting.body.details.retryAfterSeconds).toBeGreaterThan(0);
    expect((await call(`/review/r/${second}`, "owner", { method: "DELETE" })).status).toBe(409);
    // Past the lease it is taken over: the confirmation the first request wrote is found, not written again.
    clock.set("2026-11-22T12:01:00.000Z");
    const takenOver = await sign(second, "rev1", {}, { auth_time: nowSeconds + 50 });
    expect(takenOver.status).toBe(200);
    const secondHistory = (await call("/data/owner/C-2/f1/data.json?history", "owner", { headers: dataKey })).body;
    expect(secondHistory.versions.map((version: Json) => version.writtenBy)).toEqual(["owner", "rev1"]);
    expect((await call(`/review/r/${second}`, "owner")).body.review).toMatchObject({ state: "completed", signing: [] });
  });

  it("the owner's cancellation settles signings a failure left under way: a confirmation that landed is listed with its signature, a signing that never wrote goes", async () => {
    const auditBase = createMemoryPorts().audit;
    const dataBase = createMemoryPorts().data;
    let failReview: string | undefined;
    let failData: string | undefined;
    const audit: BlobStore = {
      ...auditBase,
      update: (key, change, options) => {
        // The last update of a signing (off the list) fails: its confirmation had landed and was listed.
        if (key === failReview) {
          return auditBase.update(key, async (current) => {
            const next = await change(current);
            if (JSON.parse(new TextDecoder().decode(next)).signing.length === 0) {
              failReview = undefined;
              throw new Error("store went away");
            }
            return next;
          }, options);
        }
        return auditBase.update(key, change, options);
      },
    };
    const data: BlobStore = {
      ...dataBase,
      appendToJsonArray: (key, item, atIndex, options) => {
        if (key === failData) {
          failData = undefined;
          return Promise.reject(new Error("store went away"));
        }
        return dataBase.appendToJsonArray(key, item, atIndex, options);
      },
    };
    const { seed, open, sign, call } = await setup(data, {}, audit);
    await seed("owner", "C-1", ["f1", "f2"]);
    const id = (await open()).body.id as string;
    failReview = `reviews/${id}/review.json`;
    expect((await sign(id, "rev1", { fileId: "f1" })).status).toBe(500);
    failData = "#history/owner/C-1/f2/data.json/log";
    expect((await sign(id, "rev1", { fileId: "f2" })).status).toBe(500);
    const before = (await call(`/review/r/${id}`, "owner")).body.review;
    expect(before.signing.map((each: Json) => each.fileId)).toEqual(["f1", "f2"]);
    const cancelled = await call(`/review/r/${id}`, "owner", { method: "DELETE" });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ state: "cancelled", signing: [], confirmations: [{ fileId: "f1", version: 2 }] });
    expect(cancelled.body.signatures.map((each: Json) => each.fileId)).toEqual(["f1"]);
    expect((await call(`/review/r/${id}/verify`, "owner")).body.signatures).toEqual([{ fileId: "f1", status: "valid" }]);
  });

  it("an owner who copies the listed signature into changed annotations gets nothing confirmed: 409, the signature taken back, verify lists none", async () => {
    const base = createMemoryPorts().audit;
    let afterListing: ((stored: Json) => Promise<void>) | undefined;
    const audit: BlobStore = {
      ...base,
      update: async (key, change, options) => {
        const written = await base.update(key, change, options);
        const hook = afterListing;
        if (hook !== undefined && key.endsWith("/review.json")) {
          afterListing = undefined;
          await hook(JSON.parse(new TextDecoder().decode((await base.get(key))!)) as Json);
        }
        return written;
      },
    };
    const { seed, open, sign, put, read, call, annotations } = await setup(undefined, {}, audit);
    await seed("owner", "C-1", ["f1"]);
    const id = (await open()).body.id as string;
    afterListing = async (stored) => {
      const jws = stored.signatures[0].jws as string;
      const planted = { ...annotations("C-1", "Exclusion"), includeConfirmation: true, confirmationData: { confirmationId: "CONF-FAKEFAKE00", signature: { jws } } };
      expect((await put("owner", "C-1/f1/data.json", planted)).status).toBe(200);
    };
    const signed = await sign(id, "rev1", {});
    expect(afterListing).toBeUndefined();
    expect(signed.status).toBe(409);
    const review = (await call(`/review/r/${id}`, "owner")).body.review;
    expect(review).toMatchObject({ state: "open", signatures: [], confirmations: [], signing: [] });
    expect((await call(`/review/r/${id}/verify`, "owner")).body.signatures).toEqual([]);
    expect(await read("owner", "C-1/f1/data.json")).toMatchObject({ supportLevel: "Exclusion", confirmationData: { confirmationId: "CONF-FAKEFAKE00" } });
  });

  it("two reviews of one file: neither reviewer's confirmation makes the other's file amended; both sign, both verify, each confirmation a version", async () => {
    const { seed, open, sign, call } = await setup();
    await seed("owner", "C-1", ["f1"]);
    const a = await open({ reviewer: "rev1" });
    const b = await open({ reviewer: "rev2", kind: "technical" });
    expect((await sign(a.body.id, "rev1", {})).status).toBe(201);
    expect((await call(`/review/r/${b.body.id}`, "rev2")).body.files[0].changed).toBe(false);
    const signedB = await sign(b.body.id, "rev2", { printedName: "Rob Reviewer" });
    expect(signedB.status).toBe(201);
    for (const [id, uid] of [[a.body.id, "rev1"], [b.body.id, "rev2"]] as const) {
      expect((await call(`/review/r/${id}/verify`, uid)).body.signatures).toEqual([{ fileId: "f1", status: "valid" }]);
      expect((await call(`/review/r/${id}`, "owner")).body.review).toMatchObject({ state: "completed", confirmations: [{ fileId: "f1" }] });
    }
    const history = (await call("/data/owner/C-1/f1/data.json?history", "owner", { headers: dataKey })).body;
    expect(history.versions.map((version: Json) => version.writtenBy)).toEqual(["owner", "rev1", "rev2"]);
  });

  it("with DATA_HISTORY=off: the verified signature's confirmation is written and sealed (version null), an owner's racing write is a 409 with nothing stored, an amendment after makes it stale", async () => {
    const landing = ownersWriteOnRead("owner/C-2/f1/data.json");
    const { imageCase, seed, open, sign, put, read, call, annotations, report } = await setup(landing.data, { DATA_HISTORY: "off" });
    const [image = ""] = await imageCase("owner", "C-1", 1);
    await seed("owner", "C-2", ["f1"]);
    const created = await open();
    const signed = await sign(created.body.id, "rev1", { fileId: image });
    expect(signed.status).toBe(201);
    expect(signed.body.record.version).toBeNull();
    const stored = await read("owner", `C-1/${image}/data.json`);
    expect(stored).toMatchObject({ includeConfirmation: true, confirmationData: { confirmedBy: "rev1", seal: expect.any(String) } });
    const view = await call(`/review/r/${created.body.id}`, "owner");
    expect(view.body.review.confirmations).toEqual([{ fileId: image, confirmationId: stored.confirmationData.confirmationId, version: null, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
    expect(await report(stored, view.body.files[0].imageUrl as string)).toContain(`verified, electronically signed by rev1 for file ${image.slice(0, 8)}`);
    expect((await call(`/review/r/${created.body.id}/verify`, "owner")).body.signatures).toEqual([{ fileId: image, status: "valid" }]);
    expect((await put("owner", `C-1/${image}/data.json`, annotations("C-1", "Exclusion"))).status).toBe(200);
    expect((await call(`/review/r/${created.body.id}/verify`, "owner")).body.signatures).toMatchObject([{ fileId: image, status: "stale" }]);
    // The race, without history: the owner's write lands after the signing request's check.
    const raced = await open({}, "owner", "C-2");
    landing.write = async () => expect((await put("owner", "C-2/f1/data.json", annotations("C-2", "Exclusion"))).status).toBe(200);
    expect((await sign(raced.body.id, "rev1", {})).status).toBe(409);
    expect((await call(`/review/r/${raced.body.id}`, "owner")).body.review).toMatchObject({ signatures: [], confirmations: [] });
    expect(await read("owner", "C-2/f1/data.json")).toMatchObject({ supportLevel: "Exclusion", includeConfirmation: false });
  });

  it("refuses a review of annotations that are no JSON object, which no confirmation could be written into", async () => {
    const { seed, open } = await setup();
    await seed("owner", "C-1", ["f1", "f2"], (fileId) => (fileId === "f1" ? '"abc"' : [1, 2]));
    for (const fileIds of [["f1"], ["f2"]]) {
      const refused = await open({ fileIds });
      expect(refused.status).toBe(400);
      expect(refused.body.details).toMatchObject({ field: "fileIds", fileId: fileIds[0] });
    }
  });

  it("refuses names and texts that hide characters, and a sign-in dated in the future", async () => {
    const { seed, open, sign, call } = await setup();
    await seed("owner", "C-1", ["f1"]);
    const created = await open();
    const id = created.body.id as string;
    for (const printedName of ["\u0000", "\u200b", "\u202eRita\u202c Chief Examiner", "Rita\u0007", "12345"]) {
      const refused = await sign(id, "rev1", { printedName, meaning: "reviewed" });
      expect(refused.status, JSON.stringify(printedName)).toBe(400);
    }
    expect((await sign(id, "rev1", { meaning: "reviewed", comment: "fine \u2066hidden\u2069" })).status).toBe(400);
    expect((await call(`/review/r/${id}/conclusions`, "rev1", { method: "POST", body: JSON.stringify({ fileId: "f1", supportLevel: "ID", notes: "a\u0000b" }) })).status).toBe(400);
    const future = await sign(id, "rev1", { meaning: "reviewed" }, { auth_time: nowSeconds + 3600 });
    expect(future.status).toBe(401);
    expect(future.body.details.reason).toBe("reauthentication required");
    // Tabs and line breaks are text; names in any script with marks are names.
    expect((await call(`/review/r/${id}/conclusions`, "rev1", { method: "POST", body: JSON.stringify({ fileId: "f1", supportLevel: "ID", notes: "line one\n\tline two" }) })).status).toBe(201);
    expect((await sign(id, "rev1", { meaning: "reviewed", printedName: "Zoë Ångström-Łukasz", comment: "checked\r\nall" })).status).toBe(201);
  });

  it("answers a method a review route does not take with 405 and Allow", async () => {
    const { call } = await setup();
    const cases: [string, string, string][] = [
      ["PUT", "/review/r/some-id", "GET, DELETE, OPTIONS"],
      ["GET", "/review/r/some-id/signatures", "POST, OPTIONS"],
      ["DELETE", "/review/r/some-id/verify", "GET, OPTIONS"],
      ["PATCH", "/review/cases/owner/C-1", "GET, POST, OPTIONS"],
      ["POST", "/review/inbox/rev1", "GET, OPTIONS"],
    ];
    for (const [method, path, allow] of cases) {
      const answer = await call(path, "rev1", { method });
      expect(answer.status, `${method} ${path}`).toBe(405);
      expect(answer.headers.get("Allow")).toBe(allow);
    }
  });

  it("the data worker refuses ?history=false and a malformed escape beside ?history, rather than guess", async () => {
    const { seed, app, as } = await setup();
    await seed("owner", "C-1", ["f1"]);
    const get = async (query: string) => await app.request(`/data/owner/C-1/f1/data.json?${query}`, { headers: { ...dataKey, ...(await as("owner")) } });
    for (const query of ["history=false", "history=1", "history&x=%ZZ", "version=1&y=%E0%A4%A"]) expect((await get(query)).status, query).toBe(400);
    for (const query of ["history", "history=true", "history&x=%41"]) expect((await get(query)).status, query).toBe(200);
  });
});
