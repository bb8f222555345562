// The whole service on Node over files in ./.forensic-data (as `npm start` does).
// Run from the repository root after `npm ci`: node examples/node/server.mjs
import process from "node:process";
import { startServer } from "@forensic-annotation/service/node";

const server = await startServer({
  port: Number(process.env.PORT ?? 8787),
  host: "127.0.0.1",
  dataDir: process.env.DATA_DIR ?? "./.forensic-data",
  env: process.env,
});
process.once("SIGTERM", () => server.close().then(() => process.exit(0)));
process.once("SIGINT", () => server.close().then(() => process.exit(0)));
