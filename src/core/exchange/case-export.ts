/**
 * @module
 * The single-case and bulk JSON exports (docs/exchange.md#single-case-json, "Bulk JSON"): read
 * the case, each file's annotations and the exporter's record through an
 * {@link ExchangeStore}, and build the documents every other format is made from.
 */
import { CaseDataSchema } from "../schemas/case.ts";
import { ExchangeError, messageOf } from "./exchange-error.ts";
import type {
  AllCasesExportData,
  AllCasesExportSummary,
  AnnotationData,
  CaseExportData,
  CaseExportFile,
  CaseExportMetadata,
  CaseExportSummary,
  ExportOptions,
  ExportProgress,
} from "./shapes.ts";
import type { ExchangeStore, ExchangeUser } from "./sources.ts";

/** The schema version written by every export. */
export const EXPORT_SCHEMA_VERSION = "1.0";

/** Options of the exports: docs/exchange.md#single-case-json ExportOptions plus a progress callback. */
export interface CaseExportOptions extends ExportOptions {
  /** CSV and XLSX: protected as the client's default, with the evidence warning (default true). */
  protect?: boolean | undefined;
  /** Receives `{phase: "collecting", done, total}` as files are read. */
  onProgress?: ((progress: ExportProgress) => void) | undefined;
}

/** Who exports: the fields of the metadata that name the exporter. */
interface Exporter {
  exportedBy: string | null;
  exportedByUid: string;
  exportedByName: string;
  exportedByCompany: string;
}

function exporterOf(userUid: string, user: ExchangeUser | null): Exporter {
  return {
    exportedBy: user?.email ?? null,
    exportedByUid: userUid,
    exportedByName: user === null ? "" : `${user.firstName} ${user.lastName}`.trim(),
    exportedByCompany: user?.company ?? "",
  };
}

const isSet = (value: unknown): boolean => typeof value === "string" ? value !== "" : value !== undefined && value !== null;

/**
 * Whether a file counts as annotated (docs/exchange.md): any of additionalNotes, classNote,
 * customClass, the four case/item fields, supportLevel or classType is set, or a box exists.
 */
export function hasAnnotations(annotations: AnnotationData | null | undefined): boolean {
  if (annotations === null || annotations === undefined) return false;
  const fields = [
    annotations.additionalNotes,
    annotations.classNote,
    annotations.customClass,
    annotations.leftCase,
    annotations.rightCase,
    annotations.leftItem,
    annotations.rightItem,
    annotations.supportLevel,
    annotations.classType,
  ];
  return fields.some(isSet) || (Array.isArray(annotations.boxAnnotations) && annotations.boxAnnotations.length > 0);
}

const latest = (a: string | undefined, b: string | undefined): string | undefined => a === undefined ? b : b === undefined ? a : (b > a ? b : a);
const earliest = (a: string | undefined, b: string | undefined): string | undefined => a === undefined ? b : b === undefined ? a : (b < a ? b : a);

/** What the summary counts of one file's stored annotations (whether or not they are exported). */
interface FileFacts {
  annotated: boolean;
  boxes: number;
  confirmed: boolean;
  requested: boolean;
  updatedAt: string | undefined;
  /** When its first annotation was made, where the client recorded it. */
  firstAnnotatedAt: string | undefined;
}

function factsOf(annotations: AnnotationData | null): FileFacts {
  const annotated = hasAnnotations(annotations);
  return {
    annotated,
    boxes: Array.isArray(annotations?.boxAnnotations) ? annotations.boxAnnotations.length : 0,
    confirmed: annotations?.confirmationData !== undefined && annotations?.confirmationData !== null,
    requested: annotations?.includeConfirmation === true,
    updatedAt: typeof annotations?.updatedAt === "string" ? annotations.updatedAt : undefined,
    firstAnnotatedAt: typeof annotations?.earliestAnnotationTimestamp === "string" && annotations.earliestAnnotationTimestamp !== ""
      ? annotations.earliestAnnotationTimestamp
      : undefined,
  };
}

/**
 * The summary as the v1.0 client counts it, so both sides write the same CSV for one case:
 * boxes, confirmations and dates come from annotated files only; the earliest date is a
 * file's first annotation where recorded, else its last change.
 */
function summaryOf(facts: FileFacts[]): CaseExportSummary {
  let earliestDate: string | undefined;
  let latestDate: string | undefined;
  const annotated = facts.filter((fact) => fact.annotated);
  for (const fact of annotated) {
    if (fact.updatedAt === undefined || fact.updatedAt === "") continue;
    earliestDate = earliest(earliestDate, fact.firstAnnotatedAt ?? fact.updatedAt);
    latestDate = latest(latestDate, fact.updatedAt);
  }
  return {
    filesWithAnnotations: annotated.length,
    filesWithoutAnnotations: facts.length - annotated.length,
    totalBoxAnnotations: annotated.reduce((sum, fact) => sum + fact.boxes, 0),
    filesWithConfirmations: annotated.filter((fact) => fact.confirmed).length,
    filesWithConfirmationsRequested: facts.filter((fact) => fact.requested).length,
    ...(latestDate !== undefined ? { lastModified: latestDate } : {}),
    ...(earliestDate !== undefined ? { earliestAnnotationDate: earliestDate } : {}),
    ...(latestDate !== undefined ? { latestAnnotationDate: latestDate } : {}),
  };
}

/** Runs `task` over `items` with at most `parallel` in flight, keeping the order of results. */
async function mapInOrder<T, R>(items: readonly T[], parallel: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, worker));
  return results;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

async function collectCase(
  store: ExchangeStore,
  userUid: string,
  caseNumber: string,
  exporter: Exporter,
  exportDate: string,
  options: CaseExportOptions,
): Promise<CaseExportData> {
  const stored = await store.getCase(userUid, caseNumber);
  if (stored === null) throw new ExchangeError("NOT_FOUND", `Case ${caseNumber} of user ${userUid} not found`);
  const parsed = CaseDataSchema.safeParse(stored);
  if (!parsed.success) {
    throw new ExchangeError("VALIDATION_ERROR", `The stored case ${caseNumber} is not a case document: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  }
  const document = parsed.data;
  const total = document.files.length;
  let done = 0;
  options.onProgress?.({ phase: "collecting", done, total });
  const entries = await mapInOrder(document.files, 8, async (file) => {
    const stored = await store.getAnnotations(userUid, caseNumber, file.id);
    const annotations = isObject(stored) ? (stored as AnnotationData) : null;
    options.onProgress?.({ phase: "collecting", done: ++done, total });
    const facts = factsOf(annotations);
    const entry: CaseExportFile = {
      fileData: { id: file.id, originalFilename: file.originalFilename, uploadedAt: file.uploadedAt },
      ...(annotations !== null && options.includeAnnotations !== false ? { annotations } : {}),
      hasAnnotations: facts.annotated,
    };
    return { entry, facts };
  });
  const metadata: CaseExportMetadata = {
    caseNumber: document.caseNumber === caseNumber ? document.caseNumber : caseNumber,
    caseCreatedDate: document.createdAt,
    exportDate,
    ...exporter,
    exportSchemaVersion: EXPORT_SCHEMA_VERSION,
    totalFiles: total,
  };
  return {
    metadata,
    files: entries.map(({ entry }) => entry),
    ...(options.includeMetadata !== false ? { summary: summaryOf(entries.map(({ facts }) => facts)) } : {}),
  };
}

/**
 * The single-case export of `caseNumber` of `userUid` (docs/exchange.md#single-case-json).
 *
 * @throws {ExchangeError} NOT_FOUND when the case does not exist.
 */
export async function collectCaseExport(
  store: ExchangeStore,
  userUid: string,
  caseNumber: string,
  options: CaseExportOptions = {},
): Promise<CaseExportData> {
  const user = await store.getUser(userUid);
  return await collectCase(store, userUid, caseNumber, exporterOf(userUid, user), store.now().toISOString(), options);
}

/**
 * Every own case of `userUid` (docs/exchange.md#bulk-json), in the order of the user record. A
 * case that fails stays in the list with `files: []` and `summary.exportError`.
 *
 * @throws {ExchangeError} NOT_FOUND when the user does not exist.
 */
export async function collectAllCasesExport(
  store: ExchangeStore,
  userUid: string,
  options: CaseExportOptions & { onCase?: ((done: number, total: number, caseNumber: string) => void) | undefined } = {},
): Promise<AllCasesExportData> {
  const user = await store.getUser(userUid);
  if (user === null) throw new ExchangeError("NOT_FOUND", `User ${userUid} not found`);
  const exporter = exporterOf(userUid, user);
  const exportDate = store.now().toISOString();
  const caseNumbers = [...new Set(user.cases.map((assignment) => assignment.caseNumber))];
  const cases: CaseExportData[] = [];
  for (const [index, caseNumber] of caseNumbers.entries()) {
    options.onCase?.(index, caseNumbers.length, caseNumber);
    try {
      cases.push(await collectCase(store, userUid, caseNumber, exporter, exportDate, { ...options, onProgress: undefined }));
    } catch (err) {
      const createdAt = user.cases.find((assignment) => assignment.caseNumber === caseNumber)?.createdAt;
      cases.push({
        metadata: {
          caseNumber,
          ...(createdAt !== undefined ? { caseCreatedDate: createdAt } : {}),
          exportDate,
          ...exporter,
          exportSchemaVersion: EXPORT_SCHEMA_VERSION,
          totalFiles: 0,
        },
        files: [],
        summary: { filesWithAnnotations: 0, filesWithoutAnnotations: 0, totalBoxAnnotations: 0, exportError: messageOf(err) },
      });
    }
  }
  options.onCase?.(caseNumbers.length, caseNumbers.length, "");

  const annotatedFiles = (data: CaseExportData) => data.files.filter((file) => file.hasAnnotations).length;
  const confirmations = (data: CaseExportData, which: "confirmed" | "requested") =>
    data.files.filter((file) => which === "confirmed" ? isSet(file.annotations?.confirmationData) : file.annotations?.includeConfirmation === true).length;
  const exported: AllCasesExportData = {
    metadata: {
      exportDate,
      ...exporter,
      exportSchemaVersion: EXPORT_SCHEMA_VERSION,
      totalCases: cases.length,
      totalFiles: cases.reduce((sum, data) => sum + data.metadata.totalFiles, 0),
      totalAnnotations: cases.reduce((sum, data) => sum + annotatedFiles(data), 0),
      totalConfirmations: cases.reduce((sum, data) => sum + (data.summary?.filesWithConfirmations ?? confirmations(data, "confirmed")), 0),
      totalConfirmationsRequested: cases.reduce(
        (sum, data) => sum + (data.summary?.filesWithConfirmationsRequested ?? confirmations(data, "requested")),
        0,
      ),
    },
    cases,
  };
  if (options.includeMetadata !== false) {
    const summary: AllCasesExportSummary = {
      casesWithFiles: cases.filter((data) => data.files.length > 0).length,
      casesWithAnnotations: cases.filter((data) => annotatedFiles(data) > 0).length,
      casesWithoutFiles: cases.filter((data) => data.files.length === 0).length,
    };
    let lastModified: string | undefined;
    let earliestDate: string | undefined;
    let latestDate: string | undefined;
    for (const data of cases) {
      lastModified = latest(lastModified, data.summary?.lastModified);
      earliestDate = earliest(earliestDate, data.summary?.earliestAnnotationDate);
      latestDate = latest(latestDate, data.summary?.latestAnnotationDate);
    }
    if (lastModified !== undefined) summary.lastModified = lastModified;
    if (earliestDate !== undefined) summary.earliestAnnotationDate = earliestDate;
    if (latestDate !== undefined) summary.latestAnnotationDate = latestDate;
    exported.summary = summary;
  }
  return exported;
}

/** The JSON text of an export as it is written to files: 2-space indented. */
export function formatExportJson(data: CaseExportData | AllCasesExportData): string {
  return JSON.stringify(data, null, 2);
}
