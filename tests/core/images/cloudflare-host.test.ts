import { afterEach, describe, expect, it } from "vitest";
import { fixedClock, KEYS, testService } from "../../helpers/service.ts";
import { closedPort, startHttpServer } from "../../helpers/http-server.ts";
import { fixture, uploadForm } from "../../helpers/images.ts";
import { checkSignedUrl } from "../../../src/core/images/signed-url.ts";

const CF = { CF_ACCOUNT_ID: "acc123", CF_IMAGES_TOKEN: "upstream-token", ACCOUNT_HASH: "hashABC", HMAC_KEY: "images-signing-key" };
const bearer = { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` };
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A local server answering as the Cloudflare Images API documents (upload, delete). */
async function fakeImagesApi() {
  const seen: { method: string; url: string; authorization: string | undefined; body: string }[] = [];
  const images = new Set<string>();
  const server = await startHttpServer((req, body, res) => {
    seen.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization, body });
    const reply = (status: number, json: unknown) => {
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(json));
    };
    if (req.headers.authorization !== `Bearer ${CF.CF_IMAGES_TOKEN}`) {
      return reply(401, { success: false, errors: [{ code: 10000, message: "Authentication error" }], messages: [], result: null });
    }
    const upload = /^\/client\/v4\/accounts\/acc123\/images\/v1$/.exec(req.url!);
    if (upload && req.method === "POST") {
      if (!/name="requireSignedURLs"\r\n\r\ntrue/.test(body)) return reply(400, { success: false, errors: [{ code: 5400, message: "requireSignedURLs missing" }], messages: [], result: null });
      if (!/name="file"; filename="(.+?)"/.test(body)) return reply(400, { success: false, errors: [{ code: 5400, message: "Bad request: image is missing" }], messages: [], result: null });
      const id = `cf-${images.size + 1}`;
      images.add(id);
      const filename = /filename="(.+?)"/.exec(body)![1];
      return reply(200, {
        success: true,
        errors: [],
        messages: [],
        result: { id, filename, uploaded: "2026-11-22T12:00:00.000Z", requireSignedURLs: true, variants: [`https://imagedelivery.net/${CF.ACCOUNT_HASH}/${id}/public`] },
      });
    }
    const del = /^\/client\/v4\/accounts\/acc123\/images\/v1\/([^/]+)$/.exec(req.url!);
    if (del && req.method === "DELETE") {
      if (!images.delete(decodeURIComponent(del[1]!))) return reply(404, { success: false, errors: [{ code: 5404, message: "Image not found" }], messages: [], result: null });
      return reply(200, { success: true, errors: [], messages: [], result: {} });
    }
    reply(404, { success: false, errors: [{ code: 7003, message: "No route for that URI" }], messages: [], result: null });
  });
  cleanups.push(server.close);
  return { apiBase: `${server.url}/client/v4`, seen };
}

function cloudflareService(apiBase: string, extra: Record<string, string> = {}) {
  return testService({ IMAGE_HOST: "cloudflare", CF_IMAGES_API_BASE: apiBase, ...CF, ...extra }, { clock: fixedClock("2026-11-22T12:00:00Z") });
}

describe("image worker, Cloudflare Images host", () => {
  it("uploads with requireSignedURLs=true and the upstream token, never the client's", async () => {
    const api = await fakeImagesApi();
    const { app } = cloudflareService(api.apiBase);
    const response = await app.request("/image/", { method: "POST", body: uploadForm(fixture("sample.webp"), "scan.webp"), headers: bearer });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      success: true,
      errors: [],
      messages: [],
      result: { id: "cf-1", filename: "scan.webp", uploaded: "2026-11-22T12:00:00.000Z", requireSignedURLs: true, variants: ["https://imagedelivery.net/hashABC/cf-1/public"] },
    });
    expect(api.seen[0]!.authorization).toBe(`Bearer ${CF.CF_IMAGES_TOKEN}`);
    expect(api.seen.some((call) => call.authorization?.includes(KEYS.IMAGES_API_TOKEN) || call.body.includes(KEYS.IMAGES_API_TOKEN))).toBe(false);
  });

  it("sends the width and height read from the header (and the owner) as the image's metadata", async () => {
    const api = await fakeImagesApi();
    const { app } = cloudflareService(api.apiBase);
    const response = await app.request("/image/", { method: "POST", body: uploadForm(fixture("sample-lossy.webp"), "scan.webp"), headers: bearer });
    expect(response.status).toBe(200);
    const metadata = /name="metadata"\r\n\r\n(.*?)\r\n/.exec(api.seen[0]!.body)?.[1];
    expect(JSON.parse(metadata ?? "null")).toEqual({ width: 64, height: 48 });
  });

  it("refuses broken images before calling upstream", async () => {
    const api = await fakeImagesApi();
    const { app } = cloudflareService(api.apiBase);
    const twelve = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
    const response = await app.request("/image/", { method: "POST", body: uploadForm(twelve, "x.png"), headers: bearer });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "VALIDATION_ERROR", message: expect.stringContaining("not a readable PNG") });
    expect(api.seen).toEqual([]);
  });

  it("refuses non-images before calling upstream", async () => {
    const api = await fakeImagesApi();
    const { app } = cloudflareService(api.apiBase);
    const response = await app.request("/image/", { method: "POST", body: uploadForm(fixture("not-an-image.png"), "x.png"), headers: bearer });
    expect(response.status).toBe(400);
    expect(api.seen).toEqual([]);
  });

  it("passes upstream refusals through with their status and body", async () => {
    const api = await fakeImagesApi();
    const { app } = cloudflareService(api.apiBase, { CF_IMAGES_TOKEN: "revoked" });
    const response = await app.request("/image/", { method: "POST", body: uploadForm(fixture("sample.png"), "a.png"), headers: bearer });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ success: false, errors: [{ code: 10000, message: "Authentication error" }], messages: [], result: null });
  });

  it("deletes: 200, then the upstream 404 becomes 404", async () => {
    const api = await fakeImagesApi();
    const { app } = cloudflareService(api.apiBase);
    await app.request("/image/", { method: "POST", body: uploadForm(fixture("sample.png"), "a.png"), headers: bearer });
    const deleted = await app.request("/image/cf-1", { method: "DELETE", headers: bearer });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ success: true, result: {}, errors: [], messages: [] });
    expect((await app.request("/image/cf-1", { method: "DELETE", headers: bearer })).status).toBe(404);
  });

  it("signs imagedelivery.net URLs of its account as Cloudflare documents, and nothing else", async () => {
    const api = await fakeImagesApi();
    const { app } = cloudflareService(api.apiBase);
    const response = await app.request(`/image/https://imagedelivery.net/${CF.ACCOUNT_HASH}/cf-1/public`, { headers: bearer });
    expect(response.status).toBe(200);
    const signed = new URL(await response.text());
    expect(signed.origin + signed.pathname).toBe(`https://imagedelivery.net/${CF.ACCOUNT_HASH}/cf-1/public`);
    // exp, then sig = hex HMAC-SHA256(key, pathname + "?exp=...")
    expect(await checkSignedUrl(signed, CF.HMAC_KEY, Date.parse("2026-11-22T12:00:00Z") / 1000)).toBeNull();
    expect(await checkSignedUrl(signed, "another key", Date.parse("2026-11-22T12:00:00Z") / 1000)).toBe("bad signature");
    for (const url of [
      `https://imagedelivery.net/otherhash/cf-1/public`,
      `https://evil.example/${CF.ACCOUNT_HASH}/cf-1/public`,
      `http://imagedelivery.net/${CF.ACCOUNT_HASH}/cf-1/public`,
      `https://imagedelivery.net/${CF.ACCOUNT_HASH}/cf-1`,
      `https://imagedelivery.net/${CF.ACCOUNT_HASH}/%E0%A4/public`,
    ]) {
      const refused = await app.request(`/image/${encodeURIComponent(url)}`, { headers: bearer });
      expect(refused.status, url).toBe(400);
    }
    expect(api.seen).toEqual([]);
  });

  it("an unreachable API is a clear 500", async () => {
    const port = await closedPort();
    const { app } = cloudflareService(`http://127.0.0.1:${port}/client/v4`);
    const response = await app.request("/image/", { method: "POST", body: uploadForm(fixture("sample.png"), "a.png"), headers: bearer });
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ code: "SERVER_ERROR", message: "Cloudflare Images could not be reached" });
  });

  it("has no delivery route of its own (imagedelivery.net serves the bytes): a signature is no credential here", async () => {
    const api = await fakeImagesApi();
    const { app } = cloudflareService(api.apiBase);
    const response = await app.request("/image/delivery/cf-1/public?exp=99999999999&sig=00");
    expect(response.status).toBe(403);
    expect(api.seen).toEqual([]);
  });
});
