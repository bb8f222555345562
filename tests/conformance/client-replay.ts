/**
 * One working session of the Striae v1.0 client replayed over HTTP against `serve` on a
 * runtime, with the request forms it sends (its URLs, headers, bodies and query formats) and
 * reading the answers the way its code does. Only what a lab sets when switching is set:
 * the keys worker's key and the allowed origin; everything else is the embedded default.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, spawnServe, type Served } from "../helpers/spawn-serve.ts";
import { solidJpeg } from "../core/pdf/images.ts";

const ORIGIN = "https://striae.lab.example";
const KEYS_AUTH = "replay-keys-auth";
const image = solidJpeg(64, 48, [30, 120, 200]);

/** Registers the replay for one runtime. */
export function clientReplay(runtime: Runtime): void {
  describe(`Striae v1.0 client session on ${runtime}`, () => {
    let dir: string;
    let served: Served;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), `fa-replay-${runtime}-`));
      served = await spawnServe({ runtime, dataDir: join(dir, "data"), env: { KEYS_AUTH, ALLOWED_ORIGIN: ORIGIN }, timeoutMs: 60_000 });
    }, 90_000);
    afterAll(async () => {
      await served?.stop("SIGTERM");
      await rm(dir, { recursive: true, force: true });
    }, 30_000);

    it(`[${runtime}] keys, sign-up, a case, an image shown, notes, audit trail, a report, account deletion`, async () => {
      const base = served.url;
      const json = { "Content-Type": "application/json" };
      // The client reads every worker key from the keys worker as text (getApiKey).
      const key = async (name: string) => {
        const response = await fetch(`${base}/keys/${name}`, { headers: { "X-Custom-Auth-Key": KEYS_AUTH } });
        expect(response.ok, name).toBe(true);
        return await response.text();
      };
      const [userKey, dataKey, imageToken, accountHash] = [await key("USER_DB_AUTH"), await key("R2_KEY_SECRET"), await key("IMAGES_API_TOKEN"), await key("ACCOUNT_HASH")];
      expect(accountHash.length).toBeGreaterThan(0);
      const user = { "X-Custom-Auth-Key": userKey, ...json };
      const data = { "X-Custom-Auth-Key": dataKey, ...json };
      const bearer = { Authorization: `Bearer ${imageToken}` };

      // A browser on the client's origin asks first.
      const preflight = await fetch(`${base}/data/u1/C-1/data.json`, {
        method: "OPTIONS",
        headers: { Origin: ORIGIN, "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "content-type,x-custom-auth-key" },
      });
      expect(preflight.status).toBeLessThan(300);
      expect(preflight.headers.get("access-control-allow-origin")).toBe(ORIGIN);
      expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("x-custom-auth-key");

      // Sign-up: the whole record, permitted true.
      const signUp = { uid: "u1", email: "ana@lab.example", firstName: "Ana", lastName: "Ruiz", company: "State Lab", permitted: true, cases: [], readOnlyCases: [], createdAt: new Date().toISOString() };
      expect((await fetch(`${base}/user/u1`, { method: "PUT", headers: user, body: JSON.stringify(signUp) })).ok).toBe(true);
      const record = (await (await fetch(`${base}/user/u1`, { headers: user })).json()) as { permitted: boolean; company: string; cases: unknown[] };
      expect(record).toMatchObject({ permitted: true, company: "State Lab", cases: [] });

      // A new case: its assignment with the client's date, then its document.
      const createdAt = "2025-09-01T10:00:00.000Z";
      expect((await fetch(`${base}/user/u1/cases`, { method: "PUT", headers: user, body: JSON.stringify({ cases: [{ createdAt, caseNumber: "C-1" }] }) })).ok).toBe(true);
      expect((await fetch(`${base}/data/${encodeURIComponent("u1")}/${encodeURIComponent("C-1")}/data.json`, { method: "PUT", headers: data, body: JSON.stringify({ createdAt, caseNumber: "C-1", files: [] }) })).ok).toBe(true);

      // Upload: POST to the worker's URL itself, multipart field file; status must be 200.
      const form = new FormData();
      form.append("file", new File([new Uint8Array(image)], "item 1.jpg", { type: "image/jpeg" }));
      const upload = await fetch(`${base}/image`, { method: "POST", headers: bearer, body: form });
      expect(upload.status).toBe(200);
      const uploaded = (await upload.json()) as { success: boolean; result: { id: string } };
      expect(uploaded.success).toBe(true);
      const fileId = uploaded.result.id;
      const caseDocument = { createdAt, caseNumber: "C-1", files: [{ id: fileId, originalFilename: "item 1.jpg", uploadedAt: new Date().toISOString() }], updatedAt: new Date().toISOString() };
      expect((await fetch(`${base}/data/u1/C-1/data.json`, { method: "PUT", headers: data, body: JSON.stringify(caseDocument) })).ok).toBe(true);
      expect(await (await fetch(`${base}/data/u1/C-1/data.json`, { headers: data })).json()).toEqual(caseDocument);

      // Showing the image: sign the Cloudflare form, then load the answer cross-origin.
      const sign = await fetch(`${base}/image/https://imagedelivery.net/${accountHash}/${fileId}/striae`, { headers: { ...bearer, Accept: "text/plain" } });
      expect(sign.ok).toBe(true);
      const signedUrl = await sign.text();
      expect(signedUrl).toContain("sig=");
      expect(signedUrl).toContain("exp=");
      const shown = await fetch(signedUrl, { headers: { Origin: ORIGIN } });
      expect(shown.status).toBe(200);
      expect(shown.headers.get("access-control-allow-origin")).toBe(ORIGIN);
      expect(new Uint8Array(await shown.arrayBuffer())).toEqual(image);

      // Notes and boxes of the file.
      const notes = {
        leftCase: "C-1", rightCase: "C-1", leftItem: "1", rightItem: "2", caseFontColor: "", classType: "Bullet", customClass: "", classNote: "",
        indexType: "color", indexNumber: "", indexColor: "", supportLevel: "ID", hasSubclass: false, includeConfirmation: true, additionalNotes: "Agreement of striae.",
        boxAnnotations: [{ id: "b1", x: 10, y: 10, width: 30, height: 20, color: "#ff0000", label: "1", timestamp: new Date().toISOString() }],
        earliestAnnotationTimestamp: new Date().toISOString(), updatedAt: new Date().toISOString(),
      };
      expect((await fetch(`${base}/data/u1/C-1/${fileId}/data.json`, { method: "PUT", headers: data, body: JSON.stringify(notes) })).ok).toBe(true);

      // Audit: the entry appended, then the viewer's range of full ISO date-times.
      const entry = { timestamp: new Date().toISOString(), userId: "u1", userEmail: "ana@lab.example", action: "annotation-create", result: "success", details: { caseNumber: "C-1", fileName: "item 1.jpg", workflowPhase: "casework" } };
      const appended = await fetch(`${base}/data/audit/?${new URLSearchParams({ userId: "u1" })}`, { method: "POST", headers: data, body: JSON.stringify(entry) });
      expect(appended.ok).toBe(true);
      expect(await appended.json()).toMatchObject({ success: true, entryCount: expect.any(Number), filename: expect.any(String) });
      const now = Date.now();
      const range = new URLSearchParams({ userId: "u1", startDate: new Date(now - 86_400_000).toISOString(), endDate: new Date(now).toISOString() });
      const trail = await fetch(`${base}/data/audit/?${range}`, { headers: data });
      expect(trail.status).toBe(200);
      const read = (await trail.json()) as { entries: { action: string }[]; total: number };
      expect(read.total).toBe(read.entries.length);
      expect(read.entries.map((e) => e.action)).toContain("annotation-create");

      // The report, from the URL just signed; the client reads it with .blob().
      const report = await fetch(`${base}/pdf`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ imageUrl: signedUrl, filename: "item 1.jpg", userCompany: "State Lab", firstName: "Ana", caseNumber: "C-1", annotationData: notes, activeAnnotations: ["number", "class", "index", "id", "box", "notes"], currentDate: "09/01/2025", notesUpdatedFormatted: "09/01/2025" }),
      });
      expect(report.status, await report.clone().text().then((text) => text.slice(0, 300))).toBe(200);
      expect(report.headers.get("content-type")).toBe("application/pdf");
      expect(new TextDecoder().decode((await report.arrayBuffer()).slice(0, 5))).toBe("%PDF-");

      // Account deletion: ok, then {success, message}; the case and the image are gone.
      const deleted = await fetch(`${base}/user/u1`, { method: "DELETE", headers: user });
      expect(deleted.ok).toBe(true);
      expect(await deleted.json()).toMatchObject({ success: true, message: expect.any(String) });
      expect(await (await fetch(`${base}/data/u1/C-1/data.json`, { headers: data })).json()).toEqual([]);
      expect((await fetch(signedUrl)).status).toBe(404);
    }, 120_000);
  });
}
