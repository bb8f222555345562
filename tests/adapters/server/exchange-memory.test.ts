/**
 * The exchange worker under a real `serve`: a case of 100 images of 2 MB exported and imported
 * over HTTP raises the server's resident memory by at most 2 x the largest image + 64 MB (Node,
 * Bun and Deno, whose serve collects dropped buffers in time: docs/exchange.md#memory-over-http),
 * each server exporting the case itself,
 * read from /proc (Linux);
 * a client that goes away in the middle of an export or an import leaves nothing behind (Node,
 * Bun and Deno).
 */
import { readdirSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFilePorts } from "../../../src/adapters/server/files/file-ports.ts";
import { createLocalImageHost } from "../../../src/core/images/local-host.ts";
import { storageKeys } from "../../../src/core/storage/keys.ts";
import { systemClock } from "../../../src/core/ports.ts";
import { crc32 } from "../../../src/core/encoding/crc32.ts";
import { fixture } from "../../helpers/images.ts";
import { type Runtime, spawnServe, type Served } from "../../helpers/spawn-serve.ts";

const MIB = 1024 * 1024;
const IMAGES = 100;
const IMAGE_BYTES = 2 * MIB;
const KEY = "mem-data-key";
const headers = { "X-Custom-Auth-Key": KEY };
const linux = existsSync("/proc/self/status");

/** sample.png with a private ancillary chunk making it `size` bytes, its bytes drawn from `seed`. */
function bigPng(size: number, seed: number): Uint8Array<ArrayBuffer> {
  const png = fixture("sample.png");
  const filler = size - png.length - 12;
  const chunk = new Uint8Array(12 + filler);
  const view = new DataView(chunk.buffer);
  view.setUint32(0, filler);
  chunk.set([0x70, 0x72, 0x56, 0x74], 4); // "prVt": ancillary, private
  for (let i = 0; i < filler; i += 4096) chunk[8 + i] = (seed + i) & 0xff;
  view.setUint32(8 + filler, crc32(chunk.subarray(4, 8 + filler)));
  const out = new Uint8Array(size);
  out.set(png.subarray(0, 33), 0); // signature and IHDR
  out.set(chunk, 33);
  out.set(png.subarray(33), 33 + chunk.length);
  return out;
}

const status = (pid: number) => readFileSync(`/proc/${pid}/status`, "utf8");
const kb = (text: string, field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)![1]) * 1024;

describe.skipIf(!linux)("exchange over HTTP under serve: bounded memory, nothing left behind", () => {
  let dir: string;
  let dataDir: string;
  const RUNTIMES = ["node", "bun", "deno"] as const satisfies readonly Runtime[];
  // One case for every runtime's server (each in turn holds the data folder); each cuts an import as its own reviewer.
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "fa-exchange-memory-"));
    dataDir = join(dir, "data");
    const ports = createFilePorts(dataDir);
    const user = (uid: string, cases: string[]) => JSON.stringify({
      uid, email: `${uid}@lab.example`, firstName: uid, lastName: "X", company: "Lab", permitted: true,
      cases: cases.map((caseNumber) => ({ caseNumber, createdAt: "2026-11-01T00:00:00.000Z" })), createdAt: "2026-11-01T00:00:00.000Z",
    });
    await ports.users.put("analyst", user("analyst", ["BIG-1"]));
    for (const runtime of RUNTIMES) await ports.users.put(`reviewer-${runtime}`, user(`reviewer-${runtime}`, []));
    const host = createLocalImageHost({ store: ports.images, signingKey: undefined, deliveryBase: "http://localhost/image/delivery", clock: systemClock, urlLifetimeSeconds: 60 });
    const ids: string[] = [];
    for (let i = 0; i < IMAGES; i++) ids.push((await host.upload({ bytes: bigPng(IMAGE_BYTES, i), filename: `i${i}.png`, contentType: "image/png" })).id);
    await ports.data.put(storageKeys.case("analyst", "BIG-1"), new TextEncoder().encode(JSON.stringify({
      caseNumber: "BIG-1",
      files: ids.map((id, i) => ({ id, originalFilename: `item-${i}.png`, uploadedAt: "2026-11-02T00:00:00.000Z" })),
      createdAt: "2026-11-01T00:00:00.000Z",
    })));
  }, 120_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  }, 30_000);
  // The package, exported by a runtime's server (each one's own in the memory test, whose export is measured) and imported or cut by every one.
  let zip: Uint8Array | undefined;
  const exportedPackage = async (url: string, fresh = false): Promise<Uint8Array> => {
    if (zip !== undefined && !fresh) return zip;
    const exported = await fetch(`${url}/exchange/analyst/cases/BIG-1`, { headers });
    expect(exported.status).toBe(200);
    return zip = new Uint8Array(await exported.arrayBuffer());
  };

  for (const runtime of RUNTIMES) describe(`[${runtime}]`, () => {
    let served: Served;
    const reviewer = `reviewer-${runtime}`;
    beforeAll(async () => {
      served = await spawnServe({ runtime, dataDir, env: { R2_KEY_SECRET: KEY, RATE_LIMITS: "off", LOG_LEVEL: "off" }, timeoutMs: 60_000 });
    }, 90_000);
    afterAll(async () => {
      await served?.stop("SIGTERM");
    }, 30_000);
    /** The server's resident memory now, and its peak since the last call (reset to now after reading). */
    const memory = () => {
      const pid = served.proc.pid!;
      const text = status(pid);
      writeFileSync(`/proc/${pid}/clear_refs`, "5");
      return { rss: kb(text, "VmRSS"), peak: kb(text, "VmHWM") };
    };
    const bound = 2 * IMAGE_BYTES + 64 * MIB;

    // Deno's V8 collects array buffers only once ~64 MiB of them were allocated, and Bun's collector
    // late too: serve there collects every 24 MiB (src/adapters/server/memory-reclaim.ts); without
    // it Deno's export grew +80 MiB and failed here.
    it(`[${runtime}] export and import of 100 images of 2 MB: the server's peak RSS grows by at most 2 x the largest image + 64 MB`, async () => {
      // Warmed up: the routes, the signer and the stores have run once.
      expect((await fetch(`${served.url}/exchange/analyst/cases/NONE`, { headers })).status).toBe(404);
      const before = memory();
      const zip = await exportedPackage(served.url, true);
      expect(zip.length).toBeGreaterThan(IMAGES * IMAGE_BYTES);
      const afterExport = memory();
      expect(afterExport.peak - before.rss, `export: peak ${afterExport.peak / MIB} MiB from ${before.rss / MIB} MiB`).toBeLessThanOrEqual(bound);

      const imported = await fetch(`${served.url}/exchange/${reviewer}/imports`, { method: "POST", headers: { ...headers, "Content-Type": "application/zip" }, body: zip as BodyInit });
      expect(imported.status, await imported.clone().text()).toBe(200);
      expect(await imported.json()).toMatchObject({ success: true, filesImported: IMAGES });
      const afterImport = memory();
      expect(afterImport.peak - afterExport.rss, `import: peak ${afterImport.peak / MIB} MiB from ${afterExport.rss / MIB} MiB`).toBeLessThanOrEqual(bound);
      expect(readdirSync(join(dataDir, "images", "exchange-spool"))).toEqual([]);
    }, 300_000);

    it(`[${runtime}] a client that goes away mid-export or mid-import leaves nothing behind: the export is audited as cancelled, the package's chunks are removed`, async () => {
      // Counted: an earlier runtime's server left its own cancelled export in the same trail.
      const cancelled = async () => {
        const trail = await (await fetch(`${served.url}/audit/audit?userId=analyst`, { headers })).json() as { entries: { action: string; details: { validationErrors: string[] } }[] };
        return trail.entries.filter((entry) => entry.action === "case-export" && entry.details.validationErrors.some((error) => /cancelled/.test(error))).length;
      };
      const earlier = await cancelled();
      const aborting = new AbortController();
      const exported = await fetch(`${served.url}/exchange/analyst/cases/BIG-1`, { headers, signal: aborting.signal });
      const reader = exported.body!.getReader();
      await reader.read();
      aborting.abort();
      for (let tries = 0; tries < 200 && (await cancelled()) === earlier; tries++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await cancelled()).toBe(earlier + 1);

      // Half a package, then the connection goes.
      const zip = await exportedPackage(served.url);
      const half = zip.subarray(0, zip.length / 2);
      let sent = 0;
      const uploading = new AbortController();
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= half.length) {
            uploading.abort();
            return new Promise(() => {});
          }
          controller.enqueue(half.subarray(sent, sent + MIB));
          sent += MIB;
        },
      });
      await fetch(`${served.url}/exchange/${reviewer}/imports?overwrite=true`, { method: "POST", headers, body, duplex: "half", signal: uploading.signal } as RequestInit).catch(() => undefined);
      const spool = join(dataDir, "images", "exchange-spool");
      const leftover = () => existsSync(spool) ? readdirSync(spool) : [];
      for (let tries = 0; tries < 200 && leftover().length > 0; tries++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(leftover()).toEqual([]);
      // The service still answers.
      expect((await fetch(`${served.url}/health`)).status).toBe(200);
    }, 120_000);
  });
});
