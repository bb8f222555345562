import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    // Suites that need Deno's own APIs run with Deno as the host: `npm run test:deno`.
    exclude: ["tests/**/*.deno.test.ts", "node_modules/**"],
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
