import { defineConfig } from "vitest/config";

// Run with Deno as the host: deno run -A --unstable-kv npm:vitest run --config vitest.deno.config.ts
export default defineConfig({
  test: {
    include: ["tests/**/*.deno.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
