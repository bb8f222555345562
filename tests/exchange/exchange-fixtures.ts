/**
 * An analyst's case with three real images (PNG with boxes, JPEG with boxes and a confirmation
 * request, GIF without annotations), in memory ports, and what the tests need around it.
 */
import { unzipSync, zipSync, type Unzipped } from "fflate";
import { memoryPorts, fixedClock } from "../helpers/service.ts";
import { fixture } from "../helpers/images.ts";
import { storageKeys } from "../../src/core/storage/keys.ts";
import { createLocalImageHost } from "../../src/core/images/local-host.ts";
import type { ServicePorts } from "../../src/core/service/service.ts";
import { portsExchangeStore, type ExchangeStore } from "../../src/core/exchange/mod.ts";

export const ANALYST = "analyst-uid";
export const REVIEWER = "reviewer-uid";
export const CASE = "CASE-2026-001";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export interface Seeded {
  ports: ServicePorts;
  store: ExchangeStore;
  clock: ReturnType<typeof fixedClock>;
  files: { id: string; originalFilename: string; bytes: Uint8Array }[];
}

export async function putUser(ports: ServicePorts, uid: string, cases: string[] = [], extra: Record<string, unknown> = {}): Promise<void> {
  const record = {
    uid,
    email: `${uid}@lab.example`,
    firstName: uid.split("-")[0]!,
    lastName: "Examiner",
    company: "State Lab",
    permitted: true,
    cases: cases.map((caseNumber) => ({ caseNumber, createdAt: "2026-11-01T09:00:00.000Z" })),
    createdAt: "2026-11-01T09:00:00.000Z",
    ...extra,
  };
  await ports.users.put(storageKeys.user(uid), JSON.stringify(record));
}

export async function readJson(ports: ServicePorts, key: string): Promise<any> {
  const bytes = await ports.data.get(key);
  return bytes === null ? null : JSON.parse(decoder.decode(bytes));
}

export async function putJson(ports: ServicePorts, key: string, value: unknown): Promise<void> {
  await ports.data.put(key, encoder.encode(JSON.stringify(value)));
}

/** The analyst, the reviewer and the analyst's case of three files. */
export async function seedCase(options: { caseNumber?: string } = {}): Promise<Seeded> {
  const clock = fixedClock("2026-11-22T12:00:00.000Z");
  const ports = memoryPorts({ clock });
  const caseNumber = options.caseNumber ?? CASE;
  await putUser(ports, ANALYST, [caseNumber]);
  await putUser(ports, REVIEWER, ["REVIEWER-OWN-1"]);
  const host = createLocalImageHost({ store: ports.images, signingKey: undefined, deliveryBase: "http://localhost/image/delivery", clock, urlLifetimeSeconds: 60 });
  const sources = [
    { name: "bullet 1.png", bytes: fixture("sample.png") },
    { name: "casing-2.jpg", bytes: fixture("sample.jpg") },
    { name: "overview.gif", bytes: fixture("sample.gif") },
  ];
  const files: Seeded["files"] = [];
  for (const source of sources) {
    const hosted = await host.upload({ bytes: source.bytes, filename: source.name, contentType: "image/png", owner: ANALYST });
    files.push({ id: hosted.id, originalFilename: source.name, bytes: source.bytes });
  }
  await putJson(ports, storageKeys.case(ANALYST, caseNumber), {
    caseNumber,
    files: files.map((file, i) => ({ id: file.id, originalFilename: file.originalFilename, uploadedAt: `2026-11-0${i + 2}T10:00:00.000Z` })),
    createdAt: "2026-11-01T09:00:00.000Z",
  });
  await putJson(ports, storageKeys.annotations(ANALYST, caseNumber, files[0]!.id), {
    leftCase: caseNumber,
    rightCase: "Q-7",
    leftItem: "1",
    rightItem: "2",
    caseFontColor: "#ff0000",
    classType: "Bullet",
    indexType: "number",
    indexNumber: "3",
    supportLevel: "ID",
    hasSubclass: false,
    includeConfirmation: false,
    additionalNotes: 'Land impressions agree; "6 right" twist.\nSecond line, with, commas.',
    boxAnnotations: [
      { id: "box-1", x: 10.5, y: 20, width: 30.25, height: 15, color: "#00ff00", label: "land 1", timestamp: "2026-11-03T11:00:00.000Z" },
      { id: "box-2", x: 55, y: 40.125, width: 12, height: 8.5, color: "#0000ff", timestamp: "2026-11-03T11:05:00.000Z" },
    ],
    updatedAt: "2026-11-10T08:00:00.000Z",
  });
  await putJson(ports, storageKeys.annotations(ANALYST, caseNumber, files[1]!.id), {
    leftCase: caseNumber,
    rightCase: "Q-8",
    leftItem: "4",
    rightItem: "5",
    classType: "Cartridge Case",
    supportLevel: "Inconclusive",
    hasSubclass: true,
    includeConfirmation: true,
    classNote: "breech face",
    boxAnnotations: [{ id: "box-3", x: 0, y: 0, width: 100, height: 100, color: "#abc", timestamp: "2026-11-04T11:00:00.000Z" }],
    updatedAt: "2026-11-12T08:00:00.000Z",
  });
  return { ports, store: portsExchangeStore(ports), clock, files };
}

export async function streamBytes(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export function entries(zip: Uint8Array): Unzipped {
  return unzipSync(zip);
}

/** The archive with one entry's bytes replaced (or removed with null, or added). */
export function rezip(zip: Uint8Array, change: Record<string, Uint8Array | null>): Uint8Array {
  const files: Record<string, Uint8Array> = { ...unzipSync(zip) };
  for (const [name, bytes] of Object.entries(change)) {
    if (bytes === null) delete files[name];
    else files[name] = bytes;
  }
  return zipSync(files, { level: 0 });
}

/** A copy of bytes with the byte at `index` changed. */
export function flipped(bytes: Uint8Array, index: number): Uint8Array {
  const copy = new Uint8Array(bytes);
  copy[index] = copy[index]! ^ 0x01;
  return copy;
}

export const text = (bytes: Uint8Array | undefined): string => decoder.decode(bytes);
export const utf8 = (value: string): Uint8Array => encoder.encode(value);

/** The image ids in the image store (metadata files `images/{id}.json`). */
export async function storedImageIds(ports: ServicePorts): Promise<string[]> {
  return (await ports.images.list("images/")).filter((key) => key.endsWith(".json")).map((key) => key.slice(7, -5)).sort();
}

/** Audit entries of one user, every day, in day order. */
export async function auditEntries(ports: ServicePorts, uid: string): Promise<any[]> {
  const keys = (await ports.audit.list("audit-trails/")).filter((key) => key.startsWith(`audit-trails/${uid}-`)).sort();
  const days = await Promise.all(keys.map(async (key) => JSON.parse(decoder.decode((await ports.audit.get(key))!))));
  return days.flat();
}

/** CRC-32 bit by bit: the reference the module's CRC and the archives' checksums are compared with. */
export function referenceCrc(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}
