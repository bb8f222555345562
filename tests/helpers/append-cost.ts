/**
 * What the append-cost tests (memory, Redis, Deno KV) share: one user's day of audit entries
 * that differ only in a counter, so every append stores the same number of bytes.
 */
import type { ValidationAuditEntry } from "../../src/core/schemas/audit.ts";

export const DAY = "2026-11-22";
/** The day's key in the audit store. */
export const KEY = `audit-trails/u1-${DAY}.json`;
/** Appends per test: enough for a day to outgrow every chunk and buffer size involved. */
export const APPENDS = 1_500;
export const clock = { now: (): Date => new Date(`${DAY}T12:00:00Z`) };

/** The `n`th entry of the day. */
export const entry = (n: number): ValidationAuditEntry => ({
  timestamp: `${DAY}T12:00:00.000Z`,
  userId: "u1",
  userEmail: "examiner@lab.example",
  action: "annotation-edit",
  result: "success",
  details: { caseNumber: "C-1", fileName: "item-1.png", validationErrors: [], workflowPhase: "casework", n },
} as ValidationAuditEntry);

/** The bytes of one stored entry (with its receivedAt), the unit the tests' bounds are in. */
export const entryBytes = new TextEncoder().encode(JSON.stringify({ ...entry(1000), receivedAt: clock.now().toISOString() })).length;

export const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;
