/**
 * @module
 * Reading a case package (a ZIP export) and checking it, rules 1 to 3 of docs/exchange.md plus the signature: exactly one `*_data.json`, a manifest whose data
 * hash, image hashes (none missing, none extra) and manifest hash match what the archive
 * holds, and a data file that parses as CaseExportData with a valid case number. A leading
 * `/* ... *\/` warning block (older clients) is stripped before parsing; their data hash
 * covers the file without it.
 */
import { CaseExportDataSchema, ForensicManifestSchema } from "../../schemas/exchange.ts";
import { ImportedCaseNumberSchema } from "../../schemas/case.ts";
import { type ImageInspection, inspectImage } from "../../images/image-structure.ts";
import { sameDigest, sha256Hex } from "../../encoding/digest.ts";
import { IMAGES_FOLDER, imageEntryName, MANIFEST_ENTRY, manifestHashOf } from "./manifest.ts";
import type { CaseExportData, CaseExportFile, ForensicManifest, SignatureValidity } from "../shapes.ts";
import { type SignatureVerification, verifyManifestSignature } from "./signature.ts";
import { type ZipEntry, type ZipLimits, ZipDirectory, type ZipSource } from "./zip-read.ts";
import { stripWarningBlock } from "../formats/warning-block.ts";
import { jsonDepthOverflow, tooDeepMessage } from "../../encoding/json-depth.ts";
import { ServiceError } from "../../errors.ts";

/** A rule the package breaks: the message says which and why. */
export class PackageRefusal extends ServiceError {
  /** Whether a reviewer's own case is concerned (audited as `blocked`). */
  readonly blocked: boolean;

  /** Creates the refusal. */
  constructor(message: string, blocked = false) {
    super("invalid", message);
    this.blocked = blocked;
  }
}

/** A file's image in the package: read on demand, so one image at a time is in memory. */
export interface PackageImage {
  /** The entry's name under `images/`. */
  name: string;
  /** Its size in bytes. */
  size: number;
  /** The media type its bytes start with, or null when they are no image the host accepts. */
  contentType: string | null;
  /** Its structure checked as an upload's is, when the package was (size, or why it is refused). */
  inspection: ImageInspection;
  /** Reads (and inflates) the image; its hash was checked when the package was. */
  read(): Promise<Uint8Array>;
  /** The image as a stream of new pieces, checked as {@link PackageImage.read} checks it (the stream errors when it is damaged). */
  stream(): Promise<ReadableStream<Uint8Array>>;
}

/** A package that passed rules 1 to 3 and the signature check. */
export interface CheckedPackage {
  /** The parsed data file. */
  data: CaseExportData;
  /** The manifest. */
  manifest: ForensicManifest;
  /** Each file's image, by file id (files without an image are absent). */
  images: Map<string, PackageImage>;
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
const MIB = 1024 * 1024;
/**
 * What a case package may hold. Images are stored, so only text inflates; the ratio cap is
 * Apache POI's (100:1 above a floor), and the data file and manifest are parsed whole, so
 * they are kept small enough for an import to stay within 2 x its largest image + 64 MB.
 */
const PACKAGE_LIMITS: ZipLimits = {
  maxEntries: 10_000,
  maxEntryBytes: 256 * MIB,
  maxInflatedBytes: 1024 * MIB,
  maxRatio: 100,
  ratioFloorBytes: MIB,
  maxDirectoryBytes: 16 * MIB,
};
const MAX_DATA_BYTES = 16 * MIB;
const MAX_MANIFEST_BYTES = 4 * MIB;
/** The names a case package holds (a CSV data file is named only to refuse it clearly). */
const PACKAGE_NAME = /^(?:[^/]+_data\.(?:json|csv)|FORENSIC_MANIFEST\.json|README\.txt|READ_ONLY_INSTRUCTIONS\.txt|images\/[^/]*)$/;

/** Opens the archive and refuses any entry a case package cannot hold. */
async function openPackage(source: ZipSource): Promise<ZipDirectory> {
  const zip = await ZipDirectory.open(source, PACKAGE_LIMITS);
  const foreign = [...zip.entries.keys()].filter((name) => !PACKAGE_NAME.test(name));
  if (foreign.length > 0) {
    const listed = foreign.slice(0, 5).map((name) => JSON.stringify(name)).join(", ");
    throw new PackageRefusal(`The archive holds ${foreign.length === 1 ? "an entry" : "entries"} a case package does not (${listed}${foreign.length > 5 ? ", ..." : ""}): only *_data.json, FORENSIC_MANIFEST.json, README.txt, READ_ONLY_INSTRUCTIONS.txt and images/ are read`);
  }
  return zip;
}

/** Reads a small entry whose declared size is first held to `limit`. */
function readSmall(zip: ZipDirectory, entry: ZipEntry, what: string, limit: number): Promise<Uint8Array> {
  if (entry.size > limit) throw new PackageRefusal(`${what} is ${entry.size} bytes; at most ${limit} are read`);
  return zip.read(entry);
}

/** Rule 1: exactly one `*_data.json`; a CSV package is refused. */
function dataEntryOf(zip: ZipDirectory): ZipEntry {
  const names = [...zip.entries.keys()];
  const json = names.filter((name) => !name.includes("/") && name.endsWith("_data.json"));
  const csv = names.filter((name) => !name.includes("/") && name.endsWith("_data.csv"));
  if (json.length === 0 && csv.length > 0) throw new PackageRefusal("CSV import is not supported");
  if (json.length === 0) throw new PackageRefusal("The archive holds no *_data.json data file");
  if (json.length > 1) throw new PackageRefusal(`The archive holds ${json.length} data files; exactly one *_data.json is allowed`);
  return zip.entries.get(json[0]!)!;
}

/** The image entries by their name under `images/`. */
function imageEntriesOf(zip: ZipDirectory): Map<string, ZipEntry> {
  const images = new Map<string, ZipEntry>();
  for (const [name, entry] of zip.entries) {
    if (name.startsWith(IMAGES_FOLDER) && name.length > IMAGES_FOLDER.length) images.set(name.slice(IMAGES_FOLDER.length), entry);
  }
  return images;
}

/** The manifest, parsed; the file must be the 2-space JSON of what it holds, so every byte counts. */
function manifestOf(bytes: Uint8Array | undefined): ForensicManifest {
  if (bytes === undefined) throw new PackageRefusal(`${MANIFEST_ENTRY} is missing: the archive's integrity cannot be verified`);
  const text = decoder.decode(bytes);
  if (jsonDepthOverflow(text) !== -1) throw new PackageRefusal(tooDeepMessage(MANIFEST_ENTRY));
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

/**
 * Rule 2: the data hash, every image hash (no missing, no extra) and the manifest hash match.
 * Images are read one at a time, and only those the manifest lists; answers each one's media type.
 */
async function checkHashes(manifest: ForensicManifest, dataBytes: Uint8Array, zip: ZipDirectory, images: Map<string, ZipEntry>): Promise<Map<string, ImageInspection>> {
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
  const types = new Map<string, ImageInspection>();
  for (const [name, entry] of images) {
    const expected = listed.get(name);
    if (expected === undefined) continue; // an image the manifest does not list is never inflated
    const bytes = await zip.read(entry, "look");
    const hash = await sha256Hex(bytes);
    actual[prefixed ? `${IMAGES_FOLDER}${name}` : name] = hash;
    types.set(name, inspectImage(bytes));
    if (!sameDigest(expected, hash)) problems.push(`the image ${IMAGES_FOLDER}${name} does not match its hash`);
  }
  if (manifest.totalFiles !== images.size + 1) problems.push(`the manifest counts ${manifest.totalFiles} files, the archive holds ${images.size + 1}`);
  // With an unlisted image the recomputed hash cannot match: it would cover a name the manifest lacks.
  const recomputed = extra.length > 0 ? null : await manifestHashOf({ dataHash, imageHashes: actual, totalFiles: images.size + 1, createdAt: manifest.createdAt });
  if (recomputed === null || !sameDigest(recomputed, manifest.manifestHash)) problems.push("the manifest hash does not match the archive's contents");
  if (problems.length > 0) throw new PackageRefusal(`Integrity check failed: ${problems.join("; ")}`);
  return types;
}

/** Rule 3 and the shape of the data file. */
function parseData(dataBytes: Uint8Array): CaseExportData {
  const text = stripWarningBlock(decoder.decode(dataBytes));
  if (jsonDepthOverflow(text) !== -1) throw new PackageRefusal(tooDeepMessage("The data file"));
  let value: unknown;
  try {
    value = JSON.parse(text);
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
  const data = value as CaseExportData;
  checkFileIds(data);
  return data;
}

/**
 * Each file names its own id: two files of one id would share one image (the other's dropped),
 * and `__proto__` cannot be a key of the stored `originalImageIds` (it would set no member).
 */
function checkFileIds(data: CaseExportData): void {
  const seen = new Set<string>();
  for (const { fileData } of data.files) {
    if (fileData.id === "__proto__") throw new PackageRefusal(`The file id "__proto__" (${fileData.originalFilename}) cannot be imported: it cannot name a file`);
    if (seen.has(fileData.id)) throw new PackageRefusal(`The data file lists the file id ${JSON.stringify(fileData.id)} twice: each file needs an id of its own`);
    seen.add(fileData.id);
  }
}

/** Finds each file's image: `{basename}-{fileId}{ext}`, or the original file name (older clients). */
function matchImages(
  data: CaseExportData,
  zip: ZipDirectory,
  images: Map<string, ZipEntry>,
  types: Map<string, ImageInspection>,
): Pick<CheckedPackage, "images" | "unreferencedImages" | "filesWithoutImage"> {
  const matched = new Map<string, PackageImage>();
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
    const entry = images.get(name)!;
    const inspection = types.get(name) ?? { ok: false, reason: "not-an-image" };
    matched.set(file.fileData.id, { name, size: entry.size, contentType: inspection.ok ? inspection.type : "type" in inspection ? inspection.type : null, inspection, read: () => zip.read(entry), stream: () => zip.stream(entry) });
  }
  return { images: matched, unreferencedImages: [...images.keys()].filter((name) => !used.has(name)), filesWithoutImage };
}

/**
 * Reads and checks a package. Throws {@link PackageRefusal} at the first rule it breaks;
 * `facts` receives what was learnt before that, for previews.
 */
export async function checkCasePackage(source: ZipSource, verification: SignatureVerification | undefined, facts: PackageFacts): Promise<CheckedPackage> {
  const zip = await openPackage(source);
  const csvEntry = [...zip.entries.values()].find((entry) => !entry.name.includes("/") && entry.name.endsWith("_data.csv"));
  if (csvEntry !== undefined) facts.csv = decoder.decode(await readSmall(zip, csvEntry, "The CSV data file", MAX_DATA_BYTES));
  const dataEntry = dataEntryOf(zip);
  const images = imageEntriesOf(zip);
  facts.hasImages = images.size > 0;
  // The small entries first: the manifest says which images to read at all.
  const manifestEntry = zip.entries.get(MANIFEST_ENTRY);
  const manifestBytes = manifestEntry === undefined ? undefined : await readSmall(zip, manifestEntry, MANIFEST_ENTRY, MAX_MANIFEST_BYTES);
  const dataBytes = await readSmall(zip, dataEntry, "The data file", MAX_DATA_BYTES);
  let dataRefusal: unknown;
  try {
    facts.data = parseData(dataBytes);
  } catch (err) {
    dataRefusal = err; // thrown below: the integrity rule comes first
  }
  const manifest = manifestOf(manifestBytes);
  const signature = await verifyManifestSignature(manifest.manifestHash, manifest.signature, verification);
  facts.signatureValid = signature.valid;
  const types = await checkHashes(manifest, dataBytes, zip, images);
  if (facts.data === undefined) throw dataRefusal;
  const data = facts.data;
  const warnings: string[] = [];
  if (signature.valid === false) warnings.push(`Signature invalid: ${signature.reason ?? "it does not verify"}`);
  if (verification?.requireSignature === true && signature.valid !== true) {
    throw new PackageRefusal(signature.valid === "unsigned" ? "The package is not signed and signatures are required" : `Signature invalid: ${signature.reason ?? ""}`);
  }
  return { data, manifest, ...matchImages(data, zip, images, types), signatureValid: signature.valid, warnings, bytes: zip.size };
}
