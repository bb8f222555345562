import { afterEach, describe, expect, it } from "vitest";
import { stubVerifier, testService } from "../../helpers/service.ts";
import { closedPort, startHttpServer } from "../../helpers/http-server.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A siteverify endpoint that records what it got and answers like Turnstile. */
async function fakeSiteverify(answer: (form: URLSearchParams) => unknown, delayMs = 0) {
  const seen: URLSearchParams[] = [];
  const server = await startHttpServer((req, body, res) => {
    const form = new URLSearchParams(body);
    seen.push(form);
    setTimeout(() => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify(answer(form)));
    }, delayMs);
  });
  cleanups.push(server.close);
  return { url: `${server.url}/turnstile/v0/siteverify`, seen };
}

const postToken = (app: ReturnType<typeof testService>["app"], body: BodyInit, headers: Record<string, string> = {}) =>
  app.request("/captcha/", { method: "POST", body, headers: { "Content-Type": "application/json", ...headers } }, { clientIp: "203.0.113.7" });

describe("captcha worker (spec 4.6)", () => {
  it("posts secret, response and remoteip to the verify URL and answers 200 with its verdict", async () => {
    const verify = await fakeSiteverify((form) =>
      form.get("response") === "good"
        ? { success: true, "error-codes": [], challenge_ts: "2026-11-22T12:00:00Z", hostname: "lab.example" }
        : { success: false, "error-codes": ["invalid-input-response"] }
    );
    const { app } = testService({ CAPTCHA_SECRET: "s3cret", CAPTCHA_VERIFY_URL: verify.url });

    const ok = await postToken(app, JSON.stringify({ "captcha-response": "good" }));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ success: true, "error-codes": [], challenge_ts: "2026-11-22T12:00:00Z", hostname: "lab.example" });
    expect(Object.fromEntries(verify.seen[0]!)).toEqual({ secret: "s3cret", response: "good", remoteip: "203.0.113.7" });

    const failed = await postToken(app, JSON.stringify({ "captcha-response": "bad" }));
    expect(failed.status).toBe(200);
    expect(await failed.json()).toMatchObject({ success: false, "error-codes": ["invalid-input-response"] });
  });

  it("accepts cf-turnstile-response, as JSON and as a form", async () => {
    const verifier = stubVerifier({ success: true, "error-codes": [] });
    const { app } = testService({}, { captcha: verifier });
    expect((await postToken(app, JSON.stringify({ "cf-turnstile-response": "t1" }))).status).toBe(200);
    const form = new URLSearchParams({ "cf-turnstile-response": "t2" });
    const response = await app.request("/captcha", { method: "POST", body: form });
    expect(response.status).toBe(200);
    expect(verifier.calls.map((call) => call.token)).toEqual(["t1", "t2"]);
  });

  it("a form is read alike on every runtime (not by each one's formData): charset, broken escapes, file parts, the exact media type", async () => {
    const verify = await fakeSiteverify(() => ({ success: true, "error-codes": [] }));
    const { app } = testService({ CAPTCHA_SECRET: "s3cret", CAPTCHA_VERIFY_URL: verify.url });
    const multipart = (parts: string, preamble = "") => `${preamble}--B\r\n${parts}\r\n--B--\r\n`;
    const field = (headers: string, value: string) => `Content-Disposition: form-data; ${headers}\r\n\r\n${value}`;
    const sent: [string, string, string | null][] = [
      ["application/x-www-form-urlencoded; charset=iso-8859-1", "captcha-response=tok1", "tok1"],
      ["application/x-www-form-urlencoded", "captcha-response=%ZZ&x=1", "%ZZ"],
      ["APPLICATION/X-WWW-FORM-URLENCODED", "cf-turnstile-response=a+b%20c", "a b c"],
      ["application/x-www-form-urlencoded-x", "captcha-response=tok1", null],
      ["multipart/form-data; boundary=B", multipart(field('name="captcha-response"', "tok2")), "tok2"],
      // A preamble (which no widget sends) is refused by the parser, the same on every runtime.
      ["multipart/form-data; boundary=B", multipart(field('name="captcha-response"', "tok2"), "a preamble\r\n"), null],
      ["multipart/form-data; boundary=B", multipart(field('name="captcha-response"; filename=""', "tok3")), null],
      ["multipart/form-data; boundary=B", multipart(`Content-Transfer-Encoding: base64\r\n${field('name="captcha-response"', "dG9rMQ==")}`), "dG9rMQ=="],
      ["multipart/form-data; boundary=B", multipart(field('name="__proto__"', "x") + "\r\n--B\r\n" + field('name="captcha-response"', "tok4")), "tok4"],
      ["multipart/form-data; boundary=B", "--B\r\nno closing boundary", null],
    ];
    for (const [type, body, token] of sent) {
      const before = verify.seen.length;
      const answer = await postToken(app, body, { "Content-Type": type });
      expect(answer.status, `${type}: ${body}`).toBe(token === null ? 400 : 200);
      expect(verify.seen.length - before, `${type}: ${body}`).toBe(token === null ? 0 : 1);
      if (token !== null) expect(verify.seen.at(-1)!.get("response"), `${type}: ${body}`).toBe(token);
    }
  });

  it("a missing or empty token, or a bad body, is 400 and the verifier is not asked", async () => {
    const verifier = stubVerifier({ success: true, "error-codes": [] });
    const { app } = testService({}, { captcha: verifier });
    for (const body of ["{}", JSON.stringify({ "captcha-response": "" }), JSON.stringify({ "captcha-response": 5 }), "not json", "", "[]"]) {
      const response = await postToken(app, body);
      expect(response.status, body).toBe(400);
      expect(await response.json()).toMatchObject({ code: "VALIDATION_ERROR" });
    }
    expect(verifier.calls).toEqual([]);
  });

  it("other methods are 405", async () => {
    const { app } = testService();
    for (const method of ["GET", "PUT", "DELETE"]) {
      const response = await app.request("/captcha/", { method });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toContain("POST");
      expect(await response.json()).toMatchObject({ code: "VALIDATION_ERROR" });
    }
  });

  it("an unreachable verifier gives a clear 500, not a hang", async () => {
    const port = await closedPort();
    const { app } = testService({ CAPTCHA_SECRET: "s", CAPTCHA_VERIFY_URL: `http://127.0.0.1:${port}/siteverify` });
    const response = await postToken(app, JSON.stringify({ "captcha-response": "t" }));
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ code: "SERVER_ERROR", message: "Captcha verification service could not be reached" });
  });

  it("a verifier that does not answer in CAPTCHA_TIMEOUT_MS gives a clear 500", async () => {
    const verify = await fakeSiteverify(() => ({ success: true, "error-codes": [] }), 2_000);
    const { app } = testService({ CAPTCHA_SECRET: "s", CAPTCHA_VERIFY_URL: verify.url, CAPTCHA_TIMEOUT_MS: "200" });
    const started = Date.now();
    const response = await postToken(app, JSON.stringify({ "captcha-response": "t" }));
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(response.status).toBe(500);
    expect(((await response.json()) as { message: string }).message).toMatch(/did not answer within 200 ms/);
  });

  it("without CAPTCHA_SECRET it says so instead of asking the service", async () => {
    const verify = await fakeSiteverify(() => ({ success: true, "error-codes": [] }));
    const { app } = testService({ CAPTCHA_VERIFY_URL: verify.url });
    const response = await postToken(app, JSON.stringify({ "captcha-response": "t" }));
    expect(response.status).toBe(500);
    expect(((await response.json()) as { message: string }).message).toMatch(/CAPTCHA_SECRET/);
    expect(verify.seen).toEqual([]);
  });
});
