#!/usr/bin/env node
// Writes src/core/http/docs-assets.ts: Swagger UI's script and stylesheet from the installed
// swagger-ui-dist, gzip-compressed and base64-encoded, so the service serves its /docs page
// itself on every runtime (no CDN, no file system). Run after upgrading swagger-ui-dist;
// tests/core/docs-page.test.ts fails while the file is stale.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const dist = dirname(require.resolve("swagger-ui-dist/package.json"));
const { version, license } = JSON.parse(readFileSync(join(dist, "package.json"), "utf8"));
const packed = (name) => gzipSync(readFileSync(join(dist, name)), { level: 9 }).toString("base64");

const source = `/**
 * @module
 * Swagger UI ${version} (swagger-ui-dist, ${license} licence) for the /docs page, written by
 * scripts/docs-assets.mjs: each file gzip-compressed, then base64. Do not edit by hand.
 */

/** The swagger-ui-dist version the assets are taken from. */
export const SWAGGER_UI_VERSION: string = ${JSON.stringify(version)};
/** \`swagger-ui-bundle.js\`, gzip, base64. */
export const SWAGGER_UI_BUNDLE: string = ${JSON.stringify(packed("swagger-ui-bundle.js"))};
/** \`swagger-ui.css\`, gzip, base64. */
export const SWAGGER_UI_CSS: string = ${JSON.stringify(packed("swagger-ui.css"))};
`;
writeFileSync(join(root, "src/core/http/docs-assets.ts"), source);
console.log(`src/core/http/docs-assets.ts: swagger-ui-dist ${version}, ${source.length} characters`);
