#!/usr/bin/env node
// What a verification of a whole trail (GET /audit/verify without dates, `audit verify`
// without --from/--to) pays to find the user's days: it lists every user's day files
// (docs/storage.md#verifying), so its cost grows with the store, not with the trail. On the
// file store: `--users` users with `--days` days each, then the median of `--runs` listings
// and whole verifications of one user's 30-day trail.
//
//   npm run build && node bench/audit-verify-listing.mjs [--users 200] [--days 30] [--runs 5] [--data-root DIR]
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createFileBlobStore } from "../dist/src/adapters/server/files/file-ports.js";
import { appendAuditEntry, auditVerifyDays, readAuditTrail, storedAuditDays } from "../dist/src/core/audit/trail.js";
import { verifyAuditTrail } from "../dist/src/core/audit/verify.js";
import { dayEntry } from "./audit-entries.mjs";
import { dataRootOrExit } from "./data-root.mjs";

const { values } = parseArgs({
  options: {
    users: { type: "string", default: "200" },
    days: { type: "string", default: "30" },
    runs: { type: "string", default: "5" },
    "data-root": { type: "string" },
  },
});
const users = Number(values.users);
const days = Number(values.days);
const runs = Number(values.runs);
const root = dataRootOrExit(values["data-root"]);
const dir = mkdtempSync(join(root.dir, "fa-bench-verify-listing-"));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

try {
  const audit = createFileBlobStore(join(dir, "audit"));
  const first = Date.UTC(2026, 9, 1);
  for (let u = 0; u < users; u++) {
    for (let d = 0; d < days; d++) {
      const now = new Date(first + d * 86_400_000 + 12 * 3_600_000);
      await appendAuditEntry(audit, { now: () => now }, `user${u}`, { ...dayEntry(now.toISOString().slice(0, 10), d), userId: `user${u}` });
    }
  }
  const today = new Date(first + (days - 1) * 86_400_000 + 13 * 3_600_000);
  const listings = [];
  const verifications = [];
  for (let run = 0; run < runs; run++) {
    let started = performance.now();
    const listed = await storedAuditDays(audit, "user7");
    listings.push(performance.now() - started);
    if (listed.length !== days) throw new Error(`listed ${listed.length} days of user7, not ${days}`);
    started = performance.now();
    const result = await verifyAuditTrail(await readAuditTrail(audit, "user7", await auditVerifyDays(audit, "user7", undefined, undefined, today)));
    verifications.push(performance.now() - started);
    if (!result.valid || result.entries !== days) throw new Error(`user7's trail did not verify: ${JSON.stringify(result.firstBad)}`);
  }
  console.log(`data     ${root.description}`);
  console.log(`store    ${users} users x ${days} days = ${users * days} day files; load average ${(await import("node:os")).loadavg()[0].toFixed(1)}`);
  console.log(`listing the days of one user (every day file listed): median ${median(listings).toFixed(1)} ms of ${runs}`);
  console.log(`verifying one user's whole trail (${days} entries, listing included): median ${median(verifications).toFixed(1)} ms of ${runs}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
