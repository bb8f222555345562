/**
 * Issue 42, item 7: the request-body bytes `serve` reads at once are bounded
 * (MAX_BODY_BYTES_IN_FLIGHT), on Node, Bun and Deno. Many large uploads fired at once at a
 * spawned server over real sockets: its peak RSS (VmHWM) stays under a bound, the refused ones
 * answer 503 with Retry-After in the standard body, and every upload answered 200 reads back
 * whole through its signed delivery URL. Without the budget every body was read at once (60
 * uploads of 20 MB took a server to 1.13 GB).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { once } from "node:events";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, type Served, spawnServe } from "../../helpers/spawn-serve.ts";
import { noisePng, uploadForm } from "../../helpers/images.ts";

const MB = 1024 * 1024;
const TOKEN = "flight-images-token";
const UPLOADS = 60;
const IMAGE_BYTES = 4 * MB;
// Two uploads of 4 MB fit; 60 of them at once read whole hold close to a gigabyte.
const BUDGET = 10 * MB;
const RSS_BOUND = 320 * MB;
// How long a body waits in line before its 503 (BODY_WAIT_SECONDS; 10 by default).
const WAIT_SECONDS = 3;

/** The process's peak resident set size, from /proc (Linux). */
function peakRss(pid: number): number {
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.length), Buffer.from(b.buffer, b.byteOffset, b.length)) === 0;
}

for (const runtime of ["node", "bun", "deno"] as const satisfies readonly Runtime[]) {
  describe.runIf(process.platform === "linux")(`[${runtime}] bodies in flight`, () => {
    let dir: string;
    let served: Served;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), `fa-flight-${runtime}-`));
      served = await spawnServe({
        runtime,
        dataDir: join(dir, "data"),
        env: { IMAGES_API_TOKEN: TOKEN, RATE_LIMITS: "off", MAX_BODY_BYTES_IN_FLIGHT: String(BUDGET), BODY_WAIT_SECONDS: String(WAIT_SECONDS), HMAC_KEY: "flight-hmac", ACCOUNT_HASH: "flight-hash" },
        timeoutMs: 60_000,
      });
    }, 90_000);
    afterAll(async () => {
      await served?.stop("SIGTERM");
      await rm(dir, { recursive: true, force: true });
    }, 30_000);

    it(`[${runtime}] ${UPLOADS} uploads of 4 MB at once: RSS under ${RSS_BOUND / MB} MB, 503s carry Retry-After, every 200 reads back whole`, async () => {
      const bearer = { Authorization: `Bearer ${TOKEN}` };
      const images = Array.from({ length: 4 }, () => noisePng(IMAGE_BYTES));
      const answers = await Promise.all(Array.from({ length: UPLOADS }, async (_, n) => {
        const image = images[n % images.length]!;
        let response: Response;
        try {
          response = await fetch(`${served.url}/image/`, { method: "POST", headers: bearer, body: uploadForm(image, `item-${n}.png`) });
        } catch (err) {
          return { image, status: 0, retryAfter: null, body: { message: String((err as Error).cause ?? err) } as { result?: { variants: string[] }; code?: string; message?: string } };
        }
        const body = (await response.json()) as { result?: { variants: string[] }; code?: string; message?: string };
        return { image, status: response.status, retryAfter: response.headers.get("retry-after"), body };
      }));
      const statuses = answers.map((answer) => answer.status);
      expect(statuses.filter((status) => status !== 200 && status !== 503), "only 200 and 503").toEqual([]);
      // How many wait too long depends on the machine's speed: the stalled upload below makes one for sure.
      const refused = answers.filter((answer) => answer.status === 503);
      for (const answer of refused) {
        expect(Number(answer.retryAfter), "Retry-After in seconds").toBeGreaterThan(0);
        expect(answer.body.code).toBe("SERVER_ERROR");
        expect(answer.body.message).toMatch(/try again/);
      }
      const stored = answers.filter((answer) => answer.status === 200);
      expect(stored.length, "some uploads were stored").toBeGreaterThan(1);
      expect(peakRss(served.proc.pid!), "the server's peak RSS").toBeLessThan(RSS_BOUND);
      for (const answer of stored) {
        const signing = await fetch(`${served.url}/image/${answer.body.result!.variants[0]}`, { headers: bearer });
        expect(signing.status).toBe(200);
        const delivered = await fetch(await signing.text());
        expect(delivered.status).toBe(200);
        expect(equalBytes(new Uint8Array(await delivered.arrayBuffer()), answer.image), "the stored image is the one sent").toBe(true);
      }
    }, 120_000);

    // On every runtime's default server; Bun.serve (BUN_SERVER=bun-serve) would cut a request whose
    // body is still arriving after ~10 s (its idle timer ignores body bytes).
    it(`[${runtime}] a slow upload holds the budget: the next (12 MB) waits, then reads 503 with Retry-After; once it goes, uploads are stored`, async () => {
      const bearer = { Authorization: `Bearer ${TOKEN}` };
      const { port } = new URL(served.url);
      const stalled = connect(Number(port), "127.0.0.1");
      await once(stalled, "connect");
      const boundary = "stalled-boundary";
      // Declares the whole budget and sends the start of its file part.
      stalled.write(
        `POST /image/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${BUDGET}\r\n\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.png"\r\nContent-Type: image/png\r\n\r\n${"x".repeat(1024)}`,
      );
      // A byte now and then: a slow client, not an idle one (Bun closes a connection idle for 10 s).
      const trickle = setInterval(() => stalled.write("x"), 500);
      try {
        // One that arrives before the server has read the slow request's headers is stored: tried again until one finds the budget held.
        let started = Date.now();
        let waited = await fetch(`${served.url}/image/`, { method: "POST", headers: bearer, body: uploadForm(noisePng(12 * MB), "next.png") });
        for (let attempt = 0; attempt < 4 && waited.status === 200; attempt++) {
          started = Date.now();
          waited = await fetch(`${served.url}/image/`, { method: "POST", headers: bearer, body: uploadForm(noisePng(12 * MB), "next.png") });
        }
        expect(waited.status).toBe(503);
        expect(Number(waited.headers.get("retry-after"))).toBeGreaterThan(0);
        const body = (await waited.json()) as { code: string; message: string };
        expect(body.code).toBe("SERVER_ERROR");
        expect(body.message).toMatch(/try again/);
        expect(Date.now() - started, "it waited in line first").toBeGreaterThanOrEqual(WAIT_SECONDS * 1000 - 100);
      } finally {
        clearInterval(trickle);
        stalled.destroy();
      }
      // The stalled body's reservation is given back when its read fails.
      const image = noisePng(64 * 1024);
      let stored: Response | undefined;
      for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
        stored = await fetch(`${served.url}/image/`, { method: "POST", headers: bearer, body: uploadForm(image, "after.png") });
        if (stored.status !== 503) break;
      }
      expect(stored!.status).toBe(200);
    }, 60_000);

    // On every runtime's default server; Bun.serve (BUN_SERVER=bun-serve) would cut a request whose
    // body is still arriving after ~10 s (its idle timer ignores body bytes).
    it(`[${runtime}] a slow /pdf body holds the same budget: an upload meanwhile waits, then 503 with Retry-After`, async () => {
      const { port } = new URL(served.url);
      const stalled = connect(Number(port), "127.0.0.1");
      await once(stalled, "connect");
      stalled.on("error", () => {});
      stalled.write(`POST /pdf HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${BUDGET}\r\n\r\n{"imageUrl":"data:image/png;base64,`);
      const trickle = setInterval(() => stalled.write("A"), 500);
      try {
        // An upload that arrives before the server has read the /pdf request's headers is stored: tried again until one finds the budget held.
        let waited: Response | undefined;
        for (let attempt = 0; attempt < 5 && waited?.status !== 503; attempt++) {
          waited = await fetch(`${served.url}/image/`, { method: "POST", headers: { Authorization: `Bearer ${TOKEN}` }, body: uploadForm(noisePng(64 * 1024), "next.png") });
        }
        expect(waited!.status).toBe(503);
        expect(Number(waited!.headers.get("retry-after"))).toBeGreaterThan(0);
        expect(((await waited!.json()) as { message: string }).message).toMatch(/try again/);
      } finally {
        clearInterval(trickle);
        stalled.destroy();
      }
    }, 60_000);
  });
}
