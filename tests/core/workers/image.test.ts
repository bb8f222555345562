import { describe, expect, it } from "vitest";
import { fixedClock, KEYS, testService } from "../../helpers/service.ts";
import { fixture, uploadForm } from "../../helpers/images.ts";
import { solidJpeg, solidPng, withPngSize } from "../pdf/images.ts";

const bearer = { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` };
const PUBLIC = "https://lab.example";

type Upload = { success: boolean; result: { id: string; filename: string; uploaded: string; requireSignedURLs: boolean; variants: string[] }; errors: unknown[]; messages: unknown[] };

function service(env: Record<string, string> = {}) {
  const clock = fixedClock("2026-11-22T12:00:00Z");
  return { ...testService({ PUBLIC_URL: PUBLIC, ...env }, { clock }), clock };
}

async function upload(app: ReturnType<typeof service>["app"], name: string, as = name) {
  const response = await app.request("/image/", { method: "POST", body: uploadForm(fixture(name), as), headers: bearer });
  return { response, body: (await response.json()) as Upload };
}

/** Signs a delivery URL and answers the signed URL's path and query, as a client would fetch it. */
async function sign(app: ReturnType<typeof service>["app"], deliveryUrl: string, encode = false) {
  const response = await app.request(`/image/${encode ? encodeURIComponent(deliveryUrl) : deliveryUrl}`, { headers: bearer });
  return { status: response.status, text: await response.text() };
}

const local = (signed: string) => {
  const url = new URL(signed);
  return `${url.pathname}${url.search}`;
};

describe("image worker, local host (spec 4.2, CONTRACT hosted images)", () => {
  it("uploads every accepted format, typed by its bytes, in the Cloudflare Images shape", async () => {
    const { app } = service();
    const types = { "sample.png": "image/png", "sample.jpg": "image/jpeg", "sample.webp": "image/webp", "sample.gif": "image/gif", "sample.tiff": "image/tiff", "sample.bmp": "image/bmp" };
    for (const [name, type] of Object.entries(types)) {
      // Named .dat: the name never decides the type.
      const { response, body } = await upload(app, name, `evidence-${name}.dat`);
      expect(response.status, name).toBe(200);
      expect(body.success).toBe(true);
      expect(body.errors).toEqual([]);
      expect(body.messages).toEqual([]);
      expect(body.result.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(body.result.filename).toBe(`evidence-${name}.dat`);
      expect(body.result.uploaded).toBe("2026-11-22T12:00:00.000Z");
      expect(body.result.requireSignedURLs).toBe(true);
      expect(body.result.variants).toEqual([`${PUBLIC}/image/delivery/${body.result.id}/public`]);
      const signed = await sign(app, body.result.variants[0]!);
      const served = await app.request(local(signed.text));
      expect(served.headers.get("content-type")).toBe(type);
    }
  });

  it("refuses non-images, missing files and bad bodies with 400", async () => {
    const { app, ports } = service({ MAX_IMAGE_BYTES: "2048" });
    const cases: [BodyInit, string][] = [
      [uploadForm(fixture("not-an-image.png"), "photo.png"), "not an image"],
      [uploadForm(fixture("sample.png"), "x.png", "picture"), "No file"],
      [uploadForm(new Uint8Array(4096).fill(0xff), "big.jpg"), "larger than"],
      [uploadForm(new Uint8Array(0), "empty.png"), "not an image"],
      ["just text", "multipart/form-data"],
    ];
    for (const [body, message] of cases) {
      const response = await app.request("/image/", { method: "POST", body, headers: bearer });
      expect(response.status, message).toBe(400);
      const error = (await response.json()) as { code: string; message: string };
      expect(error.code).toBe("VALIDATION_ERROR");
      expect(error.message).toContain(message);
    }
    const malformed = await app.request("/image/", {
      method: "POST",
      body: "--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\n\r\n\x89PNG",
      headers: { ...bearer, "Content-Type": "multipart/form-data; boundary=x" },
    });
    expect(malformed.status).toBe(400);
    expect(await ports.images.list("")).toEqual([]);
  });

  it("a body cut short after its file part, without its closing boundary, with two files or 17 parts is a 400; nothing is stored", async () => {
    const { app, ports } = service();
    const png = fixture("sample.png");
    const head = (name: string) => new TextEncoder().encode(`--XB\r\nContent-Disposition: form-data; name="${name}"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`);
    const text = (value: string) => new TextEncoder().encode(value);
    const joined = (...pieces: Uint8Array[]) => new Uint8Array(pieces.flatMap((piece) => [...piece]));
    const filePart = joined(head("file"), png, text("\r\n"));
    const headers = { ...bearer, "Content-Type": "multipart/form-data; boundary=XB" };
    const bodies: [string, () => BodyInit, string][] = [
      ["no closing boundary after a later part began", () => joined(filePart, text('--XB\r\nContent-Disposition: form-data; name="note"\r\n\r\nhal')), "malformed"],
      ["connection broken after the file part", () =>
        new ReadableStream({
          start(controller) {
            controller.enqueue(joined(filePart, text('--XB\r\nContent-Disposition: form-data; name="note"\r\n\r\n')));
            controller.error(new Error("aborted"));
          },
        }), "ended before it was complete"],
      ["two files", () => joined(filePart, filePart, text("--XB--\r\n")), "more than one field named file"],
      ["17 parts, the file first", () => joined(filePart, ...Array.from({ length: 16 }, (_, i) => text(`--XB\r\nContent-Disposition: form-data; name="n${i}"\r\n\r\nx\r\n`)), text("--XB--\r\n")), "more than 16 parts"],
    ];
    for (const [what, body, message] of bodies) {
      const response = await app.request("/image/", { method: "POST", body: body(), headers, duplex: "half" } as RequestInit);
      expect(response.status, what).toBe(400);
      expect(((await response.json()) as { message: string }).message, what).toContain(message);
    }
    expect(await ports.images.list("")).toEqual([]);
    // The same file part, closed, is stored.
    const whole = await app.request("/image/", { method: "POST", body: joined(filePart, text("--XB--\r\n")), headers });
    expect(whole.status).toBe(200);
  });

  it("the media type is matched exactly in any case; a file name with a control character or part headers over 8 KB are a 400 saying so", async () => {
    const { app, ports } = service();
    const png = fixture("sample.png");
    const body = (filename: string) =>
      new Uint8Array([...new TextEncoder().encode(`--XB\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: image/png\r\n\r\n`), ...png, ...new TextEncoder().encode("\r\n--XB--\r\n")]);
    const send = (contentType: string, filename = "a.png") => app.request("/image/", { method: "POST", body: body(filename), headers: { ...bearer, "Content-Type": contentType } });
    expect((await send("MULTIPART/FORM-DATA; BOUNDARY=XB")).status).toBe(200);
    expect((await send('Multipart/Form-Data; boundary="XB"')).status).toBe(200);
    const refusals: [Response, string][] = [
      [await send("multipart/form-data-x; boundary=XB"), "Expected multipart/form-data"],
      [await send("multipart/form-data; boundary=XB", "a\u0000b.png"), "The file name holds a control character (U+0000)"],
      [await send("multipart/form-data; boundary=XB", "tab\there.png"), "(U+0009)"],
      [await send("multipart/form-data; boundary=XB", `${"x".repeat(10_000)}.png`), "A part's headers are longer than 8192 bytes"],
      [await send("multipart/form-data"), "malformed"],
    ];
    for (const [response, message] of refusals) {
      expect(response.status, message).toBe(400);
      expect(((await response.json()) as { message: string }).message).toContain(message);
    }
    expect((await ports.images.list("")).filter((key) => key.endsWith(".json"))).toHaveLength(2);
  });

  it("a declared Content-Length over the upload's cap (MAX_IMAGE_BYTES + 1 MiB) is refused before a byte of the body is read", async () => {
    const { app, ports } = service({ MAX_IMAGE_BYTES: "2048" });
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({ pull(controller) {
      pulled += 1;
      controller.enqueue(new Uint8Array(1024));
    } });
    const cap = 2048 + 1024 * 1024;
    const response = await app.request("/image/", {
      method: "POST",
      body,
      duplex: "half",
      headers: { ...bearer, "Content-Type": "multipart/form-data; boundary=XB", "Content-Length": String(cap + 1) },
    } as RequestInit);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "VALIDATION_ERROR", details: { limitBytes: 2048 } });
    expect(pulled).toBeLessThanOrEqual(1); // a stream may pull once when it is made; nothing was read
    expect(await ports.images.list("")).toEqual([]);
  });

  it("part headers that are not UTF-8 (a Latin-1 filename or type) are a 400, not a 500", async () => {
    const { app, ports } = service();
    const png = fixture("sample.png");
    const ascii = (text: string) => new TextEncoder().encode(text);
    for (const header of ['filename="caf\xe9.png"\r\nContent-Type: image/png', 'filename="a.png"\r\nContent-Type: image/\xe9']) {
      // Latin-1 bytes as a browser of another era sends them: one byte per character.
      const head = Uint8Array.from(`--x\r\nContent-Disposition: form-data; name="file"; ${header}\r\n\r\n`, (ch) => ch.charCodeAt(0));
      const body = new Uint8Array([...head, ...png, ...ascii("\r\n--x--\r\n")]);
      const response = await app.request("/image/", { method: "POST", body, headers: { ...bearer, "Content-Type": "multipart/form-data; boundary=x" } });
      expect(response.status, header).toBe(400);
      expect(await response.json()).toMatchObject({ code: "VALIDATION_ERROR" });
    }
    expect(await ports.images.list("")).toEqual([]);
  });

  it("HEAD of a signed delivery URL answers as GET does, without the bytes, and needs no bearer token; an unsigned one is refused", async () => {
    const { app } = service();
    const { body } = await upload(app, "sample.png");
    const signed = await sign(app, body.result.variants[0]!);
    const head = await app.request(local(signed.text), { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("image/png");
    expect((await head.arrayBuffer()).byteLength).toBe(0);
    const unsigned = await app.request(new URL(signed.text).pathname, { method: "HEAD" });
    expect(unsigned.status).toBe(403);
  });

  it("a delivery URL with broken percent-encoding is a 400, not a 500", async () => {
    const { app } = service();
    for (const broken of ["http://localhost/image/delivery/%E0%A4/public", "https://imagedelivery.net/account-hash-abc/%E0%A4/public"]) {
      const response = await app.request(`/image/${encodeURIComponent(broken)}`, { headers: bearer });
      expect(response.status, broken).toBe(400);
      expect(await response.json()).toMatchObject({ code: "VALIDATION_ERROR" });
    }
  });

  it("a missing or wrong bearer token is 403 with the standard body; IMAGES_API_TOKEN only", async () => {
    const { app } = service();
    const { body } = await upload(app, "sample.png");
    for (const headers of [{}, { Authorization: "Bearer nope" }, { Authorization: `Bearer ${KEYS.R2_KEY_SECRET}` }, { Authorization: KEYS.IMAGES_API_TOKEN }] as Record<string, string>[]) {
      const attempts = [
        app.request("/image/", { method: "POST", body: uploadForm(fixture("sample.png"), "a.png"), headers }),
        app.request(`/image/${body.result.variants[0]}`, { headers }),
        app.request(`/image/${body.result.id}`, { method: "DELETE", headers }),
      ];
      for (const response of await Promise.all(attempts)) {
        expect(response.status).toBe(403);
        expect(await response.json()).toMatchObject({ code: "FORBIDDEN" });
      }
    }
  });

  it("signs a delivery URL (raw or encoded) and serves the bytes to the signed URL alone", async () => {
    const { app } = service();
    const { body } = await upload(app, "sample.jpg");
    for (const encode of [false, true]) {
      const signed = await sign(app, body.result.variants[0]!, encode);
      expect(signed.status).toBe(200);
      const url = new URL(signed.text);
      expect(`${url.origin}${url.pathname}`).toBe(body.result.variants[0]);
      expect(url.searchParams.get("exp")).toBe(String(Date.parse("2026-11-22T12:00:00Z") / 1000 + 3600));
      expect(url.searchParams.get("sig")).toMatch(/^[0-9a-f]{64}$/);
      const served = await app.request(local(signed.text));
      expect(served.status).toBe(200);
      expect(new Uint8Array(await served.arrayBuffer())).toEqual(fixture("sample.jpg"));
      expect(served.headers.get("content-type")).toBe("image/jpeg");
      expect(served.headers.get("cache-control")).toMatch(/^private/);
      expect(served.headers.get("x-content-type-options")).toBe("nosniff");
      const etag = served.headers.get("etag");
      expect(etag).toBe(`"${body.result.id}"`); // an id names one upload's bytes forever
      const again = await app.request(local(signed.text), { headers: { "If-None-Match": etag! } });
      expect(again.status).toBe(304);
      // RFC 9110 13.1.2: If-None-Match compares weakly, and `*` matches any current image.
      for (const tags of [`W/${etag}`, "*", `"other", W/${etag}`]) {
        expect((await app.request(local(signed.text), { headers: { "If-None-Match": tags } })).status, tags).toBe(304);
      }
      expect((await app.request(local(signed.text), { headers: { "If-None-Match": '"other"' } })).status).toBe(200);
    }
  });

  it("refuses tampered, unsigned and expired URLs with 403", async () => {
    const { app, clock } = service();
    const first = (await upload(app, "sample.png")).body;
    const second = (await upload(app, "sample.jpg")).body;
    const signed = new URL((await sign(app, first.result.variants[0]!)).text);
    const tampered = [
      signed.href.replace(first.result.id, second.result.id), // another image's path
      (() => { const u = new URL(signed.href); u.searchParams.set("exp", String(Number(u.searchParams.get("exp")) + 3600)); return u.href; })(),
      (() => { const u = new URL(signed.href); const s = u.searchParams.get("sig")!; u.searchParams.set("sig", `${s[0] === "a" ? "b" : "a"}${s.slice(1)}`); return u.href; })(),
      (() => { const u = new URL(signed.href); u.searchParams.delete("sig"); return u.href; })(),
      (() => { const u = new URL(signed.href); u.search = ""; return u.href; })(),
      (() => { const u = new URL(signed.href); u.searchParams.set("exp", "soon"); return u.href; })(),
    ];
    for (const url of tampered) {
      const response = await app.request(local(url));
      expect(response.status, url).toBe(403);
      expect(await response.json()).toMatchObject({ code: "FORBIDDEN" });
    }
    expect((await app.request(local(signed.href))).status).toBe(200);
    clock.set("2026-11-22T13:00:01Z"); // one hour and a second later
    expect((await app.request(local(signed.href))).status).toBe(403);
  });

  it("the URL lifetime is configurable", async () => {
    const { app } = service({ IMAGE_URL_TTL_SECONDS: "60" });
    const { body } = await upload(app, "sample.png");
    const url = new URL((await sign(app, body.result.variants[0]!)).text);
    expect(url.searchParams.get("exp")).toBe(String(Date.parse("2026-11-22T12:00:00Z") / 1000 + 60));
  });

  it("signs only its own delivery URLs: other hosts 400, unknown images 404", async () => {
    const { app } = service();
    const { body } = await upload(app, "sample.png");
    const id = body.result.id;
    for (const url of [
      `https://evil.example/image/delivery/${id}/public`,
      // The client's Cloudflare form is signed (tests/client-compat/image.test.ts), but only for this ACCOUNT_HASH.
      `https://imagedelivery.net/another-account-hash/${id}/public`,
      `${PUBLIC}/image/delivery/${id}/public/extra`,
      `${PUBLIC}/image/delivery/${id}/thumbnail`,
      `${PUBLIC}/data/u1/C-1/data.json`,
      "not a url",
    ]) {
      expect((await sign(app, url, true)).status, url).toBe(400);
    }
    expect((await sign(app, `${PUBLIC}/image/delivery/3f0e6a8e-0000-4000-8000-000000000000/public`)).status).toBe(404);
  });

  it("DELETE answers 200 in the Cloudflare shape, then 404; the image is gone", async () => {
    const { app, ports } = service();
    const { body } = await upload(app, "sample.png");
    const signed = (await sign(app, body.result.variants[0]!)).text;
    const deleted = await app.request(`/image/${body.result.id}`, { method: "DELETE", headers: bearer });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ success: true, result: {}, errors: [], messages: [] });
    const again = await app.request(`/image/${body.result.id}`, { method: "DELETE", headers: bearer });
    expect(again.status).toBe(404);
    expect(await again.json()).toMatchObject({ code: "NOT_FOUND" });
    expect((await app.request(local(signed))).status).toBe(404);
    // The image is gone; record history (DATA_HISTORY=on, the default) keeps its bytes and metadata as its deletion mark.
    expect(await ports.images.list("images/")).toEqual([]);
    expect((await ports.images.list("")).sort()).toEqual([`#history/images/${body.result.id}`, `#history/images/${body.result.id}.json`]);
    expect(await ports.images.get(`#history/images/${body.result.id}`)).toEqual(new Uint8Array(fixture("sample.png")));
    expect(JSON.parse(new TextDecoder().decode((await ports.images.get(`#history/images/${body.result.id}.json`))!))).toMatchObject({
      id: body.result.id,
      filename: "sample.png",
      contentType: "image/png",
      deleted: true,
      deletedAt: "2026-11-22T12:00:00.000Z",
    });
    // A signed URL made before the deletion still answers 404, and the image cannot be signed again.
    expect((await app.request(local(signed))).status).toBe(404);
    expect((await sign(app, body.result.variants[0]!)).status).toBe(404);
  });

  it("DELETE with DATA_HISTORY=off keeps nothing of the image, as before", async () => {
    const { app, ports } = service({ DATA_HISTORY: "off" });
    const { body } = await upload(app, "sample.png");
    expect((await app.request(`/image/${body.result.id}`, { method: "DELETE", headers: bearer })).status).toBe(200);
    expect(await ports.images.list("")).toEqual([]);
  });

  it("DELETE of {id}.json (its metadata's key) is a 404 that leaves the image whole", async () => {
    const { app, ports } = service();
    const { body } = await upload(app, "sample.png");
    const signed = (await sign(app, body.result.variants[0]!)).text;
    const stored = (await ports.images.list("")).sort();
    const refused = await app.request(`/image/${body.result.id}.json`, { method: "DELETE", headers: bearer });
    expect(refused.status).toBe(404);
    expect(await refused.json()).toMatchObject({ code: "NOT_FOUND" });
    expect((await ports.images.list("")).sort()).toEqual(stored);
    expect((await app.request(local(signed))).status).toBe(200);
    expect((await sign(app, body.result.variants[0]!)).status).toBe(200);
  });

  it("without PUBLIC_URL, delivery URLs are built on the request's origin and mount", async () => {
    const { app } = testService({}, { clock: fixedClock("2026-11-22T12:00:00Z") });
    const response = await app.request("http://files.lab.example:8080/image/", { method: "POST", body: uploadForm(fixture("sample.png"), "a.png"), headers: bearer });
    const body = (await response.json()) as Upload;
    expect(body.result.variants).toEqual([`http://files.lab.example:8080/image/delivery/${body.result.id}/public`]);
  });
});

describe("image worker: images are what they claim (issue 13 item 9)", () => {
  const refusedUpload = async (app: ReturnType<typeof service>["app"], bytes: Uint8Array, name: string) => {
    const response = await app.request("/image/", { method: "POST", body: uploadForm(bytes, name), headers: bearer });
    return { status: response.status, body: (await response.json()) as { code: string; message: string; details: Record<string, unknown> } };
  };

  it("a 12-byte PNG (the signature and nothing more) is a 400 that says which check failed; nothing is stored", async () => {
    const { app, ports } = service();
    const twelve = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
    const { status, body } = await refusedUpload(app, twelve, "evidence.png");
    expect(status).toBe(400);
    expect(body.code).toBe("VALIDATION_ERROR");
    expect(body.message).toBe("The file is not a readable PNG: the file ends inside a chunk type (byte 12 of 12)");
    expect(body.details).toMatchObject({ filename: "evidence.png", type: "image/png" });
    expect(await ports.images.list("")).toEqual([]);
  });

  it("broken JPEG, PNG and WebP files and oversized dimensions are 400s; nothing is stored", async () => {
    const { app, ports } = service();
    const png = solidPng(30, 20, [9, 9, 9]);
    const badCrc = png.slice();
    const idat = Buffer.from(badCrc).indexOf("IDAT");
    badCrc[idat + 6] = badCrc[idat + 6]! ^ 0xff;
    const jpeg = solidJpeg(30, 20, [9, 9, 9]);
    const webp = fixture("sample.webp");
    const cases: [Uint8Array, string][] = [
      [badCrc, `The file is not a readable PNG: chunk IDAT at byte ${idat - 4} has a wrong CRC`],
      [png.slice(0, png.length - 12), "The file is not a readable PNG: it ends without an IEND chunk"],
      [jpeg.slice(0, jpeg.length - 2), "The file is not a readable JPEG: "],
      [new Uint8Array([...webp, 0, 0]), "The file is not a readable WebP: its RIFF header says the file has 56 bytes, but it has 58"],
      [withPngSize(png, 30_001, 20), "The file is a PNG of 30001 x 20 pixels; images may have at most 30000 pixels a side"],
    ];
    for (const [bytes, message] of cases) {
      const { status, body } = await refusedUpload(app, bytes, "x.bin");
      expect(status, message).toBe(400);
      expect(body.message).toContain(message);
    }
    expect(await ports.images.list("")).toEqual([]);
  });

  it("keeps each image's width and height from its header in its metadata", async () => {
    const { app, ports } = service();
    const images: [Uint8Array, number, number][] = [
      [solidPng(123, 45, [1, 2, 3]), 123, 45],
      [solidJpeg(77, 33, [1, 2, 3]), 77, 33],
      [fixture("sample-lossy.webp"), 64, 48],
      [fixture("sample.tiff"), 64, 48],
    ];
    for (const [bytes, width, height] of images) {
      const response = await app.request("/image/", { method: "POST", body: uploadForm(bytes, "scan"), headers: bearer });
      expect(response.status).toBe(200);
      const { result } = (await response.json()) as Upload;
      const stored = await ports.images.get(`images/${result.id}.json`);
      expect(stored, result.id).not.toBeNull();
      expect(JSON.parse(new TextDecoder().decode(stored!))).toMatchObject({ id: result.id, width, height });
    }
  });
});
