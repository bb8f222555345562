/**
 * @module
 * `forensic-annotation serve` on Deno: `deno run -A src/adapters/deno/cli.ts serve --port 8787`.
 */
import process from "node:process";
import { main } from "../server/command.ts";
import { denoListen } from "./serve.ts";
import { denoKvStorage } from "./kv-ports.ts";
import { reclaimArrayBuffersOnDeno } from "../server/memory-reclaim.ts";

reclaimArrayBuffersOnDeno();
main(process.argv.slice(2), denoListen, denoKvStorage);
