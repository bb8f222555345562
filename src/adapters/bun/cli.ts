/**
 * @module
 * `forensic-annotation serve` on Bun: `bun src/adapters/bun/cli.ts serve --port 8787`.
 */
import { main } from "../server/command.ts";
import { bunListen } from "./serve.ts";
import { reclaimOnBun } from "../server/memory-reclaim.ts";

reclaimOnBun();
main(process.argv.slice(2), bunListen);
