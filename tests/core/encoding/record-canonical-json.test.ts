/**
 * A record history hashes each record's canonical JSON written without sorting: it must be
 * exactly what RFC 8785 gives (canonicalJson), or the chain would break where it is verified.
 */
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../../src/core/encoding/canonical-json.ts";
import { canonicalRecordJson, type VersionRecord } from "../../../src/core/history/version-record.ts";

/** A deterministic pseudo-random text of every kind of character JSON escapes or passes. */
function text(seed: number, length: number): string {
  const pool = ['"', "\\", "/", "\u0000", "\u0001", "\b", "\t", "\n", "\u000b", "\f", "\r", "\u001f", " ", "a", "Z", "~", "\u007f", "\u0080", "é", "\u2028", "\u2029", "\ufeff", "\uffff", "漢", "\u{1F52B}", "\u{10FFFF}", "{", "}", ":", ","];
  let x = seed;
  let out = "";
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out += pool[x % pool.length];
  }
  return out;
}

describe("a version record's canonical JSON", () => {
  it("is canonicalJson of the record, for any writer, time and chain link", () => {
    for (let seed = 1; seed <= 100; seed++) {
      const record: VersionRecord = {
        version: seed,
        sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        size: seed * 37,
        writtenAt: new Date(Date.UTC(2026, 0, 1) + seed * 1_000_003).toISOString(),
        writtenBy: text(seed, seed % 20),
        deleted: seed % 3 === 0,
        previous: seed === 1 ? null : text(seed + 7, 8),
      };
      expect(canonicalRecordJson(record)).toBe(canonicalJson(record));
    }
  });
});
