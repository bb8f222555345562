/**
 * @module
 * Reading a case package (a ZIP export) and checking it, rules 1 to 3 of EXCHANGE.md "Import
 * as a read-only case" plus the signature: exactly one `*_data.json`, a manifest whose data
 * hash, image hashes (none missing, none extra) and manifest hash match what the archive
 * holds, and a data file that parses as CaseExportData with a valid case number. A leading
 * `/* ... *\/` warning block (older clients) is stripped before parsing; their data hash
 * covers the file without it.
 */
import { unzipSync } from "fflate";
import { CaseExportDataSchema, ForensicManifestSchema } from "../schemas/exchange.ts";
import { ImportedCaseNumberSchema } from "../schemas/case.ts";
import { sameDigest, sha256Hex } from "./digest.ts";
import { messageOf } from "./exchange-error.ts";
import { IMAGES_FOLDER, imageEntryName, MANIFEST_ENTRY, manifestHashOf } from "./manifest.ts";
import type { CaseExportData, CaseExportFile, ForensicManifest, SignatureValidity } from "./shapes.ts";
import { type SignatureVerification, verifyManifestSignature } from "./signature.ts";
import { stripWarningBlock } from "./warning-block.ts";

/** A rule the package breaks: the message says which and why. */
export class PackageRefusal extends Error {
  /** Whether a reviewer's own case is concerned (audited as `blocked`). */
  readonly blocked: boolean;

  /** Creates the refusal. */
  constructor(message: string, blocked = false) {
    super(message);
    this.name = "PackageRefusal";
    this.blocked = blocked;
  }
}

/** The entries of an archive, by name. */
type Entries = Record<string, Uint8Array>;

/** A package that passed rules 1 to 3 and the signature check. */
export interface CheckedPackage {
  /** The parsed data file. */
  data: CaseExportData;
  /** The manifest. */
  manifest: ForensicManifest;
  /** Each file's image bytes, by file id (files without an image are absent). */
  images: Map<string, { name: string; bytes: Uint8Array }>;
  /** Image entries no file refers to. */
  unreferencedImages: string[];
  /** Files without an image entry. */
  filesWithoutImage: CaseExportFile[];
  /** The signature check. */
  signatureValid: SignatureValidity;
  /** Findings that do not refuse the package. */
  warnings: string[];
  /** The archive's size in bytes. */
  bytes: number;
}

/** The facts a preview reports even for a package that is refused. */
export interface PackageFacts {
  /** The parsed data file, when it parsed. */
  data?: CaseExportData | undefined;
  /** Whether the archive holds image entries. */
  hasImages: boolean;
  /** The signature check, when the manifest was read. */
  signatureValid?: SignatureValidity | undefined;
  /** The text of a `*_data.csv` data file, when the archive holds one (previews report on it). */
  csv?: string | undefined;
}

const decoder = new TextDecoder("utf-8", { fatal: false });
/** The largest uncompressed entry read (a data file or one image). */
const MAX_ENTRY_BYTES = 256 * 1024 * 1024;

function unzip(zip: Uint8Array): Entries {
  const tooLarge: string[] = [];
  let entries: Entries;
  try {
    entries = unzipSync(zip, {
      filter: (file) => {
        if (file.name.endsWith("/")) return false;
        if (file.originalSize > MAX_ENTRY_BYTES) {
          tooLarge.push(file.name);
          return false;
        }
        return true;
      },
    });
  } catch (err) {
    throw new PackageRefusal(`The file is not a readable ZIP archive: ${messageOf(err)}`);
  }
  if (tooLarge.length > 0) throw new PackageRefusal(`Entries larger than ${MAX_ENTRY_BYTES} bytes: ${tooLarge.join(", ")}`);
  return entries;
}

/** Rule 1: exactly one `*_data.json`; a CSV package is refused. */
function dataEntryOf(entries: Entries): string {
  const names = Object.keys(entries);
  const json = names.filter((name) => !name.includes("/") && name.endsWith("_data.json"));
  const csv = names.filter((name) => !name.includes("/") && name.endsWith("_data.csv"));
  if (json.length === 0 && csv.length > 0) throw new PackageRefusal("CSV import is not supported");
  if (json.length === 0) throw new PackageRefusal("The archive holds no *_data.json data file");
  if (json.length > 1) throw new PackageRefusal(`The archive holds ${json.length} data files; exactly one *_data.json is allowed`);
  return json[0]!;
}

function imageEntriesOf(entries: Entries): Map<string, Uint8Array> {
  const images = new Map<string, Uint8Array>();
  for (const [name, bytes] of Object.entries(entries)) {
    if (name.startsWith(IMAGES_FOLDER) && name.length > IMAGES_FOLDER.length) images.set(name.slice(IMAGES_FOLDER.length), bytes);
  }
  return images;
}

/** The manifest, parsed; the file must be the 2-space JSON of what it holds, so every byte counts. */
function manifestOf(entries: Entries): ForensicManifest {
  const bytes = entries[MANIFEST_ENTRY];
  if (bytes === undefined) throw new PackageRefusal(`${MANIFEST_ENTRY} is missing: the archive's integrity cannot be verified`);
  const text = decoder.decode(bytes);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new PackageRefusal(`${MANIFEST_ENTRY} is not valid JSON`);
  }
  const canonical = JSON.stringify(value, null, 2);
  if (text !== canonical && text !== `${canonical}\n`) throw new PackageRefusal(`${MANIFEST_ENTRY} has been altered (it is not in the form it was written in)`);
  const parsed = ForensicManifestSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new PackageRefusal(`${MANIFEST_ENTRY} is invalid: ${issue?.path.join(".") ?? ""} ${issue?.message ?? ""}`.trim());
  }
  // The parsed value keeps the manifest's own key order for hashing.
  return value as ForensicManifest;
}

/** Rule 2: the data hash, every image hash (no missing, no extra) and the manifest hash match. */
async function checkHashes(manifest: ForensicManifest, dataBytes: Uint8Array, images: Map<string, Uint8Array>): Promise<void> {
  const problems: string[] = [];
  let dataHash = await sha256Hex(dataBytes);
  if (!sameDigest(dataHash, manifest.dataHash)) {
    const text = decoder.decode(dataBytes);
    const stripped = stripWarningBlock(text);
    const strippedHash = stripped === text ? null : await sha256Hex(stripped);
    if (strippedHash !== null && sameDigest(strippedHash, manifest.dataHash)) dataHash = strippedHash;
    else problems.push(`the data file does not match its hash (expected ${manifest.dataHash.toLowerCase()}, found ${dataHash})`);
  }
  const prefixed = Object.keys(manifest.imageHashes).length > 0 && Object.keys(manifest.imageHashes).every((key) => key.startsWith(IMAGES_FOLDER));
  const listed = new Map(Object.entries(manifest.imageHashes).map(([key, hash]) => [prefixed ? key.slice(IMAGES_FOLDER.length) : key, hash]));
  const missing = [...listed.keys()].filter((name) => !images.has(name));
  const extra = [...images.keys()].filter((name) => !listed.has(name));
  if (missing.length > 0) problems.push(`images listed in the manifest are missing: ${missing.join(", ")}`);
  if (extra.length > 0) problems.push(`images not listed in the manifest: ${extra.join(", ")}`);
  const actual: Record<string, string> = {};
  for (const [name, bytes] of images) {
    const hash = await sha256Hex(bytes);
    actual[prefixed ? `${IMAGES_FOLDER}${name}` : name] = hash;
    const expected = listed.get(name);
    if (expected !== undefined && !sameDigest(expected, hash)) problems.push(`the image ${IMAGES_FOLDER}${name} does not match its hash`);
  }
  if (manifest.totalFiles !== images.size + 1) problems.push(`the manifest counts ${manifest.totalFiles} files, the archive holds ${images.size + 1}`);
  const recomputed = await manifestHashOf({ dataHash, imageHashes: actual, totalFiles: images.size + 1, createdAt: manifest.createdAt });
  if (!sameDigest(recomputed, manifest.manifestHash)) problems.push("the manifest hash does not match the archive's contents");
  if (problems.length > 0) throw new PackageRefusal(`Integrity check failed: ${problems.join("; ")}`);
}

/** Rule 3 and the shape of the data file. */
function parseData(dataBytes: Uint8Array): CaseExportData {
  let value: unknown;
  try {
    value = JSON.parse(stripWarningBlock(decoder.decode(dataBytes)));
  } catch {
    throw new PackageRefusal("The data file is not valid JSON");
  }
  const metadata = (value as { metadata?: { caseNumber?: unknown } } | null)?.metadata;
  if (metadata?.caseNumber === undefined || metadata.caseNumber === null || metadata.caseNumber === "") {
    throw new PackageRefusal("metadata.caseNumber is required");
  }
  if (!ImportedCaseNumberSchema.safeParse(metadata.caseNumber).success) {
    throw new PackageRefusal(`Invalid case number ${JSON.stringify(metadata.caseNumber)}: 1 to 25 characters A-Z, a-z, 0-9 or -`);
  }
  const parsed = CaseExportDataSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new PackageRefusal(`The data file is not a case export: ${issue?.path.join(".") ?? ""} ${issue?.message ?? ""}`.trim());
  }
  return value as CaseExportData;
}

/** Finds each file's image: `{basename}-{fileId}{ext}`, or the original file name (older clients). */
function matchImages(data: CaseExportData, images: Map<string, Uint8Array>): Pick<CheckedPackage, "images" | "unreferencedImages" | "filesWithoutImage"> {
  const matched = new Map<string, { name: string; bytes: Uint8Array }>();
  const used = new Set<string>();
  const filesWithoutImage: CaseExportFile[] = [];
  for (const file of data.files) {
    const candidates = [imageEntryName(file.fileData), file.fileData.originalFilename];
    const name = candidates.find((candidate) => images.has(candidate) && !used.has(candidate));
    if (name === undefined || matched.has(file.fileData.id)) {
      filesWithoutImage.push(file);
      continue;
    }
    used.add(name);
    matched.set(file.fileData.id, { name, bytes: images.get(name)! });
  }
  return { images: matched, unreferencedImages: [...images.keys()].filter((name) => !used.has(name)), filesWithoutImage };
}

/**
 * Reads and checks a package. Throws {@link PackageRefusal} at the first rule it breaks;
 * `facts` receives what was learnt before that, for previews.
 */
export async function checkCasePackage(zip: Uint8Array, verification: SignatureVerification | undefined, facts: PackageFacts): Promise<CheckedPackage> {
  const entries = unzip(zip);
  const csvName = Object.keys(entries).find((name) => !name.includes("/") && name.endsWith("_data.csv"));
  if (csvName !== undefined) facts.csv = decoder.decode(entries[csvName]!);
  const dataName = dataEntryOf(entries);
  const dataBytes = entries[dataName]!;
  const images = imageEntriesOf(entries);
  facts.hasImages = images.size > 0;
  let dataRefusal: unknown;
  try {
    facts.data = parseData(dataBytes);
  } catch (err) {
    dataRefusal = err; // thrown below: the integrity rule comes first
  }
  const manifest = manifestOf(entries);
  const signature = await verifyManifestSignature(manifest.manifestHash, manifest.signature, verification);
  facts.signatureValid = signature.valid;
  await checkHashes(manifest, dataBytes, images);
  if (facts.data === undefined) throw dataRefusal;
  const data = facts.data;
  const warnings: string[] = [];
  if (signature.valid === false) warnings.push(`Signature invalid: ${signature.reason ?? "it does not verify"}`);
  if (verification?.requireSignature === true && signature.valid !== true) {
    throw new PackageRefusal(signature.valid === "unsigned" ? "The package is not signed and signatures are required" : `Signature invalid: ${signature.reason ?? ""}`);
  }
  return { data, manifest, ...matchImages(data, images), signatureValid: signature.valid, warnings, bytes: zip.length };
}
