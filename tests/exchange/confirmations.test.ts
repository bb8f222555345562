import { describe, expect, it } from "vitest";
import { storageKeys } from "../../src/core/storage/keys.ts";
import { createConfirmation, ExchangeError, exportCaseZip, exportConfirmations, importCase, importConfirmations } from "../../src/core/exchange/mod.ts";
import { confirmationExportHash, newConfirmationId } from "../../src/core/exchange/confirmations.ts";
import { ANALYST, auditEntries, CASE, putJson, putUser, readJson, REVIEWER, seedCase, streamBytes, text } from "./exchange-fixtures.ts";

/** The analyst's case imported by the reviewer; answers the reviewer's file ids in the analyst's file order. */
async function reviewed() {
  const seeded = await seedCase();
  seeded.clock.set("2026-11-22T12:00:00.000Z");
  const zip = await streamBytes(exportCaseZip(seeded.store, ANALYST, CASE));
  seeded.clock.set("2026-11-23T09:00:00.000Z");
  expect((await importCase(seeded.store, zip, REVIEWER)).success).toBe(true);
  const document = await readJson(seeded.ports, storageKeys.case(REVIEWER, CASE));
  const reviewerIds: string[] = seeded.files.map((file) => document.originalImageIds[file.id]);
  return { ...seeded, reviewerIds };
}

describe("confirmations (EXCHANGE.md Confirmations)", () => {
  it("a reviewer confirms on the read-only case, exports, and the analyst imports into the original case", async () => {
    const { store, ports, clock, files, reviewerIds } = await reviewed();
    clock.set("2026-11-23T10:00:00.000Z");
    const confirmation = await createConfirmation(store, REVIEWER, CASE, reviewerIds[1]!, { fullName: "Rita Reviewer", badgeId: "B-77" });
    expect(confirmation).toEqual({
      fullName: "Rita Reviewer",
      badgeId: "B-77",
      timestamp: "2026-11-23T10:00:00.000Z",
      confirmationId: expect.stringMatching(/^CONF-[A-Z0-9]{10}$/),
      confirmedBy: REVIEWER,
      confirmedByEmail: `${REVIEWER}@lab.example`,
      confirmedByCompany: "State Lab",
      confirmedAt: "2026-11-23T10:00:00.000Z",
    });
    const readOnly = await readJson(ports, storageKeys.case(REVIEWER, CASE));
    expect(readOnly.confirmations).toEqual({ [files[1]!.id]: [confirmation] });

    const exported = await exportConfirmations(store, REVIEWER, CASE);
    expect(exported.fileName).toBe(`confirmation-data-${CASE}-2026-11-23.json`);
    const file = JSON.parse(text(exported.bytes));
    expect(Object.keys(file.metadata)).toEqual([
      "caseNumber", "exportDate", "exportedBy", "exportedByUid", "exportedByName", "exportedByCompany", "totalConfirmations", "version",
      "originalExportCreatedAt", "hash",
    ]);
    expect(file.metadata).toMatchObject({ caseNumber: CASE, exportedByUid: REVIEWER, totalConfirmations: 1, version: "1.0", originalExportCreatedAt: "2026-11-22T12:00:00.000Z" });
    const { hash, ...withoutHash } = file.metadata;
    const { createHash } = await import("node:crypto");
    expect(hash).toBe(createHash("sha256").update(JSON.stringify({ metadata: withoutHash, confirmations: file.confirmations }, null, 2)).digest("hex").toUpperCase());
    expect(await confirmationExportHash(file)).toBe(hash);

    const result = await importConfirmations(store, ANALYST, exported.bytes, { fileName: exported.fileName });
    expect(result).toEqual({ success: true, caseNumber: CASE, confirmationsImported: 1, imagesUpdated: 1, signatureValid: "unsigned" });
    const annotations = await readJson(ports, storageKeys.annotations(ANALYST, CASE, files[1]!.id));
    expect(annotations).toMatchObject({ includeConfirmation: true, confirmationData: confirmation, updatedAt: "2026-11-12T08:00:00.000Z" });

    const again = await importConfirmations(store, ANALYST, exported.bytes);
    expect(again).toMatchObject({ success: true, imagesUpdated: 0, warnings: [`Image ${files[1]!.id} is already confirmed: skipped`] });
    expect((await auditEntries(ports, ANALYST)).filter((entry) => entry.action === "confirmation-import").map((entry) => entry.result)).toEqual(["success", "success"]);
    expect((await auditEntries(ports, REVIEWER)).map((entry) => entry.action)).toEqual(
      expect.arrayContaining(["case-import", "confirmation-create", "confirmation-export"]),
    );
  });

  it("refuses a changed file, the reviewer's own file, an unknown reviewer and a case that is not the importer's", async () => {
    const { store, ports, reviewerIds } = await reviewed();
    await createConfirmation(store, REVIEWER, CASE, reviewerIds[0]!, { fullName: "Rita Reviewer", badgeId: "B-77" });
    const exported = await exportConfirmations(store, REVIEWER, CASE);
    const changed = text(exported.bytes).replace("B-77", "B-78");
    expect((await importConfirmations(store, ANALYST, changed)).errors).toEqual(["The confirmation file does not match its hash: it was changed after export"]);
    expect((await importConfirmations(store, REVIEWER, exported.bytes)).errors).toEqual(["You cannot import confirmations you exported yourself"]);
    await putUser(ports, "third-uid", []);
    expect((await importConfirmations(store, "third-uid", exported.bytes)).errors?.[0]).toMatch(/is not one of your own cases/);
    await ports.users.delete(REVIEWER);
    expect((await importConfirmations(store, ANALYST, exported.bytes)).errors).toEqual([`The reviewer ${REVIEWER} does not exist`]);
    expect((await importConfirmations(store, ANALYST, "{")).errors).toEqual(["The confirmation file is not valid JSON"]);
  });

  it("refuses an image whose annotations changed after the case export, confirms the others", async () => {
    const { store, ports, files, reviewerIds } = await reviewed();
    await createConfirmation(store, REVIEWER, CASE, reviewerIds[0]!, { fullName: "Rita Reviewer", badgeId: "B-77" });
    await createConfirmation(store, REVIEWER, CASE, reviewerIds[1]!, { fullName: "Rita Reviewer", badgeId: "B-77" });
    const exported = await exportConfirmations(store, REVIEWER, CASE);
    const key = storageKeys.annotations(ANALYST, CASE, files[0]!.id);
    await putJson(ports, key, { ...(await readJson(ports, key)), additionalNotes: "edited later", updatedAt: "2026-11-22T13:00:00.000Z" });
    const result = await importConfirmations(store, ANALYST, exported.bytes);
    expect(result.success).toBe(false);
    expect(result.imagesUpdated).toBe(1);
    expect(result.errors).toEqual([expect.stringContaining(`Image ${files[0]!.id} (CONF-`)]);
    expect(result.errors![0]).toContain("after the case export of 2026-11-22T12:00:00.000Z");
    expect((await readJson(ports, key)).confirmationData).toBeUndefined();
    expect((await readJson(ports, storageKeys.annotations(ANALYST, CASE, files[1]!.id))).confirmationData).toBeDefined();
  });

  it("confirmations are made on read-only cases only, for imported files, with a name and badge", async () => {
    const { store, reviewerIds, files } = await reviewed();
    await expect(createConfirmation(store, ANALYST, CASE, files[0]!.id, { fullName: "A", badgeId: "1" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(createConfirmation(store, REVIEWER, CASE, "nope", { fullName: "A", badgeId: "1" })).rejects.toBeInstanceOf(ExchangeError);
    await expect(createConfirmation(store, REVIEWER, CASE, reviewerIds[0]!, { fullName: " ", badgeId: "1" })).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
    await expect(exportConfirmations(store, REVIEWER, CASE)).rejects.toThrow(/no confirmations/);
    const ids = new Set(Array.from({ length: 200 }, newConfirmationId));
    expect(ids.size).toBe(200);
    for (const id of ids) expect(id).toMatch(/^CONF-[A-Z0-9]{10}$/);
  });
});
