/**
 * @module
 * `FORENSIC_MANIFEST.json` (docs/exchange.md#zip-package): the SHA-256 of the data file and of every
 * image, and the manifest hash over `{dataHash, imageHashes, totalFiles, createdAt}` in that
 * key order, compact JSON, lower-case hex. Image hashes are keyed by the entry's name under
 * `images/`, as the clients in the field key them (their importer compares these keys with
 * the image entries' names without the folder); keys are sorted.
 */
import { sha256Hex } from "../../encoding/digest.ts";
import type { FileData, ForensicManifest } from "../shapes.ts";

/** The manifest's entry name. */
export const MANIFEST_ENTRY = "FORENSIC_MANIFEST.json";
/** The folder images are stored under. */
export const IMAGES_FOLDER = "images/";
/** The data file's name for a case. */
export const dataEntryName = (caseNumber: string): string => `${caseNumber}_data.json`;

// Characters Windows, macOS and Linux file names cannot all hold, and the path separators.
const UNSAFE_NAME = /[<>:"/\\|?*]/g;

function safeName(name: string): string {
  let out = "";
  for (const char of name.replace(UNSAFE_NAME, "_")) out += char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f ? "_" : char;
  return out;
}

/** The name of a file's image under `images/`: `{basename}-{fileId}{ext}` (docs/exchange.md). */
export function imageEntryName(file: Pick<FileData, "id" | "originalFilename">): string {
  const original = file.originalFilename;
  const dot = original.lastIndexOf(".");
  const hasExtension = dot > 0 && dot < original.length - 1 && original.length - dot <= 10;
  const basename = (hasExtension ? original.slice(0, dot) : original).slice(0, 100);
  const extension = hasExtension ? original.slice(dot) : "";
  return safeName(`${basename || "image"}-${file.id}${extension}`).replace(/[. ]+$/, "");
}

/** The fields the manifest hash covers, in their order. */
export interface ManifestCore {
  /** SHA-256 of the data file. */
  dataHash: string;
  /** SHA-256 of each image, keys sorted. */
  imageHashes: Record<string, string>;
  /** Images plus the data file. */
  totalFiles: number;
  /** When the manifest was made. */
  createdAt: string;
}

/** The manifest hash: SHA-256 of the compact JSON of the core fields in their order. */
export function manifestHashOf(core: ManifestCore): Promise<string> {
  const sorted: Record<string, string> = {};
  for (const name of Object.keys(core.imageHashes).sort()) sorted[name] = core.imageHashes[name]!.toLowerCase();
  return sha256Hex(JSON.stringify({
    dataHash: core.dataHash.toLowerCase(),
    imageHashes: sorted,
    totalFiles: core.totalFiles,
    createdAt: core.createdAt,
  }));
}

/** The manifest of a data file hash and image hashes, created at `createdAt`. */
export async function buildManifest(dataHash: string, imageHashes: Record<string, string>, createdAt: string): Promise<ForensicManifest> {
  const sorted: Record<string, string> = {};
  for (const name of Object.keys(imageHashes).sort()) sorted[name] = imageHashes[name]!;
  const core: ManifestCore = { dataHash, imageHashes: sorted, totalFiles: Object.keys(sorted).length + 1, createdAt };
  return { dataHash, imageHashes: sorted, manifestHash: await manifestHashOf(core), totalFiles: core.totalFiles, createdAt };
}

/** The manifest file's text: 2-space JSON, as the clients in the field write it. */
export function formatManifest(manifest: ForensicManifest): string {
  return JSON.stringify(manifest, null, 2);
}
