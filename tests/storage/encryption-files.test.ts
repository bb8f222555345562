import { afterAll, describe } from "vitest";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { createFilePorts } from "../../src/adapters/server/files/file-ports.ts";
import { encryptionSuite } from "./encryption-suite.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Every file under the data directory, as it is on disk. */
function filesUnder(dir: string): Uint8Array[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => new Uint8Array(readFileSync(join(entry.parentPath, entry.name))));
}

describe("encryption at rest on files under --data", () => {
  const byPorts = new WeakMap<object, string>();
  encryptionSuite("files", {
    ports: async () => {
      const dir = mkdtempSync(join(tmpdir(), "fa-enc-"));
      dirs.push(dir);
      const ports = createFilePorts(dir);
      byPorts.set(ports.data, dir);
      return ports;
    },
    dump: async (ports) => filesUnder(byPorts.get(ports.data)!),
  });
});
