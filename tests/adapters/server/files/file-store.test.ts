import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFileBlobStore, createFilePorts } from "../../../../src/adapters/server/files/file-ports.ts";
import { documentFiles } from "../../../../src/adapters/server/files/file-driver.ts";
import { encodeJsonArray } from "../../../../src/core/storage/json-array.ts";

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

  it("documents on both sides of the synchronous small-file bound (256 KiB) and around it read back whole, and a folder reads as absent", async () => {
    const store = createFileBlobStore(dir);
    for (const size of [0, 1, 256 * 1024 - 1, 256 * 1024, 256 * 1024 + 1, 3 * 1024 * 1024]) {
      const value = new Uint8Array(size).map((_, i) => (i * 31 + size) & 0xff);
      await store.put(`u1/size-${size}.json`, value);
      expect(Buffer.from((await store.get(`u1/size-${size}.json`))!).equals(Buffer.from(value))).toBe(true);
      expect((await stat(join(dir, "u1", `size-${size}.json`))).size).toBe(size);
    }
    await store.put("u1/C-1/data.json", bytes("{}"));
    expect(await store.get("u1/C-1")).toBeNull();
    expect((await readdir(join(dir, "u1"))).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });

  it("writes atomically: no temporary file is left and listings skip stray ones", async () => {
    const store = createFileBlobStore(dir);
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.put("u1/doc.json", bytes(JSON.stringify({ i, pad: "x".repeat(10_000) })))));
    expect(await readdir(join(dir, "u1"))).toEqual(["doc.json"]);
    JSON.parse(await readFile(join(dir, "u1", "doc.json"), "utf8"));
    await writeFile(join(dir, "u1", `.doc.json.${crypto.randomUUID()}.tmp`), "{half");
    expect(await store.list("")).toEqual(["u1/doc.json"]);
  });

  it("documents named like temporary files are stored, listed, read back and removed like any other", async () => {
    const store = createFilePorts(dir);
    // The shape of the store's own temporary files (a dot, a name, a UUID, .tmp), and two near it.
    const names = [`.x.${crypto.randomUUID()}.tmp`, ".x.tmp", `.${crypto.randomUUID()}.tmp`, `.x.${crypto.randomUUID().toUpperCase()}.tmp`];
    for (const name of names) {
      await store.data.put(`u1/C-1/${name}`, bytes(`{"name":${JSON.stringify(name)}}`));
      await store.users.put(name, `{"uid":${JSON.stringify(name)}}`);
    }
    expect(await store.data.list("u1/")).toEqual(names.map((name) => `u1/C-1/${name}`).sort());
    expect((await store.users.list("")).filter((key) => key.endsWith(".tmp")).sort()).toEqual([...names].sort());
    for (const name of names) {
      expect(JSON.parse(text(await store.data.get(`u1/C-1/${name}`))!)).toEqual({ name });
      expect(JSON.parse((await store.users.get(name))!)).toEqual({ uid: name });
    }
    // Only the exact shape is kept under its escaped name; the others keep their own.
    expect((await readdir(join(dir, "data", "u1", "C-1"))).sort()).toEqual([`${names[0]}#`, ...names.slice(1)].sort());
    for (const name of names) expect(await store.data.delete(`u1/C-1/${name}`)).toBe(true);
    expect(await store.data.list("u1/")).toEqual([]);
  });

  it("a write issued while its document is held (an append under way) lands after it, not before", async () => {
    const files = documentFiles(dir);
    await files.write("u1/day.json", "A");
    let release = () => {};
    const held = files.exclusive("u1/day.json", async (document) => {
      await new Promise<void>((resolve) => (release = resolve));
      await document.replace(bytes("C"));
    });
    const write = files.write("u1/day.json", "B");
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await readFile(join(dir, "u1", "day.json"), "utf8")).toBe("A");
    release();
    await Promise.all([held, write]);
    expect(await readFile(join(dir, "u1", "day.json"), "utf8")).toBe("B");
    // Unheld again: a write lands at once, and no temporary file is left.
    await files.write("u1/day.json", "D");
    expect(await readFile(join(dir, "u1", "day.json"), "utf8")).toBe("D");
    expect(await readdir(join(dir, "u1"))).toEqual(["day.json"]);
  });

  it("a new document under a folder removed, or made a file, behind the store's back is still written", async () => {
    const store = createFileBlobStore(dir);
    await store.put("u1/C-1/data.json", bytes('{"n":1}'));
    await rm(join(dir, "u1"), { recursive: true });
    await store.put("u1/C-2/data.json", bytes('{"n":2}'));
    expect(text(await store.get("u1/C-2/data.json"))).toBe('{"n":2}');
    await rm(join(dir, "u1"), { recursive: true });
    await writeFile(join(dir, "u1"), "a document named like the folder");
    await store.put("u1/C-3/data.json", bytes('{"n":3}'));
    expect(text(await store.get("u1/C-3/data.json"))).toBe('{"n":3}');
    expect(await store.list("u1/")).toEqual(["u1/C-3/data.json"]);
    expect((await readdir(dir)).sort()).toEqual(["u1", "u1#"]);
  });

  it("a document in a folder it wrote before, removed or made a file behind the store's back, is still written", async () => {
    const store = createFileBlobStore(dir);
    await store.put("u1/C-1/a.json", bytes('{"n":1}'));
    await rm(join(dir, "u1"), { recursive: true });
    await store.put("u1/C-1/b.json", bytes('{"n":2}'));
    expect(text(await store.get("u1/C-1/b.json"))).toBe('{"n":2}');
    await rm(join(dir, "u1", "C-1"), { recursive: true });
    await writeFile(join(dir, "u1", "C-1"), "a file where the case folder was");
    await store.put("u1/C-1/c.json", bytes('{"n":3}'));
    expect(text(await store.get("u1/C-1/c.json"))).toBe('{"n":3}');
    expect(await store.list("u1/C-1/")).toEqual(["u1/C-1/c.json"]);
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

describe("file blob store: names a folder takes or a file name cannot hold (issue 13)", () => {
  const USER = `${"é".repeat(127)}u`; // 255 bytes
  const names = async (...parts: string[]) => (await readdir(join(dir, ...parts))).sort();
  const byteLength = (name: string) => Buffer.byteLength(name);

  it("a document whose name a folder has is kept as `name#`; one written first moves there when the folder comes", async () => {
    const store = createFileBlobStore(dir);
    await store.put("u1/x.json", bytes('{"doc":"x"}'));
    expect(await names("u1")).toEqual(["x.json"]); // the layout earlier versions wrote
    await store.put("u1/x.json/y.json", bytes('{"doc":"y"}'));
    expect(await names("u1")).toEqual(["x.json", "x.json#"]);
    expect((await stat(join(dir, "u1", "x.json"))).isDirectory()).toBe(true);
    expect(await readFile(join(dir, "u1", "x.json#"), "utf8")).toBe('{"doc":"x"}');
    expect(text(await store.get("u1/x.json"))).toBe('{"doc":"x"}');
    expect(text(await store.get("u1/x.json/y.json"))).toBe('{"doc":"y"}');

    await store.put("u1/d.json/y.json", bytes("{}"));
    await store.put("u1/d.json", bytes('{"doc":"d"}'));
    expect(await readFile(join(dir, "u1", "d.json#"), "utf8")).toBe('{"doc":"d"}');
    expect(await store.list("u1/")).toEqual(["u1/d.json", "u1/d.json/y.json", "u1/x.json", "u1/x.json/y.json"]);

    expect(await store.delete("u1/d.json")).toBe(true);
    expect(await store.delete("u1/d.json")).toBe(false);
    expect(await names("u1")).toEqual(["d.json", "x.json", "x.json#"]);
    expect(await store.appendToJsonArray("u1/d.json", { n: 1 })).toBe(1); // appends beside the folder too
    expect(await store.appendToJsonArray("u1/d.json", { n: 2 })).toBe(2);
    expect(JSON.parse(await readFile(join(dir, "u1", "d.json#"), "utf8"))).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it("a key under a document's name (`x.json/y.json` beside the file `x.json`) reads as absent, not as an error; a user record `encryption` leaves the canary's key absent", async () => {
    const store = createFileBlobStore(dir);
    await store.put("u1/x.json", bytes('{"doc":"x"}'));
    expect(await store.get("u1/x.json/y.json")).toBeNull();
    expect(await store.has("u1/x.json/y.json")).toBe(false);
    expect(await store.delete("u1/x.json/y.json")).toBe(false);
    expect(text(await store.get("u1/x.json"))).toBe('{"doc":"x"}');
    // The user records of `serve`: a user named "encryption" is a file where the encryption canary's folder would be,
    // and every start looks for that canary.
    const { users } = createFilePorts(join(dir, "data"));
    await users.put("encryption", '{"uid":"encryption"}');
    expect(await users.get("encryption/canary")).toBeNull();
    expect(await users.get("encryption")).toBe('{"uid":"encryption"}');
  });

  it("a name over 255 bytes is a hashed file plus a side record naming it; listings return the real key; a restarted store appends on", async () => {
    const key = `audit-trails/${USER}-2026-11-22.json`; // a 271-byte file name
    const store = createFileBlobStore(dir);
    expect(await store.appendToJsonArray(key, { n: 1 })).toBe(1);
    expect(await store.appendToJsonArray(key, { n: 2 })).toBe(2);
    const onDisk = await names("audit-trails");
    expect(onDisk).toHaveLength(2);
    for (const name of onDisk) expect(byteLength(name)).toBeLessThanOrEqual(255);
    const record = onDisk.find((name) => name.endsWith("#key"))!;
    expect(await readFile(join(dir, "audit-trails", record), "utf8")).toBe(`${USER}-2026-11-22.json`);
    const day = onDisk.find((name) => name !== record)!;
    expect(day.startsWith(USER.slice(0, 80))).toBe(true); // still readable by a person
    expect(JSON.parse(await readFile(join(dir, "audit-trails", day), "utf8"))).toEqual([{ n: 1 }, { n: 2 }]);

    const restarted = createFileBlobStore(dir);
    expect(await restarted.appendToJsonArray(key, { n: 3 })).toBe(3);
    expect(await restarted.list("audit-trails/")).toEqual([key]);
    expect(await restarted.has(key)).toBe(true);
    expect(await restarted.delete(key)).toBe(true);
    expect(await names("audit-trails")).toEqual([]);
    expect(await restarted.get(key)).toBeNull();
  });

  it("temporary files fit the name limit: concurrent writes of a 255-byte name leave exactly the document", async () => {
    const store = createFileBlobStore(dir);
    const leaf = `${"é".repeat(125)}.json`; // 255 bytes
    await Promise.all(Array.from({ length: 30 }, (_, i) => store.put(`u1/${leaf}`, bytes(JSON.stringify({ i })))));
    expect(await names("u1")).toEqual([leaf]);
    expect(JSON.parse(text(await store.get(`u1/${leaf}`))!)).toHaveProperty("i");
  });

  it("concurrent writes of a document and of documents under a folder of its name all land", async () => {
    const store = createFileBlobStore(dir);
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0 ? store.put("u1/r.json", bytes(JSON.stringify({ i }))) : store.put(`u1/r.json/f${i}.json`, bytes(JSON.stringify({ i })))
      ),
    );
    const listed = await store.list("u1/");
    expect(listed).toEqual(["u1/r.json", ...Array.from({ length: 20 }, (_, k) => `u1/r.json/f${2 * k + 1}.json`).sort()]);
    expect(JSON.parse(text(await store.get("u1/r.json"))!).i % 2).toBe(0);
    for (const key of listed.slice(1)) expect(await store.has(key)).toBe(true);
  });
});
