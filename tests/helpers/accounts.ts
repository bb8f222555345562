import { readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { expect } from "vitest";
import { KEYS } from "./service.ts";
import { fixture, uploadForm } from "./images.ts";

/** Something that answers requests like a Hono app or a server behind fetch. */
export type Caller = (path: string, init?: RequestInit) => Promise<Response>;

export const profile = (name: string) => ({ email: `${name}@lab.example`, firstName: name, lastName: "Examiner", company: "State Lab", permitted: true });

/** Every file under `dir`, as paths relative to it. */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => relative(dir, join(entry.parentPath, entry.name))).sort();
}

/**
 * Builds an account through the HTTP API as a client does: the user record, its cases (own and
 * read-only), several files per case with images uploaded to the image worker and annotations.
 * Answers the image ids per case.
 */
export async function seedAccount(
  call: { user: Caller; data: Caller; image: Caller },
  uid: string,
  cases: { own: string[]; readOnly: string[]; filesPerCase: number },
  extraHeaders: Record<string, string> = {},
  imageHeaders: Record<string, string> = extraHeaders,
): Promise<Record<string, string[]>> {
  const json = (key: string) => ({ ...extraHeaders, "X-Custom-Auth-Key": key, "Content-Type": "application/json" });
  expect((await call.user(`/${uid}`, { method: "PUT", headers: json(KEYS.USER_DB_AUTH), body: JSON.stringify(profile(uid)) })).status).toBe(201);
  expect((await call.user(`/${uid}/cases`, { method: "PUT", headers: json(KEYS.USER_DB_AUTH), body: JSON.stringify({ cases: cases.own.map((caseNumber) => ({ caseNumber })) }) })).status).toBe(200);
  if (cases.readOnly.length > 0) {
    const readOnlyCases = cases.readOnly.map((caseNumber) => ({
      caseNumber, importedAt: "2026-11-20T00:00:00Z", originalExportDate: "2026-11-19T00:00:00Z", originalExportedBy: "bo@lab.example", isReadOnly: true,
    }));
    expect((await call.user(`/${uid}`, { method: "PUT", headers: json(KEYS.USER_DB_AUTH), body: JSON.stringify({ readOnlyCases }) })).status).toBe(200);
  }
  const images: Record<string, string[]> = {};
  for (const caseNumber of [...cases.own, ...cases.readOnly]) {
    const files = [];
    for (let i = 0; i < cases.filesPerCase; i++) {
      const uploaded = await call.image("/", { method: "POST", body: uploadForm(fixture(i % 2 ? "sample.jpg" : "sample.png"), `item-${i}.png`), headers: { ...imageHeaders, Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` } });
      expect(uploaded.status).toBe(200);
      const id = ((await uploaded.json()) as { result: { id: string } }).result.id;
      files.push({ id, originalFilename: `item-${i}.png`, uploadedAt: "2026-11-22T12:00:00Z" });
      const annotations = { leftCase: caseNumber, rightCase: caseNumber, leftItem: "1", rightItem: "2", includeConfirmation: false, updatedAt: "2026-11-22T12:00:00Z" };
      expect((await call.data(`/${uid}/${caseNumber}/${id}/data.json`, { method: "PUT", headers: json(KEYS.R2_KEY_SECRET), body: JSON.stringify(annotations) })).status).toBe(200);
    }
    const document = { caseNumber, files, createdAt: "2026-11-22T12:00:00Z", ...(cases.readOnly.includes(caseNumber) ? { isReadOnly: true } : {}) };
    expect((await call.data(`/${uid}/${caseNumber}/data.json`, { method: "PUT", headers: json(KEYS.R2_KEY_SECRET), body: JSON.stringify(document) })).status).toBe(200);
    images[caseNumber] = files.map((file) => file.id);
  }
  return images;
}
