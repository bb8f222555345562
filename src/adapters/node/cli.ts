#!/usr/bin/env -S node --max-semi-space-size=8 --heap-growing-percent=25
/**
 * @module
 * The `forensic-annotation` command on Node. The young generation is held to 2 x 8 MB (V8's
 * default grows it to 2 x 16 MB and promotes more garbage): `serve`'s RSS stays flat under load.
 * `npm start` passes the same flag (package.json).
 */
import { main } from "../server/command.ts";
import { nodeListen } from "./serve.ts";

main(process.argv.slice(2), nodeListen);
