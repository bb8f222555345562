/**
 * The Striae v1.0 client's audit calls (app/services/audit.service.ts and the audit viewer):
 *
 * - it writes with `POST {data worker}/audit/?userId={uid}`, headers `Content-Type:
 *   application/json` and `X-Custom-Auth-Key`, the entry as JSON (fields it leaves undefined
 *   are dropped by JSON.stringify), and reads `entryCount` from the answer;
 * - it reads with `GET {data worker}/audit/?userId=&startDate=&endDate=`, only
 *   `X-Custom-Auth-Key`, the bounds as `Date.toISOString()` (now minus 1, 7, 30 or 90 days and
 *   now; a custom range is a local midnight and a local 23:59:59 converted to UTC), takes
 *   `entries` as they come (no sorting), filters on `details.caseNumber`,
 *   `details.workflowPhase`, `action`, `result` and `details.userProfileDetails?.badgeId`, keeps
 *   the first `limit` (500 in the viewer) and reads the first entry as the newest and the last
 *   as the oldest.
 */
import { describe, expect, it } from "vitest";
import { fixedClock, KEYS, testService } from "../helpers/service.ts";

const DATA_WORKER_URL = "http://localhost/data";
const apiKey = KEYS.R2_KEY_SECRET;
const NOW = "2026-11-22T12:51:07.123Z";

type App = ReturnType<typeof testService>["app"];
type Entry = {
  timestamp: string;
  userId: string;
  action: string;
  result: string;
  details: {
    caseNumber?: string;
    workflowPhase?: string;
    validationErrors: string[];
    userProfileDetails?: { badgeId?: string };
  };
};

/** What the client's logEvent builds from its parameters (undefined fields included, as in the client). */
function clientEntry(params: Record<string, unknown>, timestamp: string): Record<string, unknown> {
  return {
    timestamp,
    userId: params.userId,
    userEmail: params.userEmail,
    action: params.action,
    result: params.result,
    details: {
      fileName: params.fileName,
      fileType: params.fileType,
      checksumValid: params.checksumValid,
      validationErrors: params.validationErrors ?? [],
      caseNumber: params.caseNumber,
      confirmationId: params.confirmationId,
      originalExaminerUid: params.originalExaminerUid,
      reviewingExaminerUid: params.reviewingExaminerUid,
      workflowPhase: params.workflowPhase,
      securityChecks: params.securityChecks,
      performanceMetrics: params.performanceMetrics,
      caseDetails: params.caseDetails,
      fileDetails: params.fileDetails,
      annotationDetails: params.annotationDetails,
      sessionDetails: params.sessionDetails,
      securityDetails: params.securityDetails,
    },
  };
}

const user = { uid: "firebase-uid-7", email: "examiner@lab.example" };

/** One of each kind of event the v1.0 client logs, with the parameters it passes. */
const EVENTS: Record<string, unknown>[] = [
  { action: "case-create", result: "success", fileName: "C-1.case", fileType: "case-package", validationErrors: [], caseNumber: "C-1", workflowPhase: "casework", caseDetails: { newCaseName: "C-1", caseDescription: undefined, caseType: undefined, createdDate: NOW, totalFiles: 0, totalAnnotations: 0, caseSize: 0 } },
  { action: "file-upload", result: "success", fileName: "bullet.jpg", fileType: "image-file", validationErrors: [], caseNumber: "C-1", workflowPhase: "casework", fileDetails: { fileId: "img-1", originalFileName: "bullet.jpg", fileSize: 123456, mimeType: "image/jpeg", uploadMethod: "file-picker", processingTime: 850, thumbnailGenerated: true }, performanceMetrics: { processingTimeMs: 850, fileSizeBytes: 123456 } },
  { action: "file-access", result: "success", fileName: "bullet.jpg", fileType: "image-file", validationErrors: [], caseNumber: "C-1", workflowPhase: "casework", fileDetails: { fileId: "img-1", originalFileName: "bullet.jpg", fileSize: 0, uploadMethod: "signed-url", processingTime: 40, sourceLocation: "Image viewer" }, performanceMetrics: { processingTimeMs: 40, fileSizeBytes: 0 } },
  { action: "annotation-create", result: "success", fileName: "annotation-a1.json", fileType: "json-data", validationErrors: [], caseNumber: "C-1", workflowPhase: "casework", annotationDetails: { annotationId: "a1", annotationType: "measurement", annotationData: { type: "measurement", position: { x: 12.5, y: 40 }, size: { width: 10, height: 5 }, boxAnnotations: [{ id: "b1", x: 1, y: 2, width: 3, height: 4, color: "#ff0000" }] }, tool: "box", canvasPosition: { x: 12.5, y: 40 }, annotationSize: { width: 10, height: 5 } }, fileDetails: { fileId: "img-1", originalFileName: "bullet.jpg", fileSize: 0, mimeType: "image/*", uploadMethod: "api" } },
  { action: "pdf-generate", result: "success", fileName: "C-1.pdf", fileType: "pdf-document", validationErrors: [], caseNumber: "C-1", workflowPhase: "casework", performanceMetrics: { processingTimeMs: 2100, fileSizeBytes: 0 } },
  { action: "export", result: "success", fileName: "C-1.zip", fileType: "case-package", validationErrors: [], caseNumber: "C-1", workflowPhase: "case-export", securityChecks: { selfConfirmationPrevented: false, userAuthenticationValid: true, fileIntegrityValid: true, timestampValidationPassed: true, permissionChecksPassed: true }, originalExaminerUid: user.uid },
  { action: "import", result: "failure", fileName: "C-9.zip", fileType: "case-package", checksumValid: false, validationErrors: ["Hash mismatch"], caseNumber: "C-9", workflowPhase: "case-import", securityChecks: { selfConfirmationPrevented: true, userAuthenticationValid: true, fileIntegrityValid: false, timestampValidationPassed: false, permissionChecksPassed: false, exporterUidValidated: true }, originalExaminerUid: "other-uid", reviewingExaminerUid: user.uid },
  { action: "user-login", result: "success", fileName: "session-s1.log", fileType: "log-file", validationErrors: [], workflowPhase: "user-management", sessionDetails: { sessionId: "s1", userAgent: "Mozilla/5.0", loginMethod: "firebase" } },
  { action: "user-profile-update", result: "success", fileName: "profile-update-displayName.log", fileType: "log-file", validationErrors: [], workflowPhase: "user-management", sessionDetails: undefined, userProfileDetails: { profileField: "displayName", oldValue: "A", newValue: "B" } },
];

/** The client's persistAuditEntry: the URL, headers and body it sends. */
async function persist(app: App, entry: Record<string, unknown>): Promise<Response> {
  const url = new URL(`${DATA_WORKER_URL}/audit/`);
  url.searchParams.set("userId", String(entry.userId));
  return await app.request(url.toString(), {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Custom-Auth-Key": apiKey },
    body: JSON.stringify(entry),
  });
}

/** The client's getAuditEntries: the request, then the reading of `entries` it does. */
async function fetchEntries(
  app: App,
  params: { startDate?: string; endDate?: string; caseNumber?: string; workflowPhase?: string; limit?: number },
): Promise<{ status: number; entries: Entry[] }> {
  const url = new URL(`${DATA_WORKER_URL}/audit/`);
  url.searchParams.set("userId", user.uid);
  if (params.startDate) url.searchParams.set("startDate", params.startDate);
  if (params.endDate) url.searchParams.set("endDate", params.endDate);
  const response = await app.request(url.toString(), { method: "GET", headers: { "X-Custom-Auth-Key": apiKey } });
  if (!response.ok) return { status: response.status, entries: [] };
  let { entries } = (await response.json()) as { entries: Entry[]; total: number };
  if (params.caseNumber) entries = entries.filter((e) => e.details.caseNumber === params.caseNumber);
  if (params.workflowPhase) entries = entries.filter((e) => e.details.workflowPhase === params.workflowPhase);
  if (params.limit) entries = entries.slice(0, params.limit);
  // The viewer's badge filter reads every entry's details (it throws if one has none).
  for (const entry of entries) void entry.details.userProfileDetails?.badgeId?.trim().toLowerCase();
  return { status: response.status, entries };
}

/** `new Date(); setDate(getDate() - days); toISOString()` at the test's "now", in UTC. */
const daysBefore = (iso: string, days: number) => new Date(Date.parse(iso) - days * 86_400_000).toISOString();

describe("client compatibility: audit", () => {
  it("every entry the client logs is stored (200) and the answer has the entryCount it reads", async () => {
    const clock = fixedClock(NOW);
    const { app } = testService({}, { clock });
    for (const [i, params] of EVENTS.entries()) {
      const response = await persist(app, clientEntry({ userId: user.uid, userEmail: user.email, ...params }, NOW));
      expect(response.status, String(params.action)).toBe(200);
      const result = (await response.json()) as { success: boolean; entryCount: number; filename: string };
      expect(result).toEqual({ success: true, entryCount: i + 1, filename: `audit-trails/${user.uid}-2026-11-22.json` });
    }
    // A violation logged without a signed-in user goes to the trail "unknown".
    const violation = clientEntry({ userId: "unknown", userEmail: "unknown@system.com", action: "security-violation", result: "blocked", fileName: "security-incident-1.log", fileType: "log-file", validationErrors: ["Too many attempts"], securityDetails: { incidentType: "brute-force", severity: "high", blockedBySystem: true, investigationId: "INV-1", reportedToAuthorities: false, mitigationSteps: ["Automatically blocked by system"] } }, NOW);
    expect((await persist(app, violation)).status).toBe(200);
  });

  it("the viewer's ranges (now minus N days to now, as ISO date-times) return the entries, newest first", async () => {
    const clock = fixedClock("2026-10-01T09:00:00Z");
    const { app } = testService({}, { clock });
    const times = ["2026-10-01T09:00:00.000Z", "2026-11-15T23:59:00.000Z", "2026-11-21T18:30:00.000Z", "2026-11-22T08:00:00.000Z", "2026-11-22T12:50:00.000Z"];
    for (const [i, time] of times.entries()) {
      clock.set(time);
      const params = EVENTS[i % EVENTS.length]!;
      expect((await persist(app, clientEntry({ userId: user.uid, userEmail: user.email, ...params }, time))).status).toBe(200);
    }
    clock.set(NOW);
    const timestamps = async (days: number) => {
      const { status, entries } = await fetchEntries(app, { startDate: daysBefore(NOW, days), endDate: new Date(NOW).toISOString(), limit: 500 });
      expect(status, `${days}d`).toBe(200);
      return entries.map((e) => e.timestamp);
    };
    // 1d: from 2026-11-21T12:51:07.123Z, which covers all of 2026-11-21.
    expect(await timestamps(1)).toEqual([times[4], times[3], times[2]]);
    expect(await timestamps(7)).toEqual([times[4], times[3], times[2], times[1]]);
    expect(await timestamps(30)).toEqual([times[4], times[3], times[2], times[1]]);
    expect(await timestamps(90)).toEqual([...times].reverse());
    // The case trail reads entries[length - 1] as its start and entries[0] as its end.
    const { entries } = await fetchEntries(app, { startDate: daysBefore(NOW, 90), endDate: NOW, caseNumber: "C-1" });
    expect(entries.length).toBeGreaterThan(1);
    expect(Date.parse(entries[entries.length - 1]!.timestamp)).toBeLessThan(Date.parse(entries[0]!.timestamp));
  });

  it("a custom range (local midnight to local 23:59:59, converted to UTC) covers both local days", async () => {
    const clock = fixedClock(NOW);
    const { app } = testService({}, { clock });
    for (const time of ["2026-11-20T04:00:00.000Z", "2026-11-20T05:30:00.000Z", "2026-11-21T23:00:00.000Z", "2026-11-22T04:00:00.000Z"]) {
      clock.set(time);
      await persist(app, clientEntry({ userId: user.uid, userEmail: user.email, ...EVENTS[0] }, time));
    }
    // New York (UTC-5): custom 2026-11-20 .. 2026-11-21 is 2026-11-20T05:00Z .. 2026-11-22T04:59:59Z;
    // the end's time of day is earlier than the start's, and every UTC day touched is read.
    const { status, entries } = await fetchEntries(app, { startDate: "2026-11-20T05:00:00.000Z", endDate: "2026-11-22T04:59:59.000Z" });
    expect(status).toBe(200);
    expect(entries.map((e) => e.timestamp)).toEqual(["2026-11-22T04:00:00.000Z", "2026-11-21T23:00:00.000Z", "2026-11-20T05:30:00.000Z", "2026-11-20T04:00:00.000Z"]);
    // Only a start date: the viewer sends now as the end.
    expect((await fetchEntries(app, { startDate: "2026-11-21T05:00:00.000Z", endDate: NOW })).entries).toHaveLength(2);
  });

  it("an entry that cannot be served does not break the client's reading of the others", async () => {
    const clock = fixedClock(NOW);
    const { app, ports } = testService({}, { clock });
    await persist(app, clientEntry({ userId: user.uid, userEmail: user.email, ...EVENTS[0] }, NOW));
    const key = `audit-trails/${user.uid}-2026-11-22.json`;
    const stored = new TextDecoder().decode((await ports.audit.get(key))!);
    const deep = `{"timestamp":"${NOW}","userId":"${user.uid}","x":${"[".repeat(5_000)}${"]".repeat(5_000)}}`;
    await ports.audit.put(key, new TextEncoder().encode(`${stored.slice(0, -2)},\n${deep}\n]`));
    await persist(app, clientEntry({ userId: user.uid, userEmail: user.email, ...EVENTS[7] }, NOW));
    const { status, entries } = await fetchEntries(app, { startDate: daysBefore(NOW, 1), endDate: NOW, limit: 500 });
    expect(status).toBe(200);
    expect(entries.map((e) => e.action)).toEqual(["user-login", "validate", "case-create"]);
    // Summaries the viewer computes from every entry.
    expect(entries.filter((e) => e.result === "warning")).toHaveLength(1);
    expect(entries[1]!.details.validationErrors[0]).toContain("nested deeper than 64 levels");
    expect(Number.isNaN(Date.parse(entries[1]!.timestamp))).toBe(false);
    expect((await fetchEntries(app, { startDate: daysBefore(NOW, 1), endDate: NOW, caseNumber: "C-1" })).entries).toHaveLength(1);
  });

  it("the password-reset entry (userId '') is a 400 with a JSON body the client can read", async () => {
    const { app } = testService({}, { clock: fixedClock(NOW) });
    const response = await persist(app, clientEntry({ userId: "", userEmail: user.email, action: "user-password-reset", result: "success", fileName: "password-reset-email.log", fileType: "log-file", validationErrors: [], workflowPhase: "user-management" }, NOW));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "VALIDATION_ERROR" });
  });
});
