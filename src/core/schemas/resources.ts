/**
 * @module
 * The resources the workers store and answer, written out as plain interfaces for the public
 * API: JSR documents these, never the types inferred from the zod schemas beside this file
 * (which validate the same shapes). `tests/public-api.test.ts` checks both ways that they agree.
 * Stored documents are loose: fields written by other clients are kept. The formats are
 * described in `docs/`.
 */
import type { Confirmation } from "./annotation.ts";
import type { ErrorCode } from "./error.ts";

/** The standard error body every worker answers a failure with. */
export interface ErrorBody {
  /** A short human-readable summary (`"Validation failed"`, `"Forbidden"`...). */
  error: string;
  /** The machine-readable code. */
  code: ErrorCode;
  /** What went wrong, naming the failing field where there is one. */
  message: string;
  /** Safe details (`issues`, `maxDepth`, `check`...); never a library's internals. */
  details: Record<string, unknown>;
}

/** One image file of a case (`CaseData.files`). */
export interface FileData {
  /** The image id at the image host. */
  id: string;
  /** The file name given at upload. */
  originalFilename: string;
  /** Upload time, ISO 8601. */
  uploadedAt: string;
  /** Fields written by other clients. */
  [field: string]: unknown;
}

/** A case document (`{uid}/{case}/data.json` in the data store). */
export interface CaseData {
  /** The case number. */
  caseNumber: string;
  /** The case's image files. */
  files: FileData[];
  /** Creation time, ISO 8601. */
  createdAt: string;
  /** Last change, ISO 8601. */
  updatedAt?: string | undefined;
  /** True for a case imported read-only. */
  isReadOnly?: boolean | undefined;
  /** When an imported case was imported, ISO 8601. */
  importedAt?: string | undefined;
  /** An imported case's original image ids, each mapped to its new file id. */
  originalImageIds?: Record<string, string> | undefined;
  /** The `createdAt` of an imported package's manifest. */
  forensicManifestCreatedAt?: string | undefined;
  /** An imported case's confirmations, by original image id. */
  confirmations?: Record<string, Confirmation[]> | undefined;
  /** Fields written by other clients. */
  [field: string]: unknown;
}

/** A user record (the user worker's `GET /{uid}`, stored in `USER_DB`). */
export interface UserData {
  /** The user id. */
  uid: string;
  /** The user's email, or null. */
  email: string | null;
  /** First name. */
  firstName: string;
  /** Last name. */
  lastName: string;
  /** The user's lab. */
  company: string;
  /** False for a demo account, held to the demo limits. */
  permitted: boolean;
  /** The user's own cases. */
  cases: {
    /** The case number. */
    caseNumber: string;
    /** When the case was assigned, ISO 8601. */
    createdAt: string;
    /** Fields written by other clients. */
    [field: string]: unknown;
  }[];
  /** Cases imported read-only. */
  readOnlyCases?: {
    /** The case number. */
    caseNumber: string;
    /** When it was imported, ISO 8601. */
    importedAt: string;
    /** When the package was exported. */
    originalExportDate: string;
    /** Who exported it. */
    originalExportedBy: string;
    /** The package's hash. */
    sourceHash?: string | undefined;
    /** Always true. */
    isReadOnly: true;
    /** Fields written by other clients. */
    [field: string]: unknown;
  }[] | undefined;
  /** Creation time, ISO 8601. */
  createdAt: string;
  /** Last change, ISO 8601. */
  updatedAt?: string | undefined;
  /** Fields written by other clients. */
  [field: string]: unknown;
}

/** One entry of a user's audit trail, as clients append it and the audit endpoints serve it. */
export interface AuditEntry {
  /** When it happened, ISO 8601 with an offset. */
  timestamp: string;
  /** The user whose trail holds the entry. */
  userId: string;
  /** That user's email. */
  userEmail: string;
  /** What happened (the legacy values are kept for old clients). */
  action:
    | "case-create"
    | "case-rename"
    | "case-delete"
    | "case-export"
    | "case-import"
    | "confirmation-create"
    | "confirmation-export"
    | "confirmation-import"
    | "file-upload"
    | "file-delete"
    | "file-access"
    | "annotation-create"
    | "annotation-edit"
    | "annotation-delete"
    | "user-login"
    | "user-logout"
    | "user-profile-update"
    | "user-password-reset"
    | "user-account-delete"
    | "pdf-generate"
    | "security-violation"
    | "import"
    | "export"
    | "confirm"
    | "validate"
    | "legal-hold-place"
    | "legal-hold-lift"
    | "history-prune";
  /** How it ended. */
  result: "success" | "failure" | "warning" | "blocked" | "pending";
  /** What the entry is about; known fields are checked, null counts as absent, others are kept. */
  details: {
    /** The file concerned. */
    fileName?: string | null | undefined;
    /** Its type (`json-data`...). */
    fileType?: string | null | undefined;
    /** The case concerned. */
    caseNumber?: string | null | undefined;
    /** The confirmation concerned. */
    confirmationId?: string | null | undefined;
    /** Whether a hash check passed. */
    hashValid?: boolean | null | undefined;
    /** What failed validation. */
    validationErrors?: string[] | null | undefined;
    /** Security checks made. */
    securityChecks?: Record<string, unknown> | null | undefined;
    /** The original examiner of a case. */
    originalExaminerUid?: string | null | undefined;
    /** The reviewing examiner. */
    reviewingExaminerUid?: string | null | undefined;
    /** The workflow phase. */
    workflowPhase?: "casework" | "case-export" | "case-import" | "confirmation" | "user-management" | null | undefined;
    /** Timings and sizes. */
    performanceMetrics?: {
      /** Processing time in milliseconds. */
      processingTimeMs?: number | null | undefined;
      /** File size in bytes. */
      fileSizeBytes?: number | null | undefined;
      /** Fields written by other clients. */
      [field: string]: unknown;
    } | null | undefined;
    /** Facts of the case. */
    caseDetails?: Record<string, unknown> | null | undefined;
    /** Facts of the file. */
    fileDetails?: {
      /** The file id. */
      fileId?: string | null | undefined;
      /** The file's original name. */
      originalFileName?: string | null | undefined;
      /** Its media type. */
      mimeType?: string | null | undefined;
      /** How it was uploaded. */
      uploadMethod?: string | null | undefined;
      /** Its size in bytes. */
      fileSize?: number | null | undefined;
      /** Fields written by other clients. */
      [field: string]: unknown;
    } | null | undefined;
    /** Facts of the annotation. */
    annotationDetails?: {
      /** The annotation's type. */
      annotationType?: string | null | undefined;
      /** The tool used. */
      tool?: string | null | undefined;
      /** Where on the canvas. */
      canvasPosition?: {
        /** Horizontal position. */
        x?: number | null | undefined;
        /** Vertical position. */
        y?: number | null | undefined;
        /** Fields written by other clients. */
        [field: string]: unknown;
      } | null | undefined;
      /** Fields written by other clients. */
      [field: string]: unknown;
    } | null | undefined;
    /** Facts of the session. */
    sessionDetails?: Record<string, unknown> | null | undefined;
    /** Facts of a security event (`source: "service"` on the service's own entries). */
    securityDetails?: Record<string, unknown> | null | undefined;
    /** Facts of a profile change. */
    userProfileDetails?: Record<string, unknown> | null | undefined;
    /** Fields written by other clients. */
    [field: string]: unknown;
  };
  /** When the service received the entry (its clock, UTC); set by the service on every stored entry. */
  receivedAt?: string | undefined;
  /** Fields written by other clients. */
  [field: string]: unknown;
}
