/** A valid ValidationAuditEntry (spec 2.5) with overrides. */
export function auditEntry(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    timestamp: "2026-11-22T12:00:00.000Z",
    userId: "u1",
    userEmail: "examiner@lab.example",
    action: "case-create",
    result: "success",
    details: { caseNumber: "C-1", validationErrors: [], workflowPhase: "casework" },
    ...overrides,
  };
}
