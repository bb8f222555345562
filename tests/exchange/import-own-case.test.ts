/**
 * Issue 42 item 2: an import must never replace a case document of the importer's own (one they
 * wrote through /data that their record does not list). Real files under --data, the command run
 * as a user runs it; the user's document and files are compared byte for byte afterwards.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Hono } from "hono";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFilePorts } from "../../src/adapters/server/files/file-ports.ts";
import { runExchangeCommand } from "../../src/adapters/server/exchange-command.ts";
import { createLocalImageHost } from "../../src/core/images/local-host.ts";
import { storageKeys } from "../../src/core/storage/keys.ts";
import { systemClock } from "../../src/core/ports.ts";
import { ServiceError } from "../../src/core/errors.ts";
import { errorResponse } from "../../src/core/http/errors.ts";
import { exportCaseZip, importCase, type ExchangeStore } from "../../src/core/exchange/mod.ts";
import { fixture } from "../helpers/images.ts";
import { ANALYST, CASE, putJson, readJson, REVIEWER, seedCase, storedImageIds, streamBytes } from "./exchange-fixtures.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
let dir: string;
let dataDir: string;
let zipPath: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-own-case-"));
  dataDir = join(dir, "data");
  zipPath = join(dir, "c1.zip");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const user = (uid: string, cases: string[], extra: Record<string, unknown> = {}) => ({
  uid, email: `${uid}@lab.example`, firstName: uid, lastName: "X", company: "Lab", permitted: true,
  cases: cases.map((caseNumber) => ({ caseNumber, createdAt: "2026-11-01T00:00:00.000Z" })), createdAt: "2026-11-01T00:00:00.000Z", ...extra,
});

/**
 * The analyst's case C-1 exported to c1.zip, and the reviewer's own case document C-1 with an
 * annotations document and an image, written as /data writes them, which the reviewer's record
 * does not list (`readOnly`: the record lists C-1 as a read-only case all the same).
 */
async function seed(options: { readOnly?: boolean } = {}): Promise<{ ownImage: string }> {
  const ports = createFilePorts(dataDir);
  await ports.users.put("analyst", JSON.stringify(user("analyst", ["C-1"])));
  const readOnlyCases = options.readOnly === true
    ? [{ caseNumber: "C-1", importedAt: "2026-11-01T00:00:00.000Z", originalExportDate: "2026-11-01T00:00:00.000Z", originalExportedBy: "x", isReadOnly: true }]
    : [];
  await ports.users.put("reviewer", JSON.stringify(user("reviewer", [], { readOnlyCases })));
  const host = createLocalImageHost({ store: ports.images, signingKey: undefined, deliveryBase: "http://localhost/image/delivery", clock: systemClock, urlLifetimeSeconds: 60 });
  const analystImage = (await host.upload({ bytes: fixture("sample.png"), filename: "a.png", contentType: "image/png" })).id;
  await ports.data.put(storageKeys.case("analyst", "C-1"), encode({
    caseNumber: "C-1", files: [{ id: analystImage, originalFilename: "a.png", uploadedAt: "2026-11-02T00:00:00.000Z" }], createdAt: "2026-11-01T00:00:00.000Z",
  }));
  await ports.data.put(storageKeys.annotations("analyst", "C-1", analystImage), encode({ leftCase: "C-1", rightCase: "C-1", leftItem: "1", rightItem: "2", includeConfirmation: false, updatedAt: "2026-11-03T00:00:00.000Z" }));

  const ownImage = (await host.upload({ bytes: fixture("sample.jpg"), filename: "mine.jpg", contentType: "image/jpeg", owner: "reviewer" })).id;
  await ports.data.put(storageKeys.case("reviewer", "C-1"), encode({
    caseNumber: "C-1", files: [{ id: ownImage, originalFilename: "mine.jpg", uploadedAt: "2026-11-04T00:00:00.000Z" }], createdAt: "2026-11-04T00:00:00.000Z",
    notes: "my own work",
  }));
  await ports.data.put(storageKeys.annotations("reviewer", "C-1", ownImage), encode({ leftCase: "C-1", additionalNotes: "mine", includeConfirmation: false, updatedAt: "2026-11-04T00:00:00.000Z" }));
  expect(await runExchangeCommand(["export", "--user", "analyst", "--case", "C-1", "--format", "zip", "--out", zipPath, "--data", dataDir], io().options)).toBe(0);
  return { ownImage };
}

function io() {
  const out: string[] = [];
  let err = "";
  return { out, err: () => err, options: { io: { out: (line: string) => void out.push(line), err: { write: (text: string) => (err += text) }, env: {} } } };
}

/** Every file under a folder with its bytes, to compare before and after. */
async function snapshot(folder: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) {
      const path = join(entry.parentPath, entry.name);
      files[path.slice(folder.length)] = (await readFile(path)).toString("base64");
    }
  }
  return files;
}

const REFUSAL = "A case document C-1 of your own is stored, not a read-only import of this case: importing would replace it";

describe("an import never replaces the importer's own case document (issue 42 item 2)", () => {
  it("a case written through /data that the record does not list: preview says why, import exits 2, nothing is written", async () => {
    const { ownImage } = await seed();
    const ownFolder = join(dataDir, "data", "reviewer");
    const before = { own: await snapshot(ownFolder), images: await snapshot(join(dataDir, "images")), users: await snapshot(join(dataDir, "users")) };

    const preview = io();
    expect(await runExchangeCommand(["import", "--user", "reviewer", "--preview", zipPath, "--data", dataDir], preview.options)).toBe(1);
    expect(preview.out).toContain("can import: no");
    expect(preview.out).toContain(`- ${REFUSAL}. Remove or rename that case first`);

    for (const flags of [[], ["--overwrite"]]) {
      const refused = io();
      expect(await runExchangeCommand(["import", "--user", "reviewer", ...flags, zipPath, "--data", dataDir], refused.options)).toBe(2);
      expect(refused.err()).toContain(`import refused: ${REFUSAL}`);
    }
    const json = io();
    expect(await runExchangeCommand(["import", "--user", "reviewer", "--json", zipPath, "--data", dataDir], json.options)).toBe(2);
    expect(JSON.parse(json.out.join("\n"))).toMatchObject({ success: false, errorCode: "CONFLICT", filesImported: 0 });

    // The user's own document, annotations and image are as they were; no image was added, the record is unchanged.
    expect(await snapshot(ownFolder)).toEqual(before.own);
    expect(JSON.parse(await readFile(join(ownFolder, "C-1", "data.json"), "utf8"))).toMatchObject({ notes: "my own work", files: [{ id: ownImage }] });
    expect(await snapshot(join(dataDir, "images"))).toEqual(before.images);
    const record = JSON.parse((await createFilePorts(dataDir).users.get("reviewer"))!);
    expect(record.readOnlyCases ?? []).toEqual([]);
    expect(await snapshot(join(dataDir, "users"))).toEqual(before.users);
  });

  it("the record lists C-1 as read-only but the document there is the user's own: refused, with or without --overwrite", async () => {
    await seed({ readOnly: true });
    const ownFolder = join(dataDir, "data", "reviewer");
    const before = await snapshot(ownFolder);
    for (const flags of [["--overwrite"], []]) {
      const preview = io();
      expect(await runExchangeCommand(["import", "--user", "reviewer", "--preview", ...flags, zipPath, "--data", dataDir], preview.options)).toBe(1);
      expect(preview.out).toContain(`- ${REFUSAL}. Remove or rename that case first`);
      const refused = io();
      expect(await runExchangeCommand(["import", "--user", "reviewer", ...flags, zipPath, "--data", dataDir], refused.options)).toBe(2);
      expect(refused.err()).toContain(`import refused: ${REFUSAL}`);
    }
    expect(await snapshot(ownFolder)).toEqual(before);
  });

  it("a read-only imported copy of the same case is still replaced as before (with --overwrite; without it once off the list)", async () => {
    await seed();
    await rm(join(dataDir, "data", "reviewer"), { recursive: true });
    expect(await runExchangeCommand(["import", "--user", "reviewer", zipPath, "--data", dataDir], io().options)).toBe(0);
    expect(await runExchangeCommand(["import", "--user", "reviewer", "--overwrite", zipPath, "--data", dataDir], io().options)).toBe(0);
    // Taken off the record's read-only list, the imported document stays and a new import replaces it.
    const ports = createFilePorts(dataDir);
    const record = JSON.parse((await ports.users.get("reviewer"))!);
    await ports.users.put("reviewer", JSON.stringify({ ...record, readOnlyCases: [] }));
    expect(await runExchangeCommand(["import", "--user", "reviewer", zipPath, "--data", dataDir], io().options)).toBe(0);
    const document = JSON.parse(await readFile(join(dataDir, "data", "reviewer", "C-1", "data.json"), "utf8"));
    expect(document).toMatchObject({ isReadOnly: true, caseNumber: "C-1" });
  });

  it("the built CLI exits 2 with the reason, and the user's document is unchanged", async () => {
    const cli = join(root, "dist/src/adapters/node/cli.js");
    const command = join(root, "dist/src/adapters/server/command.js");
    if (!existsSync(cli) || !readFileSync(command, "utf8").includes("runExchangeCommand")) throw new Error("dist/ is missing or stale: run `npm run build`");
    await seed();
    const own = join(dataDir, "data", "reviewer", "C-1", "data.json");
    const before = await readFile(own);
    const run = spawnSync(process.execPath, [cli, "import", "--user", "reviewer", zipPath, "--data", dataDir], { encoding: "utf8", cwd: dir });
    expect(run.status, run.stderr).toBe(2);
    expect(run.stderr).toContain(`import refused: ${REFUSAL}`);
    expect(await readFile(own)).toEqual(before);
  });
});

describe("the shared import: CONFLICT for HTTP, and checked again before the case document is written", () => {
  it("a document of the importer's stored while the images are written: refused, the document kept, the images removed", async () => {
    const { store, ports } = await seedCase();
    const zip = await streamBytes(exportCaseZip(store, ANALYST, CASE));
    const imagesBefore = await storedImageIds(ports);
    const own = { caseNumber: CASE, files: [], createdAt: "2026-11-20T00:00:00.000Z", mine: true };
    let written = false;
    // Another request (a PUT through /data) stores the importer's own case once the import has started.
    const racing: ExchangeStore = {
      ...store,
      uploadImage: async (image) => {
        if (!written) (written = true), await putJson(ports, storageKeys.case(REVIEWER, CASE), own);
        return await store.uploadImage(image);
      },
      // The import streams images where the store can: the same race that way.
      uploadImageStream: async (image) => {
        if (!written) (written = true), await putJson(ports, storageKeys.case(REVIEWER, CASE), own);
        return await store.uploadImageStream!(image);
      },
    };
    const result = await importCase(racing, zip, REVIEWER);
    expect(result).toMatchObject({ success: false, errorCode: "CONFLICT", errors: [expect.stringContaining(REFUSAL.replaceAll("C-1", CASE))] });
    expect(await readJson(ports, storageKeys.case(REVIEWER, CASE))).toEqual(own);
    expect(await storedImageIds(ports)).toEqual(imagesBefore);
  });

  it("the refusal is a ServiceError that answers 409 with code CONFLICT in the standard body", async () => {
    const app = new Hono();
    app.get("/", () => {
      throw ServiceError.conflict(REFUSAL, { caseNumber: "C-1" });
    });
    app.onError((err, c) => errorResponse(err, c));
    const response = await app.request("/");
    expect(response.status).toBe(409);
    expect(await response.json()).toEqual({ error: "Conflict", code: "CONFLICT", message: REFUSAL, details: { caseNumber: "C-1" } });
  });
});
