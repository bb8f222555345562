// The audit entries the benches send or append, one definition for all of them.

/** Entry `n` of one user's day `day` (bench/audit-chain*.mjs): entries differ only in `n`. */
export const dayEntry = (day, n) => ({
  timestamp: `${day}T12:00:00.000Z`,
  userId: "u1",
  userEmail: "examiner@lab.example",
  action: "annotation-edit",
  result: "success",
  details: { caseNumber: "C-1", fileName: "item-1.png", validationErrors: [], workflowPhase: "casework", n },
});

/** The body of an audit POST for the trail of `bench-audit-{n}` (throughput.mjs, callgrind.mjs). */
export const auditPostBody = (n) => JSON.stringify({
  timestamp: "2026-11-22T12:00:00.000Z",
  userId: `bench-audit-${n}`,
  userEmail: `bench-audit-${n}@lab.example`,
  action: "annotation-edit",
  result: "success",
  details: { caseNumber: "BENCH-0001", validationErrors: [], workflowPhase: "casework" },
});
