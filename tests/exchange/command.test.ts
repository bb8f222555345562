import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { strToU8, unzipSync, zipSync, zlibSync } from "fflate";
import ExcelJS from "exceljs";
import { exportJWK, generateKeyPair } from "jose";
import { createFilePorts } from "../../src/adapters/server/files/file-ports.ts";
import { runExchangeCommand } from "../../src/adapters/server/exchange-command.ts";
import { createLocalImageHost } from "../../src/core/images/local-host.ts";
import { storageKeys } from "../../src/core/storage/keys.ts";
import { verifyCaseCsv } from "../../src/core/exchange/mod.ts";
import { fixture } from "../helpers/images.ts";
import { systemClock } from "../../src/core/ports.ts";
import { createKeyHistories } from "../../src/core/history/mod.ts";
import { crc32 } from "../../src/core/encoding/crc32.ts";
import { readAuditTrail } from "../../src/core/audit/trail.ts";
import { verifyAuditTrail } from "../../src/core/audit/verify.ts";
import { buildZip, peakRss, zeros } from "./zip-bombs.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
let dir: string;
let dataDir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-exchange-"));
  dataDir = join(dir, "data");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The analyst's case on disk under --data, as serve would have stored it. */
async function seedFiles(): Promise<string[]> {
  const ports = createFilePorts(dataDir);
  const user = (uid: string, cases: string[]) => ({
    uid, email: `${uid}@lab.example`, firstName: uid, lastName: "X", company: "Lab", permitted: true,
    cases: cases.map((caseNumber) => ({ caseNumber, createdAt: "2026-11-01T00:00:00.000Z" })), createdAt: "2026-11-01T00:00:00.000Z",
  });
  await ports.users.put("analyst", JSON.stringify(user("analyst", ["C-1"])));
  await ports.users.put("reviewer", JSON.stringify(user("reviewer", [])));
  const host = createLocalImageHost({ store: ports.images, signingKey: undefined, deliveryBase: "http://localhost/image/delivery", clock: systemClock, urlLifetimeSeconds: 60 });
  const ids: string[] = [];
  for (const name of ["sample.png", "sample.jpg"]) ids.push((await host.upload({ bytes: fixture(name), filename: name, contentType: "image/png" })).id);
  const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
  await ports.data.put(storageKeys.case("analyst", "C-1"), encode({
    caseNumber: "C-1",
    files: ids.map((id, i) => ({ id, originalFilename: `item-${i}.png`, uploadedAt: "2026-11-02T00:00:00.000Z" })),
    createdAt: "2026-11-01T00:00:00.000Z",
  }));
  await ports.data.put(storageKeys.annotations("analyst", "C-1", ids[0]!), encode({
    leftCase: "C-1", rightCase: "C-1", leftItem: "1", rightItem: "2", includeConfirmation: false, updatedAt: "2026-11-03T00:00:00.000Z",
    // A colour name as well as a hex code: the data worker stores it and the report draws it, so the package imports.
    boxAnnotations: [
      { id: "b", x: 1, y: 2, width: 3, height: 4, color: "#123456", timestamp: "2026-11-03T00:00:00.000Z" },
      { id: "c", x: 5, y: 6, width: 7, height: 8, color: "red", timestamp: "2026-11-03T00:01:00.000Z" },
    ],
  }));
  return ids;
}

function io(env: Record<string, string> = {}, isTTY = false) {
  const out: string[] = [];
  let err = "";
  return {
    out,
    err: () => err,
    options: { io: { out: (line: string) => void out.push(line), err: { write: (text: string) => (err += text), isTTY }, env } },
  };
}

describe("forensic-annotation export / import (runExchangeCommand)", () => {
  it("exports a case as ZIP with progress lines, imports it as another user, refuses the analyst", async () => {
    const ids = await seedFiles();
    const zipPath = join(dir, "c1.zip");
    const exporting = io();
    expect(await runExchangeCommand(["export", "--user", "analyst", "--case", "C-1", "--format", "zip", "--out", zipPath, "--data", dataDir], exporting.options)).toBe(0);
    expect(exporting.out[0]).toMatch(new RegExp(`^exported case C-1 of analyst \\(2 images\\) to ${zipPath.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\(\\d+ bytes\\)$`));
    expect(exporting.out[1]).toMatch(/^manifest hash [0-9a-f]{64} \(unsigned\)$/);
    expect(exporting.err()).toContain("images 1/2\nimages 2/2\n");
    expect(exporting.err()).toContain("writing 1/1\n");
    const archive = unzipSync(new Uint8Array(await readFile(zipPath)));
    expect(Object.keys(archive)).toContain(`images/item-0-${ids[0]}.png`);
    expect((await readdir(dir)).filter((name) => name.includes(".partial"))).toEqual([]);

    const preview = io();
    expect(await runExchangeCommand(["import", "--user", "reviewer", "--preview", zipPath, "--data", dataDir], preview.options)).toBe(0);
    expect(preview.out).toEqual([
      "case C-1: 2 files, 1 with annotations, images yes",
      expect.stringMatching(/^exported \S+ by analyst@lab\.example; signature unsigned$/),
      "can import: yes",
    ]);
    expect(existsSync(join(dataDir, "data", "reviewer"))).toBe(false);

    const importing = io({}, true);
    expect(await runExchangeCommand(["import", "--user", "reviewer", zipPath, "--data", dataDir], importing.options)).toBe(0);
    expect(importing.out[0]).toBe("imported case C-1 for reviewer as a read-only case: 2 files, 1 annotation documents; signature unsigned");
    expect(importing.err()).toMatch(/\rimages {6}\[#+\] 2\/2 100%/);
    const document = JSON.parse(await readFile(join(dataDir, "data", "reviewer", "C-1", "data.json"), "utf8"));
    expect(document.isReadOnly).toBe(true);
    const imported = await readFile(join(dataDir, "images", "images", document.originalImageIds[ids[1]!]));
    expect(new Uint8Array(imported)).toEqual(fixture("sample.jpg"));
    // The command's writes keep their versions as the service's do (record history).
    const histories = createKeyHistories(createFilePorts(dataDir).data, { clock: systemClock });
    expect(await histories.list("reviewer/C-1/data.json")).toMatchObject({ current: 1, versions: [{ version: 1, writtenBy: "service", deleted: false }] });

    const refused = io();
    expect(await runExchangeCommand(["import", "--user", "analyst", zipPath, "--data", dataDir], refused.options)).toBe(1);
    expect(refused.err()).toContain("import refused: the original analyst cannot review their own case");
    const json = io();
    expect(await runExchangeCommand(["import", "--user", "reviewer", "--json", zipPath, "--data", dataDir], json.options)).toBe(1);
    expect(JSON.parse(json.out.join("\n")).errors[0]).toMatch(/already exists/);
  });

  it("exports JSON, CSV, all cases as JSON and XLSX", async () => {
    await seedFiles();
    const run = (args: string[]) => runExchangeCommand([...args, "--data", dataDir], io().options);
    expect(await run(["export", "--user", "analyst", "--case", "C-1", "--format", "json", "--out", join(dir, "c1.json")])).toBe(0);
    expect(JSON.parse(await readFile(join(dir, "c1.json"), "utf8")).metadata).toMatchObject({ caseNumber: "C-1", exportSchemaVersion: "1.0", totalFiles: 2 });
    expect(await run(["export", "--user", "analyst", "--case", "C-1", "--format", "csv", "--out", join(dir, "c1.csv")])).toBe(0);
    expect((await verifyCaseCsv(await readFile(join(dir, "c1.csv"), "utf8"))).valid).toBe(true);
    expect(await run(["export", "--user", "analyst", "--all", "--format", "json", "--out", join(dir, "all.json")])).toBe(0);
    expect(JSON.parse(await readFile(join(dir, "all.json"), "utf8")).metadata.totalCases).toBe(1);
    expect(await run(["export", "--user", "analyst", "--all", "--format", "xlsx", "--out", join(dir, "all.xlsx")])).toBe(0);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(join(dir, "all.xlsx"));
    expect(workbook.worksheets.map((sheet) => sheet.name)).toEqual(["Summary", "Case_C-1"]);
  });

  it("signs with EXPORT_SIGNING_KEY and requires valid signatures when asked", async () => {
    await seedFiles();
    const { privateKey } = await generateKeyPair("ES256", { extractable: true });
    const env = { EXPORT_SIGNING_KEY: JSON.stringify({ ...(await exportJWK(privateKey)), kid: "k1" }) };
    const zipPath = join(dir, "signed.zip");
    const exporting = io(env);
    expect(await runExchangeCommand(["export", "--user", "analyst", "--case", "C-1", "--format", "zip", "--out", zipPath, "--data", dataDir], exporting.options)).toBe(0);
    expect(exporting.out[1]).toMatch(/signed with key k1$/);
    const unsigned = join(dir, "unsigned.zip");
    expect(await runExchangeCommand(["export", "--user", "analyst", "--case", "C-1", "--out", unsigned, "--data", dataDir], io().options)).toBe(0);
    const strict = io({ ...env, EXPORT_REQUIRE_SIGNATURE: "true" });
    expect(await runExchangeCommand(["import", "--user", "reviewer", unsigned, "--data", dataDir], strict.options)).toBe(1);
    expect(strict.err()).toContain("import refused: The package is not signed and signatures are required");
    const ok = io({ ...env, EXPORT_REQUIRE_SIGNATURE: "true" });
    expect(await runExchangeCommand(["import", "--user", "reviewer", zipPath, "--data", dataDir], ok.options)).toBe(0);
    expect(ok.out[0]).toMatch(/signature true$/);
  });

  it("signs the audit head of its entry with the AUDIT_SIGNING_KEY serve generated under --data, as serve would (an unsigned head would verify as signature missing)", async () => {
    await seedFiles();
    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    writeFileSync(join(dataDir, "secrets.json"), JSON.stringify({ AUDIT_SIGNING_KEY: JSON.stringify({ ...(await exportJWK(privateKey)), kid: "served" }) }));
    expect(await runExchangeCommand(["export", "--user", "analyst", "--case", "C-1", "--format", "json", "--out", join(dir, "c1.json"), "--data", dataDir], io().options)).toBe(0);
    const { audit } = createFilePorts(dataDir);
    const trail = await readAuditTrail(audit, "analyst", [new Date().toISOString().slice(0, 10)]);
    expect((await verifyAuditTrail(trail, { publicKeys: [{ ...(await exportJWK(publicKey)), kid: "served" }], requireSignature: true })).head).toMatchObject({ seq: 1, signature: "valid" });
  });

  it("a symmetric EXPORT_SIGNING_KEY (oct, HS256) signs, as the docs list it", async () => {
    await seedFiles();
    const key = { kty: "oct", k: "c2VjcmV0LXNpZ25pbmcta2V5LW9mLTMyLWJ5dGVzLWxvbmc", kid: "lab-hmac" };
    const run = io({ EXPORT_SIGNING_KEY: JSON.stringify(key) });
    expect(await runExchangeCommand(["export", "--user", "analyst", "--case", "C-1", "--format", "zip", "--out", join(dir, "hs.zip"), "--data", dataDir], run.options), run.err()).toBe(0);
    expect(run.out[1]).toMatch(/signed with key lab-hmac$/);
  });

  it("an EXPORT_SIGNING_KEY that cannot sign is a configuration error (exit 2) before any export is written", async () => {
    await seedFiles();
    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    const { crv: _crv, ...noCurve } = await exportJWK(privateKey);
    const cases: [string, string][] = [
      ["[]", "EXPORT_SIGNING_KEY: one private JWK expected, found 0"],
      [JSON.stringify({ keys: [] }), "EXPORT_SIGNING_KEY: one private JWK expected, found 0"],
      [JSON.stringify(await exportJWK(publicKey)), 'EXPORT_SIGNING_KEY: not a private key (it has no "d")'],
      [JSON.stringify(noCurve), "EXPORT_SIGNING_KEY: "],
    ];
    for (const [value, message] of cases) {
      const out = join(dir, "refused.zip");
      const run = io({ EXPORT_SIGNING_KEY: value });
      expect(await runExchangeCommand(["export", "--user", "analyst", "--case", "C-1", "--out", out, "--data", dataDir], run.options), value).toBe(2);
      expect(run.err()).toContain(message);
      expect(run.err()).not.toContain("Cannot read properties");
      expect(existsSync(out)).toBe(false);
    }
  });

  it("answers 2 with the usage for bad arguments, 1 for a missing case, and leaves no partial file", async () => {
    await seedFiles();
    for (const args of [["export"], ["export", "--user", "a"], ["export", "--user", "a", "--all", "--format", "csv"], ["import", "--user", "a"], ["frobnicate"], ["export", "--user", "a", "--case", "C", "--format", "pdf"]]) {
      const run = io();
      expect(await runExchangeCommand([...args, "--data", dataDir], run.options), args.join(" ")).toBe(2);
      expect(run.err()).toContain("Usage:");
    }
    // A FIFO would hold the open until something wrote to it: refused at once as no regular file.
    if (process.platform !== "win32") {
      const fifo = join(dir, "pipe.zip");
      expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
      const piped = io();
      expect(await runExchangeCommand(["import", "--user", "reviewer", fifo, "--data", dataDir], piped.options)).toBe(2);
      expect(piped.err()).toContain("is not a regular file");
      await rm(fifo);
    }
    const missing = io();
    expect(await runExchangeCommand(["export", "--user", "analyst", "--case", "NOPE", "--out", join(dir, "x.zip"), "--data", dataDir], missing.options)).toBe(1);
    expect(missing.err()).toContain("Case NOPE of user analyst not found");
    expect(await readdir(dir)).toEqual(["data"]);
    const help = io();
    expect(await runExchangeCommand(["--help"], help.options)).toBe(0);
    expect(help.out[0]).toContain("forensic-annotation export --user UID --case CASE --format json|csv|zip");
  });

  it("a JSON, CSV or XLSX export that cannot be written is recorded as a failure; one written records the name it was written under", async () => {
    await seedFiles();
    const entries = async () => {
      const ports = createFilePorts(dataDir);
      const keys = (await ports.audit.list("audit-trails/")).filter((key) => key.startsWith("audit-trails/analyst-")).sort();
      const days = await Promise.all(keys.map(async (key) => JSON.parse(new TextDecoder().decode((await ports.audit.get(key))!)) as { action: string; result: string; details: { fileName?: string } }[]));
      return days.flat().filter((entry) => entry.action === "case-export");
    };
    // A folder, and a file in a folder that does not exist.
    const attempts = [["--case", "C-1", "--format", "json", "--out", dir], ["--case", "C-1", "--format", "csv", "--out", join(dir, "none", "x.csv")], ["--all", "--format", "xlsx", "--out", join(dir, "none", "all.xlsx")]];
    for (const args of attempts) {
      expect(await runExchangeCommand(["export", "--user", "analyst", ...args, "--data", dataDir], io().options), args.join(" ")).not.toBe(0);
    }
    expect((await entries()).map((entry) => entry.result)).toEqual(["failure", "failure", "failure"]);
    expect(await runExchangeCommand(["export", "--user", "analyst", "--case", "C-1", "--format", "json", "--out", join(dir, "mine.json"), "--data", dataDir], io().options)).toBe(0);
    expect((await entries()).at(-1)).toMatchObject({ result: "success", details: { fileName: "mine.json" } });
  });

  it("import prints what a package says with its control characters escaped: a hostile name cannot rewrite 'can import: no'", async () => {
    await seedFiles();
    const data = {
      metadata: {
        caseNumber: "RT-1", caseCreatedDate: "2026-11-20T00:00:00.000Z", exportDate: "2026-11-25T00:00:00.000Z",
        exportedBy: "carol\u001b]0;pwned\u0007@lab\u009b2J", exportedByUid: "carol", exportedByName: "C X", exportedByCompany: "Lab",
        exportSchemaVersion: "1.0", totalFiles: 1,
      },
      files: [{ fileData: { id: "f0", originalFilename: "s0.png\u001b[1A\u001b[2K\rcan import: yes\u001b[8m", uploadedAt: "2026-11-20T00:00:00.000Z" }, hasAnnotations: false }],
    };
    const zipPath = join(dir, "hostile.zip");
    writeFileSync(zipPath, zipSync({ "RT-1_data.json": strToU8(JSON.stringify(data, null, 2)) }));
    const raw = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
    for (const json of [false, true]) {
      const preview = io();
      expect(await runExchangeCommand(["import", "--user", "reviewer", "--preview", ...(json ? ["--json"] : []), zipPath, "--data", dataDir], preview.options)).toBe(1);
      const printed = preview.out.join("\n");
      expect(printed, printed).not.toMatch(raw);
      if (!json) {
        expect(preview.out).toContain("can import: no");
        expect(printed).toContain("carol\\x1b]0;pwned\\x07@lab\\x9b2J");
        expect(preview.out.filter((line) => line.startsWith("can import"))).toEqual(["can import: no"]);
      } else {
        expect((JSON.parse(printed) as { exportedBy: string }).exportedBy).toBe(data.metadata.exportedBy);
      }
    }
    const refused = io();
    expect(await runExchangeCommand(["import", "--user", "reviewer", zipPath, "--data", dataDir], refused.options)).toBe(1);
    expect(refused.err()).not.toMatch(raw);
  });

  it("import refuses a package holding an image larger than MAX_IMAGE_BYTES, as an upload of it would be, and writes nothing", async () => {
    await seedFiles();
    const zipPath = join(dir, "c1.zip");
    expect(await runExchangeCommand(["export", "--user", "analyst", "--case", "C-1", "--format", "zip", "--out", zipPath, "--data", dataDir], io().options)).toBe(0);
    const before = await readdir(join(dataDir, "images"));
    const small = { MAX_IMAGE_BYTES: "400" };
    const preview = io(small);
    expect(await runExchangeCommand(["import", "--user", "reviewer", "--preview", zipPath, "--data", dataDir], preview.options)).toBe(1);
    expect(preview.out.join("\n")).toContain("more than the largest image this service stores (MAX_IMAGE_BYTES, 400 bytes)");
    const refused = io(small);
    expect(await runExchangeCommand(["import", "--user", "reviewer", zipPath, "--data", dataDir], refused.options)).toBe(1);
    expect(refused.err()).toContain("MAX_IMAGE_BYTES, 400 bytes");
    expect(await readdir(join(dataDir, "images"))).toEqual(before);
    expect(await runExchangeCommand(["import", "--user", "reviewer", zipPath, "--data", dataDir], io().options)).toBe(0);
  });

  // The built command runs the same way; without dist/ the test fails saying how to build it.
  const cli = join(root, "dist/src/adapters/node/cli.js");
  const command = join(root, "dist/src/adapters/server/command.js");
  const requireBuilt = () => {
    if (!existsSync(cli) || !existsSync(command) || !readFileSync(command, "utf8").includes("runExchangeCommand")) {
      throw new Error("dist/ is missing or stale: run `npm run build` (npm test builds first)");
    }
  };
  it("the built command: node dist/src/adapters/node/cli.js export ... / import ...", async () => {
    requireBuilt();
    await seedFiles();
    const zipPath = join(dir, "built.zip");
    const exported = spawnSync(process.execPath, [cli, "export", "--user", "analyst", "--case", "C-1", "--format", "zip", "--out", zipPath, "--data", dataDir], { encoding: "utf8", cwd: dir });
    expect(exported.status, exported.stderr).toBe(0);
    expect(exported.stderr).toContain("images 2/2");
    const imported = spawnSync(process.execPath, [cli, "import", "--user", "reviewer", zipPath, "--data", dataDir], { encoding: "utf8", cwd: dir });
    expect(imported.status, imported.stderr).toBe(0);
    expect(imported.stdout).toContain("imported case C-1 for reviewer");
  });

  // Six processes of the built command one after another: a loaded machine takes more than the default 20 s.
  it("the built command in a newcomer's words: --out - writes the ZIP to standard output, a missing FILE is one line (exit 2), a repeated import names --overwrite", async () => {
    requireBuilt();
    await seedFiles();
    // The ZIP on standard output (a file named `-` before), what the command says on standard error.
    const piped = spawnSync(process.execPath, [cli, "export", "--user", "analyst", "--case", "C-1", "--out", "-", "--data", dataDir], { cwd: dir, maxBuffer: 64 * 1024 * 1024 });
    expect(piped.status, piped.stderr.toString()).toBe(0);
    expect(existsSync(join(dir, "-"))).toBe(false);
    const entries = unzipSync(new Uint8Array(piped.stdout));
    expect(Object.keys(entries)).toContain("C-1_data.json");
    expect(piped.stderr.toString()).toMatch(/exported case C-1 of analyst \(2 images\) to standard output \(\d+ bytes\)/);
    const zipPath = join(dir, "piped.zip");
    writeFileSync(zipPath, piped.stdout);
    // JSON too.
    const json = spawnSync(process.execPath, [cli, "export", "--user", "analyst", "--case", "C-1", "--format", "json", "--out", "-", "--data", dataDir], { encoding: "utf8", cwd: dir });
    expect(json.status, json.stderr).toBe(0);
    expect((JSON.parse(json.stdout) as { metadata: { caseNumber: string } }).metadata.caseNumber).toBe("C-1");

    const missing = spawnSync(process.execPath, [cli, "import", "--user", "reviewer", join(dir, "nowhere.zip"), "--data", dataDir], { encoding: "utf8", cwd: dir });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe(`import: ${join(dir, "nowhere.zip")} does not exist\n`);

    const first = spawnSync(process.execPath, [cli, "import", "--user", "reviewer", zipPath, "--data", dataDir], { encoding: "utf8", cwd: dir });
    expect(first.status, first.stderr).toBe(0);
    const again = spawnSync(process.execPath, [cli, "import", "--user", "reviewer", zipPath, "--data", dataDir], { encoding: "utf8", cwd: dir });
    expect(again.status).toBe(1);
    expect(again.stderr).toContain("A read-only case C-1 already exists; import with --overwrite to replace it");
    expect(again.stderr).not.toContain("overwriteExisting");
  }, 60_000);

  // Issue 13 item 4: the built CLI under a ZIP bomb, its peak memory read from /proc (Linux).
  const MIB = 1024 * 1024;
  // Node as the host (the preload is Node's --require) on Linux.
  const linux = existsSync("/proc/self/status") && !("Bun" in globalThis) && !("Deno" in globalThis);

  /** Runs the built CLI with a preload that writes /proc/self/status at exit; answers the result and the peak RSS. */
  function runMeasured(args: string[]): { status: number | null; stdout: string; stderr: string; peak: number } {
    const preload = join(dir, "peak.cjs");
    const statusFile = join(dir, `status-${crypto.randomUUID()}`);
    writeFileSync(preload, 'process.on("exit", () => require("node:fs").writeFileSync(process.env.STATUS_FILE, require("node:fs").readFileSync("/proc/self/status", "utf8")));\n');
    const run = spawnSync(process.execPath, ["--require", preload, cli, ...args, "--data", dataDir], { encoding: "utf8", cwd: dir, env: { ...process.env, STATUS_FILE: statusFile } });
    return { status: run.status, stdout: run.stdout, stderr: run.stderr, peak: peakRss(readFileSync(statusFile, "utf8"))! };
  }

  /** The baseline: the same command, stores opened, refusing a file that is no ZIP before reading anything. */
  function baselineRun(): ReturnType<typeof runMeasured> {
    const path = join(dir, "not-a-zip.zip");
    writeFileSync(path, "not a zip");
    const run = runMeasured(["import", "--user", "reviewer", path]);
    expect(run.stderr).toContain("import refused: The file is not a readable ZIP archive");
    return run;
  }

  /** A valid PNG of about `megabytes` MiB of random pixels (stored zlib: it does not compress). */
  function largePng(megabytes: number): Uint8Array<ArrayBuffer> {
    const width = 1024;
    const height = Math.ceil((megabytes * MIB) / (width * 3));
    const raw = new Uint8Array((width * 3 + 1) * height);
    for (let offset = 0; offset < raw.length; offset += 65536) crypto.getRandomValues(raw.subarray(offset, offset + 65536));
    for (let row = 0; row < height; row++) raw[row * (width * 3 + 1)] = 0;
    const chunk = (type: string, data: Uint8Array) => {
      const out = new Uint8Array(12 + data.length);
      const view = new DataView(out.buffer);
      view.setUint32(0, data.length);
      out.set(new TextEncoder().encode(type), 4);
      out.set(data, 8);
      view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
      return out;
    };
    const header = new Uint8Array(13);
    new DataView(header.buffer).setUint32(0, width);
    new DataView(header.buffer).setUint32(4, height);
    header.set([8, 2, 0, 0, 0], 8);
    const parts = [new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", header), chunk("IDAT", zlibSync(raw, { level: 0 })), chunk("IEND", new Uint8Array(0))];
    const png = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
    let offset = 0;
    for (const part of parts) {
      png.set(part, offset);
      offset += part.length;
    }
    return png;
  }

  it.skipIf(!linux)("the built command refuses a 6 x 250 MB bomb with a clear message, exit 1, and no memory growth", async () => {
    requireBuilt();
    await seedFiles();
    const zipPath = join(dir, "normal.zip");
    expect(runMeasured(["export", "--user", "analyst", "--case", "C-1", "--format", "zip", "--out", zipPath]).status).toBe(0);
    const baseline = baselineRun();

    const files = { ...unzipSync(new Uint8Array(await readFile(zipPath))) };
    const manifest = JSON.parse(new TextDecoder().decode(files["FORENSIC_MANIFEST.json"]));
    const { deflated, size, crc } = zeros(250);
    const bombs = Array.from({ length: 6 }, (_, i) => ({ name: `images/bomb-${i}.png`, compression: 8, data: deflated, size, crc }));
    for (const bomb of bombs) manifest.imageHashes[bomb.name.slice(7)] = "0".repeat(64);
    const bombPath = join(dir, "bomb.zip");
    writeFileSync(bombPath, buildZip({ ...files, "FORENSIC_MANIFEST.json": new TextEncoder().encode(JSON.stringify(manifest, null, 2)) }, bombs));
    expect((await readFile(bombPath)).length).toBeLessThan(2 * MIB);

    for (const args of [["import", "--user", "reviewer", "--overwrite", bombPath], ["import", "--user", "reviewer", "--preview", bombPath]]) {
      const bombed = runMeasured(args);
      expect(bombed.status, bombed.stderr).toBe(1);
      if (args.includes("--overwrite")) expect(bombed.stderr).toContain('import refused: The archive entry "images/bomb-0.png" would inflate');
      expect(`${bombed.stdout}${bombed.stderr}`).toMatch(/The archive entry "images\/bomb-0\.png" would inflate \d+ times \(\d+ to 262144000 bytes\); at most 100 times is accepted/);
      // Far below 2 x the largest image + 64 MB: nothing is inflated at all.
      expect(bombed.peak - baseline.peak, `peak ${bombed.peak} against ${baseline.peak}`).toBeLessThan(64 * MIB);
    }
  }, 120_000);

  it.skipIf(!linux)("the built command imports eight 16 MB images with a peak below 2 x the largest image + 64 MB", async () => {
    requireBuilt();
    const ports = createFilePorts(dataDir);
    const user = (uid: string, cases: string[]) => JSON.stringify({
      uid, email: `${uid}@lab.example`, firstName: uid, lastName: "X", company: "Lab", permitted: true,
      cases: cases.map((caseNumber) => ({ caseNumber, createdAt: "2026-11-01T00:00:00.000Z" })), createdAt: "2026-11-01T00:00:00.000Z",
    });
    await ports.users.put("analyst", user("analyst", ["BIG-1"]));
    await ports.users.put("reviewer", user("reviewer", []));
    const host = createLocalImageHost({ store: ports.images, signingKey: undefined, deliveryBase: "http://localhost/image/delivery", clock: systemClock, urlLifetimeSeconds: 60 });
    const ids: string[] = [];
    let largest = 0;
    // 128 MB of images: more than the budget, so holding the archive or every image at once fails.
    for (let i = 0; i < 8; i++) {
      const png = largePng(16);
      largest = Math.max(largest, png.length);
      ids.push((await host.upload({ bytes: png, filename: `big-${i}.png`, contentType: "image/png" })).id);
    }
    await ports.data.put(storageKeys.case("analyst", "BIG-1"), new TextEncoder().encode(JSON.stringify({
      caseNumber: "BIG-1",
      files: ids.map((id, i) => ({ id, originalFilename: `big-${i}.png`, uploadedAt: "2026-11-02T00:00:00.000Z" })),
      createdAt: "2026-11-01T00:00:00.000Z",
    })));
    const zipPath = join(dir, "big.zip");
    expect(runMeasured(["export", "--user", "analyst", "--case", "BIG-1", "--format", "zip", "--out", zipPath]).status).toBe(0);
    expect((await readFile(zipPath)).length).toBeGreaterThan(8 * largest);
    const baseline = baselineRun();
    const imported = runMeasured(["import", "--user", "reviewer", zipPath]);
    expect(imported.status, imported.stderr).toBe(0);
    expect(imported.stdout).toContain("imported case BIG-1 for reviewer as a read-only case: 8 files");
    expect(imported.peak - baseline.peak, `peak ${imported.peak} against ${baseline.peak}`).toBeLessThan(2 * largest + 64 * MIB);
  }, 120_000);
});
