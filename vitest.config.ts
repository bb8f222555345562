import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

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

// Test files share one module graph per vitest worker (isolate: false): importing the service's
// modules anew for every file took as long as the tests of tests/core (91 s of import against
// 87 s of tests on 2 cores), under every host. These files keep a graph and process of their
// own: sealed-package bounds the peak RSS of the process it runs in, provision changes PATH.
const ownGraph = ["tests/exchange/sealed-package.test.ts", "tests/provision.test.ts"];

// Most files wait on servers they spawn (workerd, Bun, Deno, redis-server, s3rver), so one more
// file than cores keeps the processors busy; vitest's default (cores - 1) ran them one by one on 2.
// `npm test` sets TEST_WORKERS for the Bun and Deno runs, which share the machine side by side.
const workers = Number(process.env.TEST_WORKERS) || availableParallelism() + 1;

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: "together",
          include: ["tests/**/*.test.ts"],
          // Suites that need Deno's own APIs run with Deno as the host: `npm run test:deno`.
          exclude: ["tests/**/*.deno.test.ts", "node_modules/**", ...alone, ...ownGraph],
          isolate: false,
          maxWorkers: workers,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "own-graph",
          include: ownGraph,
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
