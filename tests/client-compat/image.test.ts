/**
 * The image calls of the Striae v1.0 client, as it sends them: it never uses an upload's
 * `variants`; to show an image it asks the image worker to sign
 * `https://imagedelivery.net/{ACCOUNT_HASH}/{imageId}/striae` (the URL unencoded in the
 * path), checks the answer holds `sig=` and `exp=`, and loads it.
 */
import { describe, expect, it } from "vitest";
import { fixedClock, KEYS, testService } from "../helpers/service.ts";
import { fixture, uploadForm } from "../helpers/images.ts";

const bearer = { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` };
const clientForm = (accountHash: string, imageId: string, variant = "striae") =>
  `https://imagedelivery.net/${accountHash}/${imageId}/${variant}`;

function service(env: Record<string, string> = {}) {
  return testService({ PUBLIC_URL: "https://lab.example", ...env }, { clock: fixedClock("2026-11-22T12:00:00Z") });
}

async function uploadSample(app: ReturnType<typeof service>["app"]): Promise<string> {
  const response = await app.request("/image/", { method: "POST", body: uploadForm(fixture("sample.png"), "scan.png"), headers: bearer });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { success: boolean; result: { id: string } };
  expect(body.success).toBe(true);
  return body.result.id;
}

describe("client compatibility: images on the default local host", () => {
  it("signs the client's imagedelivery.net form and the signed URL delivers the bytes", async () => {
    const { app } = service();
    const id = await uploadSample(app);
    const response = await app.request(`/image/${clientForm(KEYS.ACCOUNT_HASH, id)}`, { headers: bearer });
    expect(response.status).toBe(200);
    const signed = await response.text();
    // The client refuses an answer without these two.
    expect(signed).toContain("sig=");
    expect(signed).toContain("exp=");
    const url = new URL(signed);
    expect(url.origin).toBe("https://lab.example");
    // Its ZIP export fetches the bytes from the page's origin; an <img> loads them cross-origin.
    const delivered = await app.request(`${url.pathname}${url.search}`, { headers: { Origin: "https://lab.example" } });
    expect(delivered.status).toBe(200);
    expect(delivered.headers.get("access-control-allow-origin")).toBe("https://lab.example");
    expect(delivered.headers.get("cross-origin-resource-policy")).toBe("cross-origin");
    expect(new Uint8Array(await delivered.arrayBuffer())).toEqual(fixture("sample.png"));
  });

  it("accepts any variant name and still this service's own delivery URL", async () => {
    const { app } = service();
    const id = await uploadSample(app);
    for (const variant of ["public", "thumbnail", "striae"]) {
      const response = await app.request(`/image/${clientForm(KEYS.ACCOUNT_HASH, id, variant)}`, { headers: bearer });
      expect(response.status, variant).toBe(200);
      const url = new URL(await response.text());
      expect((await app.request(`${url.pathname}${url.search}`)).status, variant).toBe(200);
    }
    const own = await app.request(`/image/https://lab.example/image/delivery/${id}/public`, { headers: bearer });
    expect(own.status).toBe(200);
  });

  it("a signature for one variant does not open another path", async () => {
    const { app } = service();
    const id = await uploadSample(app);
    const url = new URL(await (await app.request(`/image/${clientForm(KEYS.ACCOUNT_HASH, id)}`, { headers: bearer })).text());
    const other = url.pathname.replace(/\/striae$/, "/public");
    expect((await app.request(`${other}${url.search}`)).status).toBe(403);
  });

  it("refuses another account hash, a malformed form and an unknown image", async () => {
    const { app } = service();
    const id = await uploadSample(app);
    const other = await app.request(`/image/${clientForm("someone-elses-hash", id)}`, { headers: bearer });
    expect(other.status).toBe(400);
    expect(((await other.json()) as { message: string }).message).toContain("ACCOUNT_HASH");
    const short = await app.request(`/image/https://imagedelivery.net/${KEYS.ACCOUNT_HASH}/${id}`, { headers: bearer });
    expect(short.status).toBe(400);
    const missing = await app.request(`/image/${clientForm(KEYS.ACCOUNT_HASH, crypto.randomUUID())}`, { headers: bearer });
    expect(missing.status).toBe(404);
  });

  it("without ACCOUNT_HASH the client form is a 400 that says what to set", async () => {
    const { app } = service({ ACCOUNT_HASH: "" });
    const id = await uploadSample(app);
    const response = await app.request(`/image/${clientForm("anything", id)}`, { headers: bearer });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toContain("ACCOUNT_HASH is not configured");
  });
});

describe("client compatibility: images with IMAGE_HOST=cloudflare", () => {
  it("signs the client's form with variant striae on imagedelivery.net itself", async () => {
    const { app } = service({ IMAGE_HOST: "cloudflare", CF_ACCOUNT_ID: "acct", CF_IMAGES_TOKEN: "upstream-token" });
    const response = await app.request(`/image/${clientForm(KEYS.ACCOUNT_HASH, "cf-image-1")}`, { headers: bearer });
    expect(response.status).toBe(200);
    const signed = new URL(await response.text());
    expect(`${signed.origin}${signed.pathname}`).toBe(clientForm(KEYS.ACCOUNT_HASH, "cf-image-1"));
    expect(signed.searchParams.get("sig")).toMatch(/^[0-9a-f]{64}$/);
    expect(signed.searchParams.get("exp")).toBe(String(Date.parse("2026-11-22T12:00:00Z") / 1000 + 3600));
    const other = await app.request(`/image/${clientForm("someone-elses-hash", "cf-image-1")}`, { headers: bearer });
    expect(other.status).toBe(400);
  });
});
