/**
 * The /docs page in a real browser (Debian's Chromium, driven by playwright-core): under
 * `serve`, it lists every operation of /openapi.json, loads nothing from another origin, breaks
 * no Content-Security-Policy rule, and "Try it out" sends requests from the page (one with the
 * data key given in "Authorize") and shows the answer.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Served, spawnServe } from "../helpers/spawn-serve.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const KEYS = { USER_DB_AUTH: "docs-user-key", R2_KEY_SECRET: "docs-data-key", KEYS_AUTH: "docs-keys-key", IMAGES_API_TOKEN: "docs-images-token" };

describe("the /docs page in Chromium", () => {
  let dir: string;
  let served: Served;
  let browser: BrowserContext;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "fa-docs-"));
    served = await spawnServe({ dataDir: join(dir, "data"), env: KEYS, timeoutMs: 60_000 });
    // A fresh profile each run: nothing cached from an earlier one.
    browser = await chromium.launchPersistentContext(join(dir, "profile"), { executablePath: CHROMIUM, headless: true, args: ARGS });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await served?.stop("SIGTERM");
    await rm(dir, { recursive: true, force: true });
  }, 30_000);

  it("lists every operation of the document and sends requests from the page, with a key from Authorize", async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    const problems: string[] = [];
    page.on("request", (request) => requested.push(request.url()));
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("response", (answer) => {
      if (answer.status() >= 400) problems.push(`${answer.status()} ${answer.url()}`);
    });
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`console: ${message.text()}`);
    });

    const doc = (await (await fetch(`${served.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`)).sort();

    const response = await page.goto(`${served.url}/docs`);
    expect(response?.status()).toBe(200);
    await page.locator(".opblock").first().waitFor({ timeout: 60_000 });
    const listed = await page.locator(".opblock").evaluateAll((blocks) =>
      blocks.map((block) => {
        const method = block.querySelector(".opblock-summary-method")?.textContent ?? "";
        const path = block.querySelector(".opblock-summary-path")?.getAttribute("data-path") ?? "";
        return `${method.toUpperCase()} ${path}`;
      })
    );
    expect(listed.sort()).toEqual(operations);

    // Try it out on GET /health: the page itself sends the request and shows the answer.
    const health = page.locator(".opblock", { has: page.locator('[data-path="/health"]') });
    await health.locator(".opblock-summary").click();
    await health.locator(".try-out__btn").click();
    const answered = page.waitForResponse((answer) => new URL(answer.url()).pathname === "/health");
    await health.locator(".execute").click();
    expect((await answered).status()).toBe(200);
    await expect.poll(() => health.locator(".live-responses-table tr.response .response-col_status").first().textContent(), { timeout: 30_000 }).toContain("200");
    expect(await health.locator(".live-responses-table .microlight").first().textContent()).toContain('"ok": true');

    // Authorize with the data worker's key, then read a document: the key goes in its header.
    await page.locator(".auth-wrapper .authorize").click();
    const scheme = page.locator(".auth-container", { has: page.locator("h4", { hasText: "dataKey" }) });
    await scheme.locator("input").fill(KEYS.R2_KEY_SECRET);
    await scheme.locator("button.authorize").click();
    await page.locator(".dialog-ux .close-modal").click();
    const read = page.locator(".opblock-get", { has: page.locator('[data-path="/data/{userId}/{caseNumber}/{document}"]') });
    await read.locator(".opblock-summary").click();
    await read.locator(".try-out__btn").click();
    for (const [name, value] of [["userId", "u1"], ["caseNumber", "C 1"], ["document", "data.json"]] as const) {
      await read.locator(`tr[data-param-name="${name}"] input`).fill(value);
    }
    const documentAnswer = page.waitForResponse((answer) => new URL(answer.url()).pathname.startsWith("/data/"));
    await read.locator(".execute").click();
    const documentRead = await documentAnswer;
    expect(documentRead.status()).toBe(200);
    expect(new URL(documentRead.url()).pathname).toBe("/data/u1/C%201/data.json");
    expect(await documentRead.request().headerValue("x-custom-auth-key")).toBe(KEYS.R2_KEY_SECRET);
    expect(await documentRead.json()).toEqual([]);

    expect(requested.length).toBeGreaterThan(2);
    expect(requested.filter((url) => !url.startsWith(`${served.url}/`) && !url.startsWith("data:"))).toEqual([]);
    expect(problems).toEqual([]);
  }, 180_000);

  it("opens with the credentials (which key in which header, the identity token) and groups the operations by worker", async () => {
    const page = await browser.newPage();
    expect((await page.goto(`${served.url}/docs`))?.status()).toBe(200);
    const intro = page.locator(".information-container .info .description");
    await intro.waitFor({ timeout: 60_000 });
    const text = (await intro.textContent()) ?? "";
    for (const shown of ["Credentials", "X-Custom-Auth-Key", "USER_DB_AUTH", "R2_KEY_SECRET", "KEYS_AUTH", "IMAGES_API_TOKEN", "X-Identity-Token", "X-Admin-Key", "Authorize"]) {
      expect(text, shown).toContain(shown);
    }
    // The credentials are a table, not a paragraph of pipes.
    expect(await intro.locator("table tr").count()).toBeGreaterThanOrEqual(7);
    const groups = await page.locator(".opblock-tag-section .opblock-tag").evaluateAll((tags) => tags.map((tag) => tag.getAttribute("data-tag")));
    expect(groups).toEqual(["user", "data", "audit", "image", "pdf", "keys", "review", "captcha", "exchange", "service"]);
    expect(await page.locator('.opblock-tag[data-tag="default"]').count()).toBe(0);
  }, 120_000);
});
