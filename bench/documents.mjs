// Bodies the benches send.

/** A case-data-like JSON document of exactly `bytes` bytes: boxes as the app draws them, then padding. */
export function makeDocument(bytes) {
  const doc = { caseNumber: "BENCH-0001", updatedAt: "2026-11-22T12:00:00.000Z", annotations: [], pad: "" };
  for (let i = 0; JSON.stringify(doc).length < bytes - 200; i++) {
    doc.annotations.push({ id: `box-${i}`, x: 12.5, y: 40.25, width: 8, height: 6.5, color: "#ff0000" });
  }
  doc.pad = "x".repeat(bytes - JSON.stringify(doc).length);
  return JSON.stringify(doc);
}
