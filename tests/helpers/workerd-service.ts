import { mkdtemp, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, beforeAll } from "vitest";
import { Miniflare, type MiniflareOptions } from "miniflare";
// @ts-expect-error: a plain ESM script without types
import { bundleWorker } from "../../scripts/start-workerd.mjs";

/** The KV namespace and R2 buckets the service's workers are bound to, as wrangler.toml names them. */
export const SERVICE_STORES = { kvNamespaces: ["USER_DB"], r2Buckets: ["STRIAE_DATA", "STRIAE_AUDIT", "STRIAE_IMAGES"] };

/** What {@link useWorkerd} starts: a bundled worker module and the Miniflare options beside it. */
export type WorkerdOptions = { scriptPath: string; modulesRoot?: string } & Omit<MiniflareOptions, "modules" | "script" | "scriptPath" | "modulesRoot" | "compatibilityDate">;

/**
 * Real workerds (Miniflare) for the calling test file: a temporary folder for bundles, made
 * before its tests, and every workerd started disposed of after them, with the folder.
 */
export function useWorkerd(prefix: string): {
  /** The file's temporary folder. */
  dir(): string;
  /** The worker of `entries/<entry>.ts` bundled as wrangler bundles it, into `<dir>/<entry>/`. */
  bundle(entry: string): Promise<string>;
  /** A workerd running `options.scriptPath`, ready. */
  start(options: WorkerdOptions): Promise<Miniflare>;
  /** Disposes of a workerd before the file's tests end (to start another on the same stores). */
  stop(mf: Miniflare): Promise<void>;
} {
  let dir: string | undefined;
  const running: Miniflare[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
  });
  afterAll(async () => {
    await Promise.all(running.map((mf) => mf.dispose()));
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });
  const folder = () => {
    if (dir === undefined) throw new Error("useWorkerd: its folder exists only while the file's tests run");
    return dir;
  };
  return {
    dir: folder,
    bundle: (entry) => (bundleWorker as (entry: string, out: string) => Promise<string>)(entry, join(folder(), entry, "worker.js")),
    async start({ scriptPath, modulesRoot, ...rest }) {
      // The request log is the conformance suite's to read; here its lines would only fill the test output.
      const bindings = { LOG_LEVEL: "off", ...((rest as { bindings?: Record<string, unknown> }).bindings ?? {}) };
      const mf = new Miniflare({ ...rest, bindings, modules: true, scriptPath, modulesRoot: modulesRoot ?? dirname(scriptPath), compatibilityDate: "2026-04-01" } as MiniflareOptions);
      running.push(mf);
      await mf.ready;
      return mf;
    },
    async stop(mf) {
      running.splice(running.indexOf(mf), 1);
      await mf.dispose();
    },
  };
}
