/**
 * @module
 * Audit entries the service writes itself when it knows who acts (an identity token or the
 * admin key; docs/api.md#service-entries): uploads, deletions, reports, profile changes, account deletions and
 * refused cross-user attempts. They go through the same lossless append as client entries
 * and, like them, are never modified.
 */
import type { BlobStore, Clock } from "../ports.ts";
import type { ValidationAuditEntry } from "../schemas/audit.ts";
import { appendAuditEntry } from "./trail.ts";
import type { AuditChainOptions } from "./chain.ts";

/** Who acted: a user proven by an identity token, or the holder of `ADMIN_AUTH`. */
export type Actor =
  | { kind: "user"; uid: string; email: string | undefined; lab?: string | undefined; roles?: readonly string[] | undefined; authTime?: number | undefined }
  | { kind: "admin" };


/** The docs/api.md#entry-shape actions the service writes itself. */
export type ServiceAuditAction =
  | "file-upload"
  | "file-delete"
  | "file-access"
  | "pdf-generate"
  | "user-profile-update"
  | "user-account-delete"
  | "security-violation"
  | "legal-hold-place"
  | "legal-hold-lift"
  | "history-prune"

  | "confirmation-create";

/** The docs/api.md#entry-shape results of service entries. */
export type ServiceAuditResult = "success" | "failure" | "blocked";

/** The AuditDetails fields service entries use (docs/api.md#entry-shape); all optional. */
export interface ServiceAuditDetails {
  /** The file concerned. */
  fileName?: string;
  /** The case concerned. */
  caseNumber?: string;
  /** The workflow phase. */
  workflowPhase?: "casework" | "case-export" | "case-import" | "confirmation" | "user-management";
  /** An uploaded or deleted image. */
  fileDetails?: { fileId?: string; originalFileName?: string; mimeType?: string; fileSize?: number };
  /** What changed in a profile. */
  userProfileDetails?: Record<string, unknown>;
  /** Who acted and how; `source: "service"` and the actor are added. */
  securityDetails?: Record<string, unknown>;
  /** The examiner whose work is reviewed (docs/review.md). */
  originalExaminerUid?: string;
  /** The examiner who reviews it. */
  reviewingExaminerUid?: string;
  /** The confirmation a verified signature wrote. */
  confirmationId?: string;
  /** A review step (docs/review.md): which review, which step, which file. */
  reviewDetails?: Record<string, unknown>;
}

/** One event the service records. */
export interface ServiceEvent {
  /** The trail it goes to: the user acted on (or the acting user for a refused attempt). */
  userId: string;
  /** The acting user's email when known; "" otherwise. */
  userEmail?: string;
  /** The docs/api.md#entry-shape action. */
  action: ServiceAuditAction;
  /** The docs/api.md#entry-shape result. */
  result: ServiceAuditResult;
  /** Details; `securityDetails.source` is set to "service" and the actor added. */
  details?: ServiceAuditDetails;
  /** Who acted. */
  actor: Actor;
  /** The request that caused it. */
  request?: { method: string; path: string; clientIp: string | undefined };
}

/** Appends service events to the audit store; a rejected promise means the entry was not stored. */
export type ServiceAuditLog = (event: ServiceEvent) => Promise<void>;

/** A log that records nothing (a worker deployed alone without an audit store). */
export const NO_AUDIT_LOG: ServiceAuditLog = (): Promise<void> => Promise.resolve();

/** The log over the audit store, dated by `clock`. */
export function serviceAuditLog(store: BlobStore | undefined, clock: Clock, chain: AuditChainOptions = {}): ServiceAuditLog {
  if (store === undefined) return NO_AUDIT_LOG;
  return async (event) => {
    const security = event.details?.securityDetails ?? {};
    const entry: ValidationAuditEntry = {
      timestamp: clock.now().toISOString(),
      userId: event.userId,
      userEmail: event.userEmail ?? (event.actor.kind === "user" ? event.actor.email ?? "" : ""),
      action: event.action,
      result: event.result,
      details: {
        ...event.details,
        securityDetails: {
          ...security,
          source: "service",
          actor: event.actor.kind === "admin" ? "admin" : event.actor.uid,
          ...(event.request === undefined ? {} : {
            method: event.request.method,
            path: event.request.path,
            ...(event.request.clientIp === undefined ? {} : { clientIp: event.request.clientIp }),
          }),
        },
      },
    };
    await appendAuditEntry(store, clock, event.userId, entry, chain);
  };
}
