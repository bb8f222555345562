/**
 * The package as a consumer gets it: `npm pack`, installed into a new project with its own Hono
 * app that uses every entry point, then type-checked with `strict` and without `skipLibCheck`
 * by tsc (Node) and by `deno check` (Deno). Our declarations must not pull in unstorage's,
 * whose driver declarations name packages a consumer does not have.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../", import.meta.url));
const own = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
let dir: string;
let project: string;

const CONSUMER_APP = `import { Hono } from "hono";
import {
  type AuditEntry,
  type CaseData,
  createBlobStore,
  createMemoryPorts,
  createService,
  type ErrorBody,
  parseConfig,
  type UserData,
} from "@forensic-annotation/service";
import { atomicFileDriver, passClientIp } from "@forensic-annotation/service/node";
import * as bun from "@forensic-annotation/service/bun";
import * as deno from "@forensic-annotation/service/deno";
import * as cloudflare from "@forensic-annotation/service/cloudflare";
import { exportCaseZip, portsExchangeStore } from "@forensic-annotation/service/exchange";
import { renderReport } from "@forensic-annotation/service/pdf";

const ports = createMemoryPorts();
export const app = new Hono();
app.use("*", passClientIp());
app.get("/", (c) => c.text("the lab's own app"));
app.route("/forensic", createService(ports, parseConfig({ R2_KEY_SECRET: "k" })));

export const firstCase = (data: CaseData): string => data.caseNumber;
export const who = (user: UserData, entry: AuditEntry): string => user.uid + entry.userId;
export const failed = (body: ErrorBody): string => body.code;
export const zip: ReadableStream<Uint8Array> = exportCaseZip(portsExchangeStore(ports), "u1", "C-1");
export const render: typeof renderReport = renderReport;
export const driver: ReturnType<typeof atomicFileDriver> = atomicFileDriver({ base: "./data" });
export const store: typeof createBlobStore = createBlobStore;
export const runtimes = [bun.passClientIp, deno.passClientIp, cloudflare.passClientIp] as const;
`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-consumer-"));
  project = join(dir, "consumer");
  await mkdir(project);
  // The package as published: dist/ as built by `npm run build` (npm test builds first); no
  // second build here (--ignore-scripts: `prepare`), which would rewrite dist/ under other tests.
  const packed = await run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
  await writeFile(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  await writeFile(join(project, "app.ts"), CONSUMER_APP);
  await writeFile(join(project, "tsconfig.json"), JSON.stringify({
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      lib: ["ES2023", "DOM", "DOM.Iterable"],
      types: ["node"],
      strict: true,
      skipLibCheck: false,
      noEmit: true,
    },
    files: ["app.ts"],
  }));
  await run("npm", [
    "install", "--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts",
    join(dir, filename), `hono@${own.dependencies.hono}`, `@types/node@${own.devDependencies["@types/node"]}`,
  ], { cwd: project, maxBuffer: 64 * 1024 * 1024 });
}, 240_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("a consumer project with its own Hono app", () => {
  it("the published declarations never import unstorage", async () => {
    const dist = join(project, "node_modules/@forensic-annotation/service/dist");
    const declarations = (await readdir(dist, { recursive: true })).filter((file) => file.endsWith(".d.ts"));
    expect(declarations.length).toBeGreaterThan(50);
    for (const file of declarations) {
      // Code only: the JSDoc examples may show `createStorage` from unstorage.
      const text = (await readFile(join(dist, file), "utf8")).replace(/\/\*[\s\S]*?\*\//g, "");
      expect(text, file).not.toMatch(/(?:from|import\()\s*["']unstorage(?:\/[^"']*)?["']/);
    }
  });

  it("[node] tsc --strict without skipLibCheck finds no error", async () => {
    const tsc = join(root, "node_modules/typescript/bin/tsc");
    const checked = await run(process.execPath, [tsc, "-p", "."], { cwd: project }).catch((err: { stdout: string; code: number }) => err);
    expect("stdout" in checked ? checked.stdout : "").toBe("");
  }, 120_000);

  it("[deno] deno check finds no error", async () => {
    const checked = await run(join(root, "node_modules/.bin/deno"), ["check", "app.ts"], { cwd: project, env: { ...process.env, NO_COLOR: "1" } })
      .catch((err: { stderr: string; code: number }) => err);
    expect("code" in checked ? `exit ${checked.code}: ${checked.stderr}` : "ok").toBe("ok");
  }, 120_000);
});
