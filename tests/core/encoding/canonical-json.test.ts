import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { canonicalJson } from "../../../src/core/encoding/canonical-json.ts";

/** RFC 8785 written plainly (members sorted by Array.prototype.sort, names and leaves by JSON.stringify): what the tuned one must equal. */
function reference(value: unknown, omit?: string): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => reference(item ?? null)).join(",")}]`;
  const record = value as Record<string, unknown>;
  const members = Object.keys(record).sort().filter((name) => name !== omit && record[name] !== undefined);
  return `{${members.map((name) => `${JSON.stringify(name)}:${reference(record[name])}`).join(",")}}`;
}

// The examples of RFC 8785 (sections 3.2.2, 3.2.3 and appendix B).
describe("RFC 8785 canonical JSON", () => {
  it("writes the section 3.2.2 sample as the RFC does", () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    ) as unknown;
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it("sorts members by UTF-16 code units (section 3.2.3)", () => {
    const input = JSON.parse(
      '{"\\u20ac": "Euro Sign", "\\r": "Carriage Return", "\\ufb33": "Hebrew Letter Dalet With Dagesh", "1": "One", "\\ud83d\\ude00": "Emoji: Grinning Face", "\\u0080": "Control", "\\u00f6": "Latin Small Letter O With Diaeresis"}',
    ) as Record<string, string>;
    const out = canonicalJson(input);
    expect(out).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign","😀":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it("writes numbers as appendix B does, and refuses what JSON cannot hold", () => {
    const cases: [number, string][] = [
      [0, "0"],
      [-0, "0"],
      [5e-324, "5e-324"],
      [1.7976931348623157e308, "1.7976931348623157e+308"],
      [9007199254740992, "9007199254740992"],
      [295147905179352830000, "295147905179352830000"],
      [1e21, "1e+21"],
      [1e-7, "1e-7"],
      [0.000001, "0.000001"],
      [-1.5, "-1.5"],
    ];
    for (const [value, text] of cases) expect(canonicalJson(value), text).toBe(text);
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY]) expect(() => canonicalJson(bad)).toThrow(TypeError);
    expect(canonicalJson({ b: [1, { d: 1, c: 2 }], a: "x", skipped: undefined })).toBe('{"a":"x","b":[1,{"c":2,"d":1}]}');
  });

  it("canonicalizes the deepest value the service accepts and refuses hostile nesting the same way on every runtime", () => {
    const nested = (levels: number): unknown => JSON.parse(`${"[".repeat(levels)}${"]".repeat(levels)}`);
    expect(canonicalJson(nested(64))).toBe(`${"[".repeat(64)}${"]".repeat(64)}`);
    expect(() => canonicalJson(nested(20_000))).toThrow(RangeError);
    expect(() => canonicalJson({ x: nested(200) })).toThrow(/nested deeper than 128 levels/);
  });

  it("equals the plain RFC 8785 writing for any JSON value, with and without an omitted member", () => {
    // Any UTF-16 code units: lone surrogates, controls, quotes and backslashes included.
    const text = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)) });
    const names = fc.oneof(text, fc.string({ unit: "binary" }), fc.constantFrom("hash", "a", "B", "10", "9", "", "\u00e9", "\ud83d\ude00", "\ufb33", "__proto__"));
    const value = fc.letrec((tie) => ({
      json: fc.oneof({ depthSize: "small" }, fc.jsonValue(), text, fc.array(tie("json")), fc.dictionary(names, tie("json"))),
    })).json;
    fc.assert(
      fc.property(value, (json) => {
        expect(canonicalJson(json)).toBe(reference(json));
        expect(canonicalJson(json, "hash")).toBe(typeof json === "object" && json !== null && !Array.isArray(json) ? reference(json, "hash") : reference(json));
      }),
      { numRuns: 400 },
    );
    for (const odd of ["\ud800", "a\udfffb", "\ud83d\ude00", "\u0000\u001f\u007f", '"\\/', "\u2028\u2029", "plain"]) {
      expect(canonicalJson({ [odd]: odd, list: [odd] })).toBe(reference({ [odd]: odd, list: [odd] }));
    }
    // Objects of many members take the runtime's sort; the same order.
    const wide = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${(i * 7919) % 40}\u00e9${i % 3 ? "" : "\ud800"}`, i]));
    expect(canonicalJson(wide)).toBe(reference(wide));
  });
});
