import { describe, expect, it } from "vitest";
import { Hono } from "hono";
import { limitBody, settleRequestBody } from "../../../src/core/http/limits.ts";
import { ServiceError } from "../../../src/core/errors.ts";
import { statusOf } from "../../../src/core/http/errors.ts";

/** A streamed body of `chunks` × `size` bytes that counts what was pulled from it. */
function countedBody(chunks: number, size: number, delayMs = 0): { body: ReadableStream<Uint8Array>; pulled: () => number } {
  let sent = 0;
  let bytes = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      if (sent === chunks) return controller.close();
      sent += 1;
      bytes += size;
      controller.enqueue(new Uint8Array(size));
    },
  }, { highWaterMark: 0 });
  return { body, pulled: () => bytes };
}

const put = (body: ReadableStream<Uint8Array> | Uint8Array, headers: Record<string, string> = {}) =>
  new Request("http://local/x", { method: "PUT", body, headers, duplex: "half" } as RequestInit);

describe("settleRequestBody: a body left unread by a refusal", () => {
  const refusal = () => new Response("no", { status: 403 });

  it("is read to the end within the bound, and the answer keeps the connection", async () => {
    const { body, pulled } = countedBody(32, 64 * 1024);
    const answer = await settleRequestBody(put(body), refusal(), { bound: { maxBytes: 4 * 1024 * 1024, maxMs: 5000 } });
    expect(answer.status).toBe(403);
    expect(answer.headers.get("Connection")).toBeNull();
    expect(pulled()).toBe(32 * 64 * 1024);
  });

  it("past the byte bound is left, and the answer says Connection: close", async () => {
    const { body, pulled } = countedBody(1000, 64 * 1024);
    const answer = await settleRequestBody(put(body), refusal(), { bound: { maxBytes: 1024 * 1024, maxMs: 5000 } });
    expect(answer.status).toBe(403);
    expect(await answer.text()).toBe("no");
    expect(answer.headers.get("Connection")).toBe("close");
    expect(pulled()).toBeLessThan(2 * 1024 * 1024);
  });

  it("declared longer than the bound is not read at all", async () => {
    const { body, pulled } = countedBody(10, 1024);
    const answer = await settleRequestBody(put(body, { "Content-Length": String(64 * 1024 * 1024) }), refusal(), { bound: { maxBytes: 1024 * 1024, maxMs: 5000 } });
    expect(answer.headers.get("Connection")).toBe("close");
    expect(pulled()).toBe(0);
  });

  it("arriving slower than the time bound closes the connection instead of holding the answer", async () => {
    const { body } = countedBody(1000, 10, 50);
    const started = Date.now();
    const answer = await settleRequestBody(put(body), refusal(), { bound: { maxBytes: 1024 * 1024, maxMs: 300 } });
    expect(answer.headers.get("Connection")).toBe("close");
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("stalled longer than the idle bound closes the connection then, though the time bound is far off; a steady slow body is read to its end", async () => {
    // 2 bytes, then nothing: the client stopped sending.
    let sentFirst = false;
    const stalled = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (!sentFirst) {
          sentFirst = true;
          controller.enqueue(new Uint8Array(2));
        }
        return new Promise(() => {});
      },
    });
    const started = Date.now();
    const answer = await settleRequestBody(put(stalled), refusal(), { bound: { maxBytes: 1024 * 1024, maxMs: 60_000, maxIdleMs: 200 } });
    expect(answer.headers.get("Connection")).toBe("close");
    expect(Date.now() - started).toBeLessThan(2000);
    // 10 chunks 50 ms apart: never idle for 200 ms, read whole.
    const { body, pulled } = countedBody(10, 10, 50);
    const steady = await settleRequestBody(put(body), refusal(), { bound: { maxBytes: 1024 * 1024, maxMs: 60_000, maxIdleMs: 200 } });
    expect(steady.headers.get("Connection")).toBeNull();
    expect(pulled()).toBe(100);
  });

  it("costs nothing when the app read the body, unless the adapter knows some has not arrived", async () => {
    const request = put(new Uint8Array(10));
    await request.arrayBuffer();
    const answer = new Response("ok");
    expect(await settleRequestBody(request, answer)).toBe(answer);
    const held = put(countedBody(5, 10).body);
    held.body!.getReader();
    expect((await settleRequestBody(held, new Response("ok"), { incomplete: true })).headers.get("Connection")).toBe("close");
  });
});

describe("limitBody", () => {
  const app = () => {
    const hono = new Hono();
    hono.onError((err, c) => c.json({ status: err instanceof ServiceError ? statusOf(err) : 500 }, err instanceof ServiceError ? (statusOf(err) as 413) : 500));
    hono.put("/x", limitBody(1000), async (c) => c.text(String((await c.req.arrayBuffer()).byteLength)));
    return hono;
  };

  it("passes a streamed body within the limit to the handler whole", async () => {
    const response = await app().fetch(put(countedBody(3, 300).body));
    expect(await response.text()).toBe("900");
  });

  it("refuses a streamed body past the limit with 413 and leaves the rest for settleRequestBody", async () => {
    const { body, pulled } = countedBody(100, 300);
    const request = put(body);
    const response = await app().fetch(request);
    expect(response.status).toBe(413);
    expect(pulled()).toBeLessThan(100 * 300);
    expect(request.body!.locked).toBe(false);
    const settled = await settleRequestBody(request, response);
    expect(settled.headers.get("Connection")).toBeNull();
    expect(pulled()).toBe(100 * 300);
  });

  it("refuses a declared length past the limit without reading the body", async () => {
    const { body, pulled } = countedBody(100, 300);
    const response = await app().fetch(put(body, { "Content-Length": "30000" }));
    expect(response.status).toBe(413);
    expect(pulled()).toBe(0);
  });
});
