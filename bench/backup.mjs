// Backup and restore throughput and peak memory (docs/operations.md#backups): a files store of
// 10,000 case documents, 200 images and 50,000 audit entries (50 users), backed up to one
// archive, checked, and restored into an empty folder, each command in its own process (its peak
// RSS is that process's own). Prints MB/s, objects/s and peak RSS per step.
//
//   npm run build && node bench/backup.mjs [--scale 0.1]
import { parseArgs } from "node:util";
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { createFilePorts } from "../dist/src/adapters/server/files/file-ports.js";
import { appendAuditEntry } from "../dist/src/core/audit/trail.js";
import { nodeSha256Hex } from "../dist/src/adapters/server/node-sha256.js";

const { values } = parseArgs({ options: { scale: { type: "string", default: "1" } } });
const scale = Number(values.scale);
const documents = Math.round(10_000 * scale);
const images = Math.round(200 * scale);
const entries = Math.round(50_000 * scale);
const users = 50;

const root = await mkdtemp(join(tmpdir(), "fa-bench-backup-"));
const source = join(root, "source");
const target = join(root, "target");
const archive = join(root, "backup.fab");
const encoder = new TextEncoder();

try {
  const ports = createFilePorts(source, { fsync: "off" });
  const started = performance.now();
  for (let i = 0; i < documents; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, documents - i) }, (_, j) => {
      const n = i + j;
      const body = JSON.stringify({ caseNumber: `C-${n}`, files: [{ id: `f${n}`, originalFilename: "item.png", uploadedAt: "2026-11-20T10:00:00Z" }], notes: "x".repeat(1500) });
      return ports.data.put(`user-${n % users}/C-${n}/data.json`, encoder.encode(body));
    }));
  }
  for (let n = 0; n < images; n++) {
    const bytes = new Uint8Array(512 * 1024).map((_, i) => (i * 2654435761 + n) >>> 24);
    await ports.images.put(`images/img-${n}`, bytes);
    await ports.images.put(`images/img-${n}.json`, encoder.encode(JSON.stringify({ id: `img-${n}`, filename: "item.png" })));
  }
  const perUser = Math.ceil(entries / users);
  await Promise.all(Array.from({ length: users }, async (_, u) => {
    for (let i = 0; i < perUser && u * perUser + i < entries; i++) {
      const at = new Date(Date.UTC(2026, 10, 1 + Math.floor(i / 500), 8, 0, 0, i));
      await appendAuditEntry(ports.audit, { now: () => at }, `user-${u}`, {
        timestamp: at.toISOString(), userId: `user-${u}`, userEmail: "examiner@lab.example", action: "annotation-edit", result: "success",
        details: { caseNumber: `C-${i}`, validationErrors: [], workflowPhase: "casework" },
      }, { hash: nodeSha256Hex });
    }
  }));
  console.log(`store: ${documents} documents, ${images} images of 512 KiB, ${entries} audit entries (${users} users); made in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const step = (name, args) => {
    const code = `import { runBackupCommand } from ${JSON.stringify(new URL("../dist/src/adapters/server/backup-command.js", import.meta.url).href)};
const out = []; const started = performance.now();
const code = await runBackupCommand(${JSON.stringify(args)}, { io: { out: (line) => out.push(line), err: { write: (t) => process.stderr.write(t) }, env: {} } });
console.log(JSON.stringify({ code, ms: performance.now() - started, rssMB: process.resourceUsage().maxRSS / 1024, out }));`;
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", code], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
    const result = JSON.parse(child.stdout.trim().split("\n").pop());
    if (result.code !== 0) throw new Error(`${name} failed: ${result.out.join("\n")}`);
    return result;
  };
  const backup = step("backup", ["backup", "--out", archive, "--data", source]);
  const { size } = await stat(archive);
  const verify = step("verify", ["backup", "verify", archive]);
  const objects = Number(/(\d+) objects/.exec(verify.out.join("\n"))?.[1] ?? 0);
  const restore = step("restore", ["restore", archive, "--data", target]);
  const line = (name, { ms, rssMB }) =>
    `${name.padEnd(8)} ${(ms / 1000).toFixed(2).padStart(7)} s  ${(size / 1048576 / (ms / 1000)).toFixed(1).padStart(7)} MB/s  ${Math.round(objects / (ms / 1000)).toString().padStart(7)} objects/s  peak RSS ${rssMB.toFixed(0)} MB`;
  console.log(`archive: ${(size / 1048576).toFixed(1)} MB, ${objects} objects`);
  console.log(line("backup", backup));
  console.log(line("verify", verify));
  console.log(`${line("restore", restore)} (checks the archive whole, writes, then counts and verifies every trail on the target)`);
} finally {
  await rm(root, { recursive: true, force: true });
}
