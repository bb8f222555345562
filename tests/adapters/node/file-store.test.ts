import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFileBlobStore } from "../../../src/adapters/node/file-ports.ts";
import { encodeJsonArray } from "../../../src/core/storage/json-array.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-files-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (value: Uint8Array | null) => (value === null ? null : new TextDecoder().decode(value));

describe("file blob store (embedded default)", () => {
  it("keeps one file per key under its folder, with / keys as folders", async () => {
    const store = createFileBlobStore(dir);
    await store.put("u1/C-1/data.json", bytes('{"a":1}'));
    expect(await readFile(join(dir, "u1", "C-1", "data.json"), "utf8")).toBe('{"a":1}');
    expect(text(await store.get("u1/C-1/data.json"))).toBe('{"a":1}');
    expect(await store.list("u1/")).toEqual(["u1/C-1/data.json"]);
    expect(await store.delete("u1/C-1/data.json")).toBe(true);
    expect(await store.delete("u1/C-1/data.json")).toBe(false);
    expect(await store.get("u1/C-1/data.json")).toBeNull();
  });

  it("writes atomically: no temporary file is left and listings skip stray ones", async () => {
    const store = createFileBlobStore(dir);
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.put("u1/doc.json", bytes(JSON.stringify({ i, pad: "x".repeat(10_000) })))));
    expect(await readdir(join(dir, "u1"))).toEqual(["doc.json"]);
    JSON.parse(await readFile(join(dir, "u1", "doc.json"), "utf8"));
    await writeFile(join(dir, "u1", ".doc.json.1234.tmp"), "{half");
    expect(await store.list("")).toEqual(["u1/doc.json"]);
  });

  it("appends 64 concurrent items without loss, counts 1..64 once each, in the canonical form", async () => {
    const store = createFileBlobStore(dir);
    const counts = await Promise.all(Array.from({ length: 64 }, (_, i) => store.appendToJsonArray("audit-trails/u1-2026-11-22.json", { i })));
    expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 64 }, (_, i) => i + 1));
    const onDisk = await readFile(join(dir, "audit-trails", "u1-2026-11-22.json"), "utf8");
    const items = JSON.parse(onDisk) as { i: number }[];
    expect(items.map((item) => item.i).sort((a, b) => a - b)).toEqual(Array.from({ length: 64 }, (_, i) => i));
    expect(onDisk).toBe(new TextDecoder().decode(encodeJsonArray(items)));
  });

  it("appends in place: earlier bytes of the day are never rewritten", async () => {
    const store = createFileBlobStore(dir);
    const file = join(dir, "audit-trails", "u1-2026-11-22.json");
    await store.appendToJsonArray("audit-trails/u1-2026-11-22.json", { n: 1 });
    await store.appendToJsonArray("audit-trails/u1-2026-11-22.json", { n: 2 });
    const before = await readFile(file, "utf8");
    const { ino } = await import("node:fs/promises").then((fs) => fs.stat(file));
    await store.appendToJsonArray("audit-trails/u1-2026-11-22.json", { n: 3 });
    const after = await readFile(file, "utf8");
    expect(after.startsWith(before.slice(0, -2))).toBe(true);
    expect((await import("node:fs/promises").then((fs) => fs.stat(file))).ino).toBe(ino);
  });

  it("a new store (a restarted process) continues the count of an existing day", async () => {
    await createFileBlobStore(dir).appendToJsonArray("audit-trails/u1-d.json", { n: 1 });
    await createFileBlobStore(dir).appendToJsonArray("audit-trails/u1-d.json", { n: 2 });
    expect(await createFileBlobStore(dir).appendToJsonArray("audit-trails/u1-d.json", { n: 3 })).toBe(3);
  });

  it("repairs a torn day on the next append, keeping every complete entry", async () => {
    const store = createFileBlobStore(dir);
    const whole = new TextDecoder().decode(encodeJsonArray([{ n: 1 }, { n: 2 }]));
    await writeFile(join(dir, "audit-trails-u1.json"), `${whole.slice(0, -2)},\n{"n":3,"pa`);
    expect(await store.appendToJsonArray("audit-trails-u1.json", { n: 4 })).toBe(3);
    expect(JSON.parse(await readFile(join(dir, "audit-trails-u1.json"), "utf8"))).toEqual([{ n: 1 }, { n: 2 }, { n: 4 }]);
  });

  it("rewrites a day written in another form (e.g. compact JSON by an older worker) once, then appends", async () => {
    const store = createFileBlobStore(dir);
    await writeFile(join(dir, "day.json"), JSON.stringify([{ n: 1 }, { n: 2 }]));
    expect(await store.appendToJsonArray("day.json", { n: 3 })).toBe(3);
    expect(await store.appendToJsonArray("day.json", { n: 4 })).toBe(4);
    expect(JSON.parse(await readFile(join(dir, "day.json"), "utf8"))).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
  });

  it("notices a day replaced behind its back and recounts", async () => {
    const store = createFileBlobStore(dir);
    await store.appendToJsonArray("day.json", { n: 1 });
    await store.appendToJsonArray("day.json", { n: 2 });
    await writeFile(join(dir, "day.json"), new TextDecoder().decode(encodeJsonArray([{ n: 9 }])));
    expect(await store.appendToJsonArray("day.json", { n: 10 })).toBe(2);
  });
});
