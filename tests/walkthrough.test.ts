/**
 * docs/walkthrough.md stays true: its `sh` blocks run as written, in order, in one bash, with
 * curl against a real `serve` started by the first block. Two things differ from a reader's
 * shell, both for the test machine: the port (8787 becomes a free one, as other suites run in
 * parallel) and `npx forensic-annotation`, which runs this checkout's built bin (what npx
 * runs once the package is installed). The image is one of the test fixtures as `scan.jpg`.
 */
import { spawn } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closedPort } from "./helpers/http-server.ts";
import { requireTool } from "./helpers/system-tools.ts";
import { pdfText } from "./core/pdf/poppler.ts";
import { parseServeFlags, type ServeFlags } from "../src/adapters/server/command.ts";
import { spawnServe } from "./helpers/spawn-serve.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const CLI = join(root, "dist/src/adapters/node/cli.js");
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-walkthrough-"));
  await copyFile(join(root, "tests/fixtures/sample.jpg"), join(dir, "scan.jpg"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The walkthrough's `sh` blocks, in order. */
async function shellBlocks(): Promise<string[]> {
  const text = await readFile(join(root, "docs/walkthrough.md"), "utf8");
  return [...text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

function runBash(script: string, cwd: string, timeoutMs: number): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    // Its own process group: the script's `trap kill $(jobs -p)` stops the background job's
    // subshell but not the node it runs (npx is a shell function here), so the group goes at the end.
    const proc = spawn("bash", ["-c", script], { cwd, detached: true, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? dir, CLI }, stdio: ["ignore", "pipe", "pipe"] });
    const killGroup = (signal: NodeJS.Signals): void => {
      try {
        process.kill(-proc.pid!, signal);
      } catch {
        // The group is gone already.
      }
    };
    let out = "";
    let err = "";
    proc.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    proc.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    const timer = setTimeout(() => killGroup("SIGKILL"), timeoutMs);
    proc.on("exit", () => killGroup("SIGTERM"));
    proc.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

describe("docs/walkthrough.md", () => {
  it("runs as written against a real serve: keys, user, case, image, signed URL, audit entry, report, export and import", async () => {
    requireTool("curl", "curl");
    const blocks = await shellBlocks();
    expect(blocks.length).toBeGreaterThanOrEqual(8);
    expect(blocks[0]).toContain("npx forensic-annotation serve --port 8787");
    // The data folder serve uses by default (and README's npm start): ./forensic-data was another.
    expect(blocks[0]).toContain(`--data ${(parseServeFlags([]) as ServeFlags).data} `);
    const port = await closedPort();
    const prelude = [
      "set -euo pipefail",
      // Whatever fails, the serve started in the background goes with the script.
      "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT",
      'npx() { if [ "$1" = forensic-annotation ]; then shift; node "$CLI" "$@"; else command npx "$@"; fi; }',
    ].join("\n");
    const script = `${prelude}\n${blocks.join("\n").replaceAll("8787", String(port))}`;
    const { code, out, err } = await runBash(script, dir, 120_000);
    expect(code, `${err}\n${out}`).toBe(0);
    const lines = out.split("\n");

    expect(lines.shift()).toMatch(new RegExp(`^ready\\s+http://127\\.0\\.0\\.1:${port} \\(data in ${dir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/\\.forensic-data\\)$`));
    expect(lines[0]).toBe('{"ok":true}');
    const user = JSON.parse(lines[1]!) as Record<string, unknown>;
    expect(user).toMatchObject({ uid: "examiner-1", email: "examiner@lab.example", firstName: "Ada", permitted: true, cases: [] });
    expect(JSON.parse(lines[2]!)).toMatchObject({ uid: "examiner-1", cases: [{ caseNumber: "CASE-1" }] });
    expect(JSON.parse(lines[3]!)).toEqual({ success: true });
    const imageId = lines[4]!;
    expect(imageId).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(lines[5]!)).toEqual({ success: true });
    expect(lines[6]).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/image/delivery/${imageId}/public\\?exp=\\d+&sig=`));
    expect(lines[7]).toBe("200 image/jpeg");
    expect(JSON.parse(lines[8]!)).toMatchObject({ success: true });
    const trail = JSON.parse(lines[9]!) as { entries: { action: string }[]; total: number };
    expect(trail.total).toBe(1);
    expect(trail.entries[0]).toMatchObject({ action: "case-create", userId: "examiner-1" });
    expect(lines[10]).toBe("200 application/pdf");
    expect(lines[11]).toBe("200 application/zip");
    expect(JSON.parse(lines[12]!)).toMatchObject({ success: true, caseNumber: "CASE-1", isReadOnly: true, filesImported: 1, signatureValid: "unsigned" });

    // The stored case lists the image; the report is a real PDF with the case and the notes.
    const stored = JSON.parse(await readFile(join(dir, ".forensic-data/data/examiner-1/CASE-1/data.json"), "utf8")) as unknown;
    expect(stored).toMatchObject({ caseNumber: "CASE-1", files: [{ id: imageId, originalFilename: "scan.jpg" }] });
    const text = pdfText(new Uint8Array(await readFile(join(dir, "report.pdf"))));
    expect(text).toContain("CASE-1");
    expect(text).toContain("Matching striations.");
    // The keys were printed once and kept where the walkthrough reads them.
    expect(await readFile(join(dir, "serve.log"), "utf8")).toMatch(/^generated R2_KEY_SECRET=[0-9a-f]+ \(kept in .*secrets\.json; shown once\)$/m);
  }, 150_000);

  it("with an npm start still running in the same folder, serve says the port is in use, writes nothing, and every step works against the running server", async () => {
    requireTool("curl", "curl");
    // `npm start` in this folder: serve with its default data folder, ./.forensic-data.
    await mkdir(join(dir, "running"));
    const running = await spawnServe({ dataDir: join(dir, "running", ".forensic-data"), cwd: join(dir, "running") });
    try {
      const port = new URL(running.url).port;
      await copyFile(join(dir, "scan.jpg"), join(dir, "running", "scan.jpg"));
      const secrets = await readFile(join(dir, "running", ".forensic-data", "secrets.json"), "utf8");
      // Every block but the last (`kill %1`: this serve stopped at once).
      const blocks = (await shellBlocks()).slice(0, -1);
      const script = `set -euo pipefail\nnpx() { if [ "$1" = forensic-annotation ]; then shift; node "$CLI" "$@"; else command npx "$@"; fi; }\n${blocks.join("\n").replaceAll("8787", port)}`;
      const { code, out, err } = await runBash(script, join(dir, "running"), 120_000);
      expect(code, `${err}\n${out}`).toBe(0);
      const lines = out.split("\n");
      expect(lines[0]).toBe(`127.0.0.1:${port} is already in use: stop what listens there or pass another --port (0 picks a free one)`);
      expect(lines[1]).toBe('{"ok":true}');
      expect(JSON.parse(lines[2]!)).toMatchObject({ uid: "examiner-1", cases: [] });
      expect(lines[lines.length - 4]).toBe("200 application/pdf");
      expect(lines[lines.length - 3]).toBe("200 application/zip");
      expect(JSON.parse(lines[lines.length - 2]!)).toMatchObject({ success: true, caseNumber: "CASE-1", filesImported: 1 });
      // The refused serve wrote nothing: the keys are the running server's.
      expect(await readFile(join(dir, "running", ".forensic-data", "secrets.json"), "utf8")).toBe(secrets);
    } finally {
      await running.stop("SIGTERM");
    }
  }, 150_000);
});
