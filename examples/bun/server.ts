// The whole service on Bun (Bun.serve) over files in ./.forensic-data.
// Run from the repository root after `npm ci`: npx bun examples/bun/server.ts
import { startServer } from "@forensic-annotation/service/bun";

const server = await startServer({
  port: Number(process.env.PORT ?? 8787),
  host: "127.0.0.1",
  dataDir: process.env.DATA_DIR ?? "./.forensic-data",
  env: process.env,
});
process.once("SIGTERM", () => server.close().then(() => process.exit(0)));
process.once("SIGINT", () => server.close().then(() => process.exit(0)));
