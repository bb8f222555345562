/**
 * The PDF request of the Striae v1.0 client: `POST {pdf}` with `Content-Type:
 * application/json`, `imageUrl` the signed URL the image worker just gave it, the notes
 * form's state as `annotationData` (unset values as "" or null), and `userCompany` (older
 * builds: `company`). It reads the answer with `.blob()` when `ok`.
 */
import { describe, expect, it } from "vitest";
import { fixedClock, KEYS, testService } from "../helpers/service.ts";
import { uploadForm } from "../helpers/images.ts";
import { solidJpeg } from "../core/pdf/images.ts";
import { pdfText } from "../core/pdf/poppler.ts";

const bearer = { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}` };
const json = { "Content-Type": "application/json" };

/** Uploads a JPEG and signs the client's form of its URL, as the client does before a report. */
async function signedImage(app: ReturnType<typeof testService>["app"]): Promise<string> {
  const upload = await app.request("/image/", { method: "POST", body: uploadForm(solidJpeg(64, 48, [200, 40, 40]), "item.jpg"), headers: bearer });
  const { result } = (await upload.json()) as { result: { id: string } };
  const signed = await app.request(`/image/https://imagedelivery.net/${KEYS.ACCOUNT_HASH}/${result.id}/striae`, { headers: { ...bearer, Accept: "text/plain" } });
  expect(signed.status).toBe(200);
  return await signed.text();
}

/** The body the client builds from a file's stored notes. */
function clientBody(imageUrl: string, notes: Record<string, unknown> = {}) {
  return {
    imageUrl,
    filename: "item.jpg",
    userCompany: "State Crime Laboratory",
    firstName: "Ana",
    caseNumber: "C-2025-7",
    annotationData: {
      leftCase: "C-2025-7",
      rightCase: "C-2025-7",
      leftItem: "1",
      rightItem: "2",
      caseFontColor: "",
      classType: "Bullet",
      customClass: null,
      classNote: "",
      indexType: "color",
      indexNumber: null,
      indexColor: "",
      supportLevel: "Inconclusive",
      hasSubclass: null,
      includeConfirmation: false,
      additionalNotes: null,
      boxAnnotations: [{ id: "box-1", x: 10, y: 10, width: 20, height: 20, color: "#ff0000", label: "L1", timestamp: "2025-09-01T10:00:00.000Z" }],
      updatedAt: "2025-09-01T10:00:00.000Z",
      ...notes,
    },
    activeAnnotations: ["number", "class", "index", "id", "box", "notes"],
    currentDate: "09/01/2025",
    notesUpdatedFormatted: "09/01/2025",
  };
}

describe("client compatibility: PDF reports", () => {
  it("renders the report from the signed URL this service just gave, without PUBLIC_URL (loopback origin)", async () => {
    const { app } = testService({}, { clock: fixedClock("2026-11-22T12:00:00Z") });
    const imageUrl = await signedImage(app);
    expect(new URL(imageUrl).hostname).toBe("localhost");
    const response = await app.request("/pdf", { method: "POST", headers: json, body: JSON.stringify(clientBody(imageUrl)) });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/pdf");
    const text = pdfText(new Uint8Array(await response.arrayBuffer()));
    expect(text).toContain("C-2025-7");
    expect(text).toContain("State Crime Laboratory");
  });

  it("still checks the signature of its own URL, and other loopback URLs stay refused", async () => {
    const { app } = testService({}, { clock: fixedClock("2026-11-22T12:00:00Z") });
    const imageUrl = new URL(await signedImage(app));
    imageUrl.searchParams.set("sig", "0".repeat(64));
    const tampered = await app.request("/pdf", { method: "POST", headers: json, body: JSON.stringify(clientBody(imageUrl.href)) });
    expect(tampered.status).toBe(403);
    expect(await tampered.json()).toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining("bad signature") });
    const elsewhere = await app.request("/pdf", { method: "POST", headers: json, body: JSON.stringify(clientBody("http://localhost/data/u1/C-1/data.json")) });
    expect(elsewhere.status).toBe(400);
    const otherPort = await app.request("/pdf", { method: "POST", headers: json, body: JSON.stringify(clientBody("http://127.0.0.1:9/image/delivery/x/public?exp=1&sig=0")) });
    expect(otherPort.status).toBe(400);
  });

  it("takes the client's unset values (\"\" and null) as absent, a missing annotationData as none, and company for userCompany", async () => {
    const { app } = testService({}, { clock: fixedClock("2026-11-22T12:00:00Z") });
    const imageUrl = await signedImage(app);
    const unset = await app.request("/pdf", {
      method: "POST",
      headers: json,
      body: JSON.stringify(clientBody(imageUrl, { classType: "", supportLevel: "", indexType: "", leftItem: "" })),
    });
    expect(unset.status, await unset.clone().text()).toBe(200);
    const { annotationData: _dropped, userCompany: _company, ...older } = clientBody(imageUrl);
    const withoutNotes = await app.request("/pdf", { method: "POST", headers: json, body: JSON.stringify({ ...older, company: "County Lab" }) });
    expect(withoutNotes.status, await withoutNotes.clone().text()).toBe(200);
    expect(pdfText(new Uint8Array(await withoutNotes.arrayBuffer()))).toContain("County Lab");
    // A real bad value is still refused, naming the field.
    const bad = await app.request("/pdf", { method: "POST", headers: json, body: JSON.stringify(clientBody(imageUrl, { caseFontColor: "bluish" })) });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ message: expect.stringContaining("annotationData.caseFontColor") });
  });
});
