/**
 * A request body that breaks off while it is read (the client closed or reset the connection
 * before its end) is the request's fault: a 400 with the standard body, never a 500, and
 * nothing is stored. Under `serve` on Deno a body cut short by a half-closed connection was a
 * 500 ("BadResource"), on Node an aborted upload was logged as an unhandled error.
 */
import { describe, expect, it } from "vitest";
import { dataHeaders, KEYS, testService } from "../../helpers/service.ts";
import { auditEntry } from "../../helpers/audit-entry.ts";

const encoder = new TextEncoder();

/** A body that sends `head` and then fails the way a runtime's request stream does when the connection ends. */
function brokenBody(head: string): ReadableStream<Uint8Array> {
  let sent = false;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent) return controller.error(new Error("connection closed before the body's end"));
      sent = true;
      controller.enqueue(encoder.encode(head));
    },
  }, { highWaterMark: 0 });
}

const request = (path: string, method: string, headers: Record<string, string>, head: string, length?: number) =>
  new Request(`http://local${path}`, {
    method,
    body: brokenBody(head),
    // With a declared length the worker reads the body whole; without, the size limit streams it.
    headers: { "Content-Type": "application/json", ...headers, ...(length === undefined ? {} : { "Content-Length": String(length) }) },
    duplex: "half",
  } as RequestInit);

describe("a request body broken off mid-way", () => {
  const userHeaders = { "X-Custom-Auth-Key": KEYS.USER_DB_AUTH };
  const entry = JSON.stringify(auditEntry({ userId: "u1" }));
  const record = JSON.stringify({ email: "a@lab.example", firstName: "A", lastName: "B", company: "Lab", permitted: true });
  const cases: [string, string, Record<string, string>, string][] = [
    ["/data/u1/C-1/data.json", "PUT", dataHeaders, '{"caseNumber":"C-1","files":[]}'],
    ["/data/audit/?userId=u1", "POST", dataHeaders, entry],
    ["/audit/audit/?userId=u1", "POST", dataHeaders, entry],
    ["/user/u1", "PUT", userHeaders, record],
    ["/captcha/", "POST", {}, '{"captcha-response":"token"}'],
  ];

  it("an image upload broken off mid-way is a 400, and nothing is stored", async () => {
    const { app, ports } = testService();
    const head = '--x\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n\x89PNG';
    const response = await app.fetch(request("/image/", "POST", { Authorization: `Bearer ${KEYS.IMAGES_API_TOKEN}`, "Content-Type": "multipart/form-data; boundary=x" }, head));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "VALIDATION_ERROR", message: expect.stringContaining("Request body ended before it was complete") });
    expect(await ports.images.list("")).toEqual([]);
  });

  for (const [path, method, headers, text] of cases) {
    for (const declared of [true, false]) {
      it(`${method} ${path} ${declared ? "with" : "without"} a declared length is a 400, and nothing is stored`, async () => {
        const { app, ports } = testService();
        const half = text.slice(0, Math.floor(text.length / 2));
        const response = await app.fetch(request(path, method, headers, half, declared ? text.length : undefined));
        expect(response.status).toBe(400);
        expect(await response.json()).toMatchObject({ code: "VALIDATION_ERROR", message: expect.stringContaining("Request body ended before it was complete") });
        expect(await ports.data.list("")).toEqual([]);
        expect(await ports.audit.list("")).toEqual([]);
        expect(await ports.users.get("u1")).toBeNull();
      });
    }
  }
});
