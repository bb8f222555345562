/**
 * @module
 * Confirmations (docs/exchange.md#confirmations): a reviewer confirms images of a read-only
 * case, exports the confirmations with an integrity hash, and the original analyst imports
 * them into the original case, where each confirmed image's annotations get
 * `includeConfirmation: true` and the confirmation.
 */
import { ConfirmationExportSchema } from "../schemas/exchange.ts";
import { sameDigest, sha256Hex } from "../encoding/digest.ts";
import { ExchangeError, messageOf } from "./exchange-error.ts";
import { jsonDepthOverflow, tooDeepMessage } from "../encoding/json-depth.ts";
import { audited, recordAudit } from "./exchange-audit.ts";
import type { ExportedFile } from "./export-files.ts";
import type { Confirmation, ConfirmationExport, ConfirmationImportResult } from "./shapes.ts";
import type { ExchangeStore, ExchangeUser } from "./sources.ts";
import { ServiceError } from "../errors.ts";
import { type ManifestSigner, type SignatureVerification, signManifestHash, verifyManifestSignature } from "./package/signature.ts";
import type { ManifestSignature } from "./shapes.ts";

/** Who confirms: what the reviewer enters. */
export interface ReviewerDetails {
  /** The reviewer's full name. */
  fullName: string;
  /** The reviewer's badge id. */
  badgeId: string;
}

const ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A new confirmation id: `CONF-` and 10 characters A-Z0-9, uniformly from crypto randomness. */
export function newConfirmationId(): string {
  let id = "";
  while (id.length < 10) {
    for (const byte of crypto.getRandomValues(new Uint8Array(16))) {
      // 252 = 7 x 36: bytes above it would favour the first characters.
      if (byte < 252 && id.length < 10) id += ID_ALPHABET[byte % 36];
    }
  }
  return `CONF-${id}`;
}

type Loose = Record<string, unknown>;
const isObject = (value: unknown): value is Loose => value !== null && typeof value === "object" && !Array.isArray(value);

async function requireUser(store: ExchangeStore, uid: string): Promise<ExchangeUser> {
  const user = await store.getUser(uid);
  if (user === null) throw new ExchangeError("NOT_FOUND", `User ${uid} not found`);
  return user;
}

async function readOnlyCase(store: ExchangeStore, uid: string, caseNumber: string): Promise<Loose> {
  const document = await store.getCase(uid, caseNumber);
  if (!isObject(document)) throw new ExchangeError("NOT_FOUND", `Case ${caseNumber} of user ${uid} not found`);
  if (document.isReadOnly !== true) throw new ExchangeError("FORBIDDEN", `Case ${caseNumber} is not a read-only case: confirmations are made on imported cases`);
  return document;
}

/**
 * Records the reviewer's confirmation of one image of a read-only case, under
 * `confirmations[originalImageId]` of the case document.
 *
 * @throws {ExchangeError} NOT_FOUND for an unknown user, case or file; FORBIDDEN when the case is not read-only.
 */
export async function createConfirmation(
  store: ExchangeStore,
  reviewerUid: string,
  caseNumber: string,
  fileId: string,
  reviewer: ReviewerDetails,
): Promise<Confirmation> {
  const { user, facts } = await reviewerFacts(store, reviewerUid, caseNumber, "confirmation-create");
  return await audited(store, facts, async () => {
    const document = await readOnlyCase(store, reviewerUid, caseNumber);
    const mapping = isObject(document.originalImageIds) ? document.originalImageIds : {};
    const originalImageId = Object.keys(mapping).find((original) => mapping[original] === fileId);
    if (originalImageId === undefined) throw new ExchangeError("NOT_FOUND", `File ${fileId} is not an imported file of case ${caseNumber}`);
    if (reviewer.fullName.trim() === "" || reviewer.badgeId.trim() === "") {
      throw new ExchangeError("VALIDATION_ERROR", "A confirmation needs the reviewer's full name and badge id");
    }
    const now = store.now().toISOString();
    const confirmation: Confirmation = {
      fullName: reviewer.fullName.trim(),
      badgeId: reviewer.badgeId.trim(),
      timestamp: now,
      confirmationId: newConfirmationId(),
      confirmedBy: reviewerUid,
      confirmedByEmail: user.email ?? "",
      confirmedByCompany: user.company,
      confirmedAt: now,
    };
    await store.updateCase(reviewerUid, caseNumber, (current) => {
      const base = isObject(current) ? current : document;
      const confirmations = isObject(base.confirmations) ? { ...base.confirmations } : {};
      const existing = Array.isArray(confirmations[originalImageId]) ? confirmations[originalImageId] as unknown[] : [];
      return { ...base, confirmations: { ...confirmations, [originalImageId]: [...existing, confirmation] } };
    });
    return confirmation;
  }, (confirmation) => ({ details: { confirmationId: confirmation.confirmationId }, bytes: 0 }));
}

/** The reviewer's record and the facts of the audit entry a reviewer's action on a case writes. */
async function reviewerFacts(store: ExchangeStore, reviewerUid: string, caseNumber: string, action: "confirmation-create" | "confirmation-export") {
  const startedAt = store.now();
  const user = await requireUser(store, reviewerUid);
  return { user, facts: { userUid: reviewerUid, userEmail: user.email, action, details: { caseNumber, reviewingExaminerUid: reviewerUid }, startedAt } };
}

/** The upper-case SHA-256 of the 2-space JSON of a confirmation export without `metadata.hash`. */
export async function confirmationExportHash(exported: { metadata: Record<string, unknown>; [field: string]: unknown }): Promise<string> {
  const { hash: _hash, ...metadata } = exported.metadata;
  return (await sha256Hex(JSON.stringify({ ...exported, metadata }, null, 2))).toUpperCase();
}

/**
 * The hash a confirmation export's signature signs: {@link confirmationExportHash} of the file
 * without `metadata.signature` (the file's own `hash` covers the signature, so a reader that
 * knows no signatures still checks the whole file).
 */
async function signedConfirmationHash(exported: { metadata: Record<string, unknown>; [field: string]: unknown }): Promise<string> {
  const { signature: _signature, ...metadata } = exported.metadata;
  return await confirmationExportHash({ ...exported, metadata });
}

/** Options of {@link exportConfirmations}. */
export interface ConfirmationExportOptions {
  /** Signs the export (`metadata.signature`, a detached JWS as a manifest's); unsigned without it. */
  signer?: ManifestSigner | undefined;
}

/**
 * Exports the confirmations of a read-only case for the original analyst, signed when a signer is given.
 *
 * @throws {ExchangeError} NOT_FOUND, FORBIDDEN (not read-only) or VALIDATION_ERROR (no confirmations).
 */
export async function exportConfirmations(store: ExchangeStore, reviewerUid: string, caseNumber: string, options: ConfirmationExportOptions = {}): Promise<ExportedFile<ConfirmationExport>> {
  const { user, facts } = await reviewerFacts(store, reviewerUid, caseNumber, "confirmation-export");
  return await audited(store, facts, async () => {
    const document = await readOnlyCase(store, reviewerUid, caseNumber);
    const stored = isObject(document.confirmations) ? document.confirmations : {};
    const confirmations: Record<string, Confirmation[]> = {};
    for (const [originalId, list] of Object.entries(stored)) {
      if (Array.isArray(list) && list.length > 0) confirmations[originalId] = list as Confirmation[];
    }
    if (Object.keys(confirmations).length === 0) throw new ExchangeError("VALIDATION_ERROR", `Case ${caseNumber} has no confirmations to export`);
    const entry = (user.readOnlyCases ?? []).find((candidate) => candidate.caseNumber === caseNumber);
    // The manifest's createdAt, as the client's confirmation export; older imports fall back to the export date.
    const originalExportCreatedAt = typeof document.forensicManifestCreatedAt === "string" && document.forensicManifestCreatedAt !== ""
      ? document.forensicManifestCreatedAt
      : entry?.originalExportDate ?? (typeof document.originalExportDate === "string" ? document.originalExportDate : undefined);
    const exportDate = store.now().toISOString();
    const metadata = {
      caseNumber,
      exportDate,
      exportedBy: user.email,
      exportedByUid: reviewerUid,
      exportedByName: `${user.firstName} ${user.lastName}`.trim(),
      exportedByCompany: user.company,
      totalConfirmations: Object.values(confirmations).reduce((sum, list) => sum + list.length, 0),
      version: "1.0",
      ...(originalExportCreatedAt !== undefined ? { originalExportCreatedAt } : {}),
    };
    const signature = options.signer === undefined ? undefined : await signManifestHash(await confirmationExportHash({ metadata, confirmations }), options.signer);
    const signed = signature === undefined ? metadata : { ...metadata, signature };
    const data: ConfirmationExport = { metadata: { ...signed, hash: await confirmationExportHash({ metadata: signed, confirmations }) }, confirmations };
    return {
      fileName: `confirmation-data-${caseNumber}-${exportDate.slice(0, 10)}.json`,
      contentType: "application/json; charset=utf-8",
      bytes: encoder.encode(JSON.stringify(data, null, 2)),
      data,
    } satisfies ExportedFile<ConfirmationExport>;
  }, (file) => ({ details: { fileName: file.fileName, fileType: "confirmation-json" }, bytes: file.bytes.length }));
}

/** A confirmation file that breaks a rule: refused, with the rule in its message. */
class ConfirmationRefusal extends ServiceError {
  constructor(message: string) {
    super("invalid", message);
  }
}

/** The confirmation attached to an image: the latest by `confirmedAt`. */
function latestConfirmation(list: readonly Confirmation[]): Confirmation | undefined {
  return list.reduce<Confirmation | undefined>((best, next) => best === undefined || next.confirmedAt > best.confirmedAt ? next : best, undefined);
}

/** Per-image work of an import: what it did. */
type ImageOutcome = { updated: true } | { updated: false; warning?: string; error?: string };

async function confirmImage(
  store: ExchangeStore,
  uid: string,
  caseNumber: string,
  currentId: string,
  originalId: string,
  confirmation: Confirmation,
  originalExportCreatedAt: string | undefined,
): Promise<ImageOutcome> {
  const annotations = await store.getAnnotations(uid, caseNumber, currentId);
  if (!isObject(annotations)) return { updated: false, error: `Image ${originalId} has no annotations to confirm` };
  if (annotations.confirmationData !== undefined && annotations.confirmationData !== null) {
    return { updated: false, warning: `Image ${originalId} is already confirmed: skipped` };
  }
  if (originalExportCreatedAt === undefined) {
    return { updated: false, error: `Image ${originalId} (${confirmation.confirmationId}): the export has no originalExportCreatedAt, so changes since the case export cannot be ruled out` };
  }
  const updatedAt = typeof annotations.updatedAt === "string" ? Date.parse(annotations.updatedAt) : Number.NaN;
  const exportedAt = Date.parse(originalExportCreatedAt);
  if (Number.isNaN(exportedAt) || Number.isNaN(updatedAt) || updatedAt > exportedAt) {
    return {
      updated: false,
      error: `Image ${originalId} (${confirmation.confirmationId}): its annotations were changed at ${String(annotations.updatedAt)}, after the case export of ${originalExportCreatedAt}`,
    };
  }
  let skipped = false;
  await store.updateAnnotations(uid, caseNumber, currentId, (current) => {
    const base = isObject(current) ? current : annotations;
    if (base.confirmationData !== undefined && base.confirmationData !== null) {
      skipped = true;
      return base;
    }
    return { ...base, includeConfirmation: true, confirmationData: confirmation };
  });
  return skipped ? { updated: false, warning: `Image ${originalId} is already confirmed: skipped` } : { updated: true };
}

/**
 * Imports a reviewer's confirmation export into the original analyst's case. The file is
 * refused when its hash does not match, its exporter does not exist or is the importer, or the
 * case is not the importer's own. Then each image: an unknown one and an already confirmed one
 * are skipped with a warning; one whose annotations changed after the case export is refused
 * (an error); the others are confirmed. `success` is true when nothing was refused.
 */
export async function importConfirmations(
  store: ExchangeStore,
  importerUid: string,
  file: Uint8Array | string,
  options: {
    /** The file's name, for the audit entry. */
    fileName?: string | undefined;
    /** How a signature (`metadata.signature`) is checked; with `requireSignature`, an unsigned or invalid file is refused. */
    verification?: SignatureVerification | undefined;
  } = {},
): Promise<ConfirmationImportResult> {
  const startedAt = store.now();
  const result: ConfirmationImportResult = { success: false, caseNumber: "", confirmationsImported: 0, imagesUpdated: 0, errors: [], warnings: [] };
  const text = typeof file === "string" ? file : decoder.decode(file);
  let importer: ExchangeUser | null = null;
  let reviewerUid: string | undefined;
  let hashValid = false;
  try {
    if (jsonDepthOverflow(text) !== -1) throw new ConfirmationRefusal(tooDeepMessage("The confirmation file"));
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      throw new ConfirmationRefusal("The confirmation file is not valid JSON");
    }
    const parsed = ConfirmationExportSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ConfirmationRefusal(`The file is not a confirmation export: ${issue?.path.join(".") ?? ""} ${issue?.message ?? ""}`.trim());
    }
    const exported = raw as ConfirmationExport;
    result.caseNumber = exported.metadata.caseNumber;
    reviewerUid = exported.metadata.exportedByUid;
    if (!sameDigest(await confirmationExportHash(exported), exported.metadata.hash)) {
      throw new ConfirmationRefusal("The confirmation file does not match its hash: it was changed after export");
    }
    hashValid = true;
    const signature = exported.metadata.signature as ManifestSignature | undefined;
    const check = await verifyManifestSignature(await signedConfirmationHash(exported), signature, options.verification);
    result.signatureValid = check.valid;
    if (options.verification?.requireSignature === true && check.valid !== true) {
      throw new ConfirmationRefusal(check.valid === "unsigned" ? "The confirmation file is not signed and signatures are required" : `Signature invalid: ${check.reason ?? ""}`);
    }
    if (check.valid === false) result.warnings!.push(`Signature invalid: ${check.reason ?? "it does not verify"}`);
    if (reviewerUid === importerUid) throw new ConfirmationRefusal("You cannot import confirmations you exported yourself");
    if ((await store.getUser(reviewerUid)) === null) throw new ConfirmationRefusal(`The reviewer ${reviewerUid} does not exist`);
    importer = await store.getUser(importerUid);
    if (importer === null) throw new ConfirmationRefusal(`The importing user ${importerUid} does not exist`);
    const caseNumber = exported.metadata.caseNumber;
    const document = importer.cases.some((assignment) => assignment.caseNumber === caseNumber) ? await store.getCase(importerUid, caseNumber) : null;
    if (!isObject(document) || document.isReadOnly === true) {
      throw new ConfirmationRefusal(`Case ${caseNumber} is not one of your own cases: confirmations are imported into the original case`);
    }
    const mapping = new Map<string, string>();
    if (isObject(document.originalImageIds)) {
      for (const [original, current] of Object.entries(document.originalImageIds)) if (typeof current === "string") mapping.set(original, current);
    } else if (Array.isArray(document.files)) {
      for (const stored of document.files as unknown[]) {
        const id = isObject(stored) ? stored.id : undefined;
        if (typeof id === "string") mapping.set(id, id);
      }
    }
    for (const [originalId, list] of Object.entries(exported.confirmations)) {
      const currentId = mapping.get(originalId);
      const confirmation = latestConfirmation(list);
      if (currentId === undefined) {
        result.warnings!.push(`No image of case ${caseNumber} has the original id ${originalId}: skipped`);
        continue;
      }
      if (confirmation === undefined) continue;
      const outcome = await confirmImage(store, importerUid, caseNumber, currentId, originalId, confirmation, exported.metadata.originalExportCreatedAt);
      if (outcome.updated) {
        result.imagesUpdated++;
        result.confirmationsImported++;
      } else {
        if (outcome.warning !== undefined) result.warnings!.push(outcome.warning);
        if (outcome.error !== undefined) result.errors!.push(outcome.error);
      }
    }
  } catch (err) {
    result.errors!.push(messageOf(err));
  }
  result.success = result.errors!.length === 0;
  const problem = await recordAudit(store, {
    userUid: importerUid,
    userEmail: importer?.email,
    action: "confirmation-import",
    result: result.success ? "success" : "failure",
    details: {
      caseNumber: result.caseNumber || "unknown",
      fileName: options.fileName,
      fileType: "confirmation-json",
      hashValid,
      validationErrors: result.errors,
      originalExaminerUid: importerUid,
      reviewingExaminerUid: reviewerUid,
    },
    startedAt,
    bytes: encoder.encode(text).length,
  });
  if (problem !== null) result.warnings!.push(problem);
  if (result.errors!.length === 0) delete result.errors;
  if (result.warnings!.length === 0) delete result.warnings;
  return result;
}
