import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

// Files that measure a server's memory or how long it keeps others waiting, or load it with
// hundreds of requests at once: they run one at a time after the rest, so no other test file
// competes with what they measure (600 appends at once through workerd hung one request once
// beside two other files under a loaded machine).
const alone = [
  "tests/adapters/cloudflare/start-workerd-answers.test.ts",
  "tests/adapters/server/bodies-in-flight.test.ts",
  "tests/adapters/server/connection-flood.test.ts",
  "tests/adapters/server/exchange-memory.test.ts",
  "tests/audit/verify-large-day.test.ts",
  "tests/core/http/body-depth.test.ts",
  "tests/exchange/zip-bomb.test.ts",
  "tests/faults/redis-restart.test.ts",
];

// The files that take longest (each 20 s to 100 s), longest first, started before the rest. On a
// fresh clone vitest knows no durations and starts larger files first, which left several of
// these (small files over a shared suite: conformance, chains, array blocks) for the end, where
// they ran on with the other workers idle.
const slowest = [
  "tests/conformance/workerd.test.ts",
  "tests/audit/chain-s3.test.ts",
  "tests/storage/array-blocks-workerd.test.ts",
  "tests/adapters/server/data-folder-lock.test.ts",
  "tests/audit/chain-workerd.test.ts",
  "tests/consumer-types.test.ts",
  "tests/storage/array-blocks-s3.test.ts",
  "tests/exchange/command.test.ts",
  "tests/adapters/node/encryption-cli.test.ts",
  "tests/storage/s3.test.ts",
  "tests/adapters/server/restart-after-crash.test.ts",
  "tests/adapters/node/serve.test.ts",
  "tests/adapters/cloudflare/worker.test.ts",
  "tests/storage/workerd.test.ts",
  "tests/examples/examples.test.ts",
  "tests/conformance/deno.test.ts",
  "tests/backup/backup.test.ts",
  "tests/conformance/node.test.ts",
  "tests/conformance/bun.test.ts",
  "tests/adapters/server/storage-serve.test.ts",
  "tests/browser/docs-page.test.ts",
];

/** Vitest's order (projects, then durations it knows, else size), with {@link slowest} first within each project. */
class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const at = slowest.findIndex((path) => file.moduleId.replaceAll("\\", "/").endsWith(path));
      return at === -1 ? slowest.length : at;
    };
    const place = new Map(sorted.map((file, i) => [file, i]));
    // Only within one project: the projects' own order (together, then alone) stays.
    return [...sorted].sort((a, b) => (a.project.name === b.project.name ? rank(a) - rank(b) : 0) || place.get(a)! - place.get(b)!);
  }
}

// Most files wait on servers they spawn (workerd, Bun, Deno, redis-server, s3rver), so one more
// file than cores keeps the processors busy; vitest's default (cores - 1) ran them one by one on 2.
// `npm test` sets TEST_WORKERS for the Bun and Deno runs, which share the machine side by side.
const workers = Number(process.env.TEST_WORKERS) || availableParallelism() + 1;

export default defineConfig({
  test: {
    sequence: { sequencer: SlowestFirst },
    testTimeout: 20_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: "together",
          include: ["tests/**/*.test.ts"],
          // Suites that need Deno's own APIs run with Deno as the host: `npm run test:deno`.
          exclude: ["tests/**/*.deno.test.ts", "node_modules/**", ...alone],
          maxWorkers: workers,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "alone",
          include: alone,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
