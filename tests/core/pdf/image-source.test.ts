import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encode as encodePng } from "fast-png";
import { createPdfWorker } from "../../../src/core/workers/pdf.ts";
import { closedPort, startHttpServer } from "../../helpers/http-server.ts";
import { fixture } from "../../helpers/images.ts";
import { dataUrl, solidPng } from "./images.ts";
import { fullRequest, testConfig } from "./requests.ts";
import { pdfInfo } from "./poppler.ts";

type ErrorBody = { code: string; message: string };
type Server = Awaited<ReturnType<typeof startHttpServer>> & { connections: number; requests: string[] };

const PNG = solidPng(40, 30, [90, 90, 90]);
/** Noise that does not compress: 270 kB of pixels make a PNG of about that size. */
function noise(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i += 65_536) crypto.getRandomValues(bytes.subarray(i, i + 65_536));
  return bytes;
}
const BIG_PNG = encodePng({ width: 300, height: 300, channels: 3, depth: 8, data: noise(300 * 300 * 3) });

/** A local server that counts connections and requests; `routes` answer by path. */
async function server(routes: Record<string, (res: import("node:http").ServerResponse) => void>): Promise<Server> {
  const requests: string[] = [];
  const started = await startHttpServer((req, _body, res) => {
    requests.push(req.url ?? "");
    const route = routes[req.url ?? ""];
    if (route) route(res);
    else res.writeHead(404).end("not found");
  });
  const result = Object.assign(started, { connections: 0, requests });
  started.server.on("connection", () => result.connections++);
  return result;
}

/** A fetch that records every call and refuses (without connecting) anything but loopback servers. */
function recordingFetch() {
  const calls: string[] = [];
  const doFetch: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    calls.push(url.href);
    if (url.hostname !== "127.0.0.1") throw new Error(`the test refuses to connect to ${url.host}`);
    return fetch(input, init);
  };
  return { calls, fetch: doFetch };
}

function worker(hosts: string, options: { timeoutMs?: number; maxImageBytes?: number } = {}) {
  const recorder = recordingFetch();
  const app = createPdfWorker({ config: testConfig({ PDF_IMAGE_HOSTS: hosts }), fetch: recorder.fetch, options });
  const render = async (imageUrl: string) => {
    const response = await app.request("/", { method: "POST", body: JSON.stringify(fullRequest({}, { imageUrl })) });
    const body = response.headers.get("Content-Type") === "application/pdf" ? new Uint8Array(await response.arrayBuffer()) : ((await response.json()) as ErrorBody);
    return { status: response.status, body };
  };
  return { render, calls: recorder.calls };
}

let images: Server;
let other: Server;
let hang: Server;
beforeAll(async () => {
  images = await server({
    "/img.png": (res) => res.writeHead(200, { "Content-Type": "image/png" }).end(PNG),
    "/big.png": (res) => res.writeHead(200, { "Content-Type": "image/png", "Content-Length": String(BIG_PNG.length) }).end(BIG_PNG),
    "/big-chunked.png": (res) => {
      res.writeHead(200, { "Content-Type": "image/png" });
      for (let i = 0; i < BIG_PNG.length; i += 16384) res.write(BIG_PNG.subarray(i, i + 16384));
      res.end();
    },
    "/text": (res) => res.writeHead(200, { "Content-Type": "image/png" }).end("just text"),
    "/gif": (res) => res.writeHead(200, { "Content-Type": "image/gif" }).end(fixture("sample.gif")),
    "/fail": (res) => res.writeHead(500).end("upstream broke"),
    "/cut": (res) => {
      res.writeHead(200, { "Content-Type": "image/png", "Content-Length": "100000" });
      res.write(PNG.subarray(0, 50));
      setTimeout(() => res.socket?.destroy(), 20);
    },
    "/relative": (res) => res.writeHead(302, { Location: "/img.png" }).end(),
    "/loop": (res) => res.writeHead(302, { Location: "/loop" }).end(),
    "/no-location": (res) => res.writeHead(302).end(),
  });
  other = await server({ "/img.png": (res) => res.writeHead(200, { "Content-Type": "image/png" }).end(PNG) });
  // Accepts, reads, never answers.
  hang = await server({ "/img.png": () => {} });
});
afterAll(async () => {
  await Promise.all([images.close(), other.close(), hang.close()]);
});

const port = (s: Server) => new URL(s.url).port;

describe("image fetch: refused URLs (SSRF)", () => {
  it("refuses every local, private, link-local, metadata and unlisted address with 400 and connects nowhere", async () => {
    const { render, calls } = worker("images.lab.example");
    const p = port(other);
    const refused: [string, string][] = [
      [`http://127.0.0.1:${p}/img.png`, "loopback"],
      [`http://localhost:${p}/img.png`, "loopback"],
      [`http://app.localhost:${p}/img.png`, "loopback"],
      [`http://[::1]:${p}/img.png`, "loopback"],
      [`http://[::ffff:127.0.0.1]:${p}/img.png`, "loopback"],
      [`http://2130706433:${p}/img.png`, "loopback"],
      [`http://0x7f.0.0.1:${p}/img.png`, "loopback"],
      [`http://127.1.2.3:${p}/img.png`, "loopback"],
      [`http://0.0.0.0:${p}/img.png`, "unspecified"],
      [`http://[::]:${p}/img.png`, "unspecified"],
      ["http://169.254.169.254/latest/meta-data/iam/security-credentials/", "metadata"],
      ["http://[::ffff:169.254.169.254]/latest/meta-data/", "metadata"],
      ["http://169.254.10.20/", "link-local"],
      ["http://[fe80::1]/img.png", "link-local"],
      ["http://[fd00:ec2::254]/latest/meta-data/", "unique local"],
      ["http://[fc00::1]/img.png", "unique local"],
      ["http://10.0.0.5/img.png", "private"],
      ["http://172.16.0.1/img.png", "private"],
      ["http://172.31.255.255/img.png", "private"],
      ["http://192.168.1.10/img.png", "private"],
      ["http://100.64.0.1/img.png", "shared"],
      ["http://images.attacker.example/img.png", "not in PDF_IMAGE_HOSTS"],
      ["http://images.lab.example.attacker.example/img.png", "not in PDF_IMAGE_HOSTS"],
      ["http://8.8.8.8/img.png", "not in PDF_IMAGE_HOSTS"],
      ["https://user:secret@images.lab.example/img.png", "credentials"],
      [`http://images.lab.example@127.0.0.1:${p}/img.png`, "credentials"],
    ];
    for (const [url, kind] of refused) {
      const { status, body } = await render(url);
      expect(status, url).toBe(400);
      expect((body as ErrorBody).code, url).toBe("VALIDATION_ERROR");
      expect((body as ErrorBody).message, url).toContain(kind);
    }
    expect(calls).toEqual([]);
    expect(other.connections).toBe(0);
  });

  it("fetches from a listed host, and only on the listed port when the entry names one", async () => {
    const { render, calls } = worker(`127.0.0.1:${port(images)}`);
    const ok = await render(`${images.url}/img.png`);
    expect(ok.status).toBe(200);
    expect(pdfInfo(ok.body as Uint8Array)["Pages"]).toBe("1");
    const before = other.connections;
    const wrongPort = await render(`${other.url}/img.png`);
    expect(wrongPort.status).toBe(400);
    expect(other.connections).toBe(before);
    expect(calls).toEqual([`${images.url}/img.png`]);
  });

  it("a listed loopback address is allowed: explicitly listed wins", async () => {
    const { render } = worker(`127.0.0.1`);
    expect((await render(`${other.url}/img.png`)).status).toBe(200);
  });
});

describe("image fetch: redirects", () => {
  it("never follows a redirect to a host that is not listed, and never connects to it", async () => {
    const target = await server({ "/img.png": (res) => res.writeHead(200, { "Content-Type": "image/png" }).end(PNG) });
    const jump = await server({
      "/to-other": (res) => res.writeHead(302, { Location: `${target.url}/img.png` }).end(),
      "/to-metadata": (res) => res.writeHead(307, { Location: "http://169.254.169.254/latest/meta-data/" }).end(),
      "/to-name": (res) => res.writeHead(301, { Location: "https://images.attacker.example/x.png" }).end(),
      "/to-file": (res) => res.writeHead(302, { Location: "file:///etc/passwd" }).end(),
    });
    try {
      const { render, calls } = worker(`127.0.0.1:${port(jump)}`);
      for (const [path, kind] of [["/to-other", "loopback"], ["/to-metadata", "metadata"], ["/to-name", "not in PDF_IMAGE_HOSTS"], ["/to-file", "http(s)"]]) {
        const { status, body } = await render(`${jump.url}${path}`);
        expect(status, path).toBe(400);
        expect((body as ErrorBody).message, path).toContain("redirect");
        expect((body as ErrorBody).message, path).toContain(kind);
      }
      expect(target.connections).toBe(0);
      expect(calls.every((url) => url.startsWith(jump.url))).toBe(true);
    } finally {
      await Promise.all([target.close(), jump.close()]);
    }
  });

  it("follows redirects between listed hosts and relative ones, up to five", async () => {
    const jump = await server({ "/to-images": (res) => res.writeHead(301, { Location: `${images.url}/img.png` }).end() });
    try {
      const { render, calls } = worker(`127.0.0.1:${port(jump)},127.0.0.1:${port(images)}`);
      expect((await render(`${jump.url}/to-images`)).status).toBe(200);
      expect(calls).toEqual([`${jump.url}/to-images`, `${images.url}/img.png`]);
      expect((await render(`${images.url}/relative`)).status).toBe(200);
      const loop = await render(`${images.url}/loop`);
      expect(loop.status).toBe(400);
      expect((loop.body as ErrorBody).message).toContain("more than 5");
      expect((await render(`${images.url}/no-location`)).status).toBe(502);
    } finally {
      await jump.close();
    }
  });
});

describe("image fetch: limits and failures", () => {
  it("refuses an image over the size cap, declared or streamed, with 400", async () => {
    const { render } = worker(`127.0.0.1:${port(images)}`, { maxImageBytes: 100_000 });
    for (const path of ["/big.png", "/big-chunked.png"]) {
      const { status, body } = await render(`${images.url}${path}`);
      expect(status, path).toBe(400);
      expect((body as ErrorBody).message).toContain("larger than the limit of 100000 bytes");
    }
    const tooBig = await render(dataUrl(BIG_PNG));
    expect(tooBig.status).toBe(400);
    expect((tooBig.body as ErrorBody).message).toContain("larger than");
    expect((await worker("x", { maxImageBytes: BIG_PNG.length + 10 }).render(dataUrl(BIG_PNG))).status).toBe(200);
  });

  it("gives up on a host that does not answer within the timeout with 504", async () => {
    const { render } = worker(`127.0.0.1:${port(hang)}`, { timeoutMs: 300 });
    const started = Date.now();
    const { status, body } = await render(`${hang.url}/img.png`);
    expect(status).toBe(504);
    expect((body as ErrorBody).message).toContain("300 ms");
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("answers 400 for the host's refusals and non-images, 502 for its failures", async () => {
    const closed = await closedPort();
    const { render } = worker(`127.0.0.1`);
    const cases: [string, number, string][] = [
      [`${images.url}/missing.png`, 400, "HTTP 404"],
      [`${images.url}/text`, 400, "not an image"],
      [`${images.url}/gif`, 400, "GIF"],
      [`${images.url}/fail`, 502, "HTTP 500"],
      [`${images.url}/cut`, 502, "broke off"],
      [`http://127.0.0.1:${closed}/img.png`, 502, "could not be reached"],
    ];
    for (const [url, expected, message] of cases) {
      const { status, body } = await render(url);
      expect(status, url).toBe(expected);
      expect((body as ErrorBody).message).toContain(message);
    }
  });

  it("reads data: URLs, base64 or percent-encoded, and refuses broken ones", async () => {
    const { render, calls } = worker("");
    expect((await render(dataUrl(PNG))).status).toBe(200);
    const percent = `data:image/png,${Array.from(PNG, (b) => `%${b.toString(16).padStart(2, "0")}`).join("")}`;
    expect((await render(percent)).status).toBe(200);
    const broken = await render("data:image/png;base64,iVBOR!!!");
    expect(broken.status).toBe(400);
    expect((broken.body as ErrorBody).message).toContain("base64");
    expect((await render("data:image/png;base64")).status).toBe(400);
    expect(calls).toEqual([]);
  });
});
