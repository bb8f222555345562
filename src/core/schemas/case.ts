/**
 * @module
 * Case documents (docs/storage.md#case-documents), with the fields an imported read-only case adds (docs/exchange.md
 * "Import as a read-only case" rule 6 and "Confirmations"). Unknown fields are kept.
 */
import * as z from "zod";
import { ConfirmationSchema } from "./annotation.ts";

/** FileData of docs/storage.md#case-documents: one image file of a case; unknown fields are kept. */
export const FileDataSchema = z.looseObject({
  id: z.string(),
  originalFilename: z.string(),
  uploadedAt: z.string(),
}).meta({ id: "FileData" });
export type FileData = z.infer<typeof FileDataSchema>;

/**
 * CaseData of docs/storage.md#case-documents, the stored case document; unknown fields are kept. An imported case
 * also has `isReadOnly`, `importedAt`, `originalImageIds` (original image id to new file id),
 * `forensicManifestCreatedAt` (its package manifest's `createdAt`) and `confirmations`
 * (original image id to its confirmations), docs/exchange.md.
 */
export const CaseDataSchema = z.looseObject({
  caseNumber: z.string(),
  files: z.array(FileDataSchema),
  createdAt: z.string(),
  updatedAt: z.string().optional(),
  isReadOnly: z.boolean().optional(),
  importedAt: z.string().optional(),
  originalImageIds: z.record(z.string(), z.string()).optional(),
  forensicManifestCreatedAt: z.string().optional(),
  confirmations: z.record(z.string(), z.array(ConfirmationSchema)).optional(),
}).meta({ id: "CaseData" });
export type CaseData = z.infer<typeof CaseDataSchema>;

/** The case number an import accepts (docs/exchange.md import rule 3); the user worker itself accepts any string. */
export const ImportedCaseNumberSchema = z
  .string()
  .regex(/^[A-Za-z0-9-]{1,25}$/, "case number must be 1 to 25 characters A-Z, a-z, 0-9 or -");
export type ImportedCaseNumber = z.infer<typeof ImportedCaseNumberSchema>;
