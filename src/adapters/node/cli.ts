#!/usr/bin/env node
/**
 * @module
 * The `forensic-annotation` command on Node.
 */
import { main } from "../server/command.ts";
import { nodeListen } from "./serve.ts";

main(process.argv.slice(2), nodeListen);
