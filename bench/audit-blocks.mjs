// What an audit append moves between the service and a compare-and-swap object store (S3, R2),
// by the day's length: the whole-day rewrite (the plain versioned store) against days in blocks
// (src/core/storage/array-blocks.ts). Counted, not timed: requests and bytes (values read and
// written, keys listed) through an in-memory backend with S3's semantics (ETags, If-Match,
// If-None-Match), so the figures do not depend on the machine or the network.
//
//   node bench/audit-blocks.mjs [--appends 10000] [--store rewrite|blocks]
import { parseArgs } from "node:util";
import { createVersionedBlobStore } from "../dist/src/core/storage/versioned-store.js";
import { createArrayBlockStore } from "../dist/src/core/storage/array-blocks.js";
import { dayEntry } from "./audit-entries.mjs";

const { values } = parseArgs({ options: { appends: { type: "string", default: "10000" }, store: { type: "string" } } });
const appends = Number(values.appends);
const DAY = "2026-11-22";
const KEY = `audit-trails/u1-${DAY}.json`;

/** An object store in memory, with S3's conditional writes, counting what each call moves. */
function countingBucket() {
  const objects = new Map();
  let version = 0;
  const traffic = { requests: 0, bytes: 0 };
  const backend = {
    async get(key) {
      traffic.requests++;
      const object = objects.get(key);
      if (object === undefined) return null;
      traffic.bytes += object.bytes.length;
      return object;
    },
    async put(key, value) {
      traffic.requests++;
      traffic.bytes += value.length;
      objects.set(key, { bytes: value.slice(), version: String(++version) });
    },
    async putIf(key, value, expected) {
      return (await backend.putIfVersion(key, value, expected)) !== null;
    },
    // As S3 and R2 do, a conditional write answers the new version (ETag).
    async putIfVersion(key, value, expected) {
      traffic.requests++;
      traffic.bytes += value.length;
      if ((objects.get(key)?.version ?? null) !== expected) return null;
      objects.set(key, { bytes: value.slice(), version: String(++version) });
      return String(version);
    },
    async delete(key) {
      traffic.requests++;
      return objects.delete(key);
    },
    async has(key) {
      traffic.requests++;
      return objects.has(key);
    },
    async list(prefix) {
      traffic.requests++;
      const keys = [...objects.keys()].filter((key) => key.startsWith(prefix));
      traffic.bytes += keys.reduce((sum, key) => sum + key.length, 0);
      return keys;
    },
  };
  return { backend, traffic };
}

const marks = [1, 10, 100, 1_000, 10_000, 100_000].filter((n) => n <= appends);
const rows = [];
// --store rewrite|blocks runs one of them (the whole-day rewrite is quadratic: minutes at 10,000).
const stores = [["rewrite", "whole-day rewrite", createVersionedBlobStore], ["blocks", "blocks of 128", createArrayBlockStore]];
for (const [, name, make] of stores.filter(([id]) => values.store === undefined || values.store === id)) {
  const { backend, traffic } = countingBucket();
  const store = make(backend);
  const cost = new Map();
  // Per mark: the mean over the 128 appends ending at it (a block's sawtooth averaged out).
  let window = [];
  for (let n = 1; n <= appends; n++) {
    const [requests, bytes] = [traffic.requests, traffic.bytes];
    await store.appendToJsonArray(KEY, { ...dayEntry(DAY, n), receivedAt: `${DAY}T12:00:00.000Z` });
    window.push([traffic.requests - requests, traffic.bytes - bytes]);
    if (window.length > 128) window.shift();
    if (marks.includes(n)) {
      const mean = (i) => window.reduce((sum, row) => sum + row[i], 0) / window.length;
      cost.set(n, `${mean(0).toFixed(1)} req, ${Math.round(mean(1) / 1024)} KiB`);
    }
  }
  rows.push([name, ...marks.map((n) => cost.get(n))]);
}
console.log(`Per append, mean over the 128 appends up to the Nth (${appends} appends to one day):`);
console.log(`| store | ${marks.map((n) => `N = ${n.toLocaleString("en")}`).join(" | ")} |`);
console.log(`|---|${marks.map(() => "---").join("|")}|`);
for (const row of rows) console.log(`| ${row.join(" | ")} |`);
