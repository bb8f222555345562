/**
 * @module
 * What the client sends and receives, written out (docs/api.md): the stored resources come
 * from the service's own declarations; tests/client/client-types.test.ts checks the request
 * and answer types against the zod schemas the workers validate and answer with.
 */
import type { AuditEntry, UserData } from "../core/schemas/resources.ts";
import type { LegalHold } from "../core/schemas/hold.ts";

/** The body of `PUT /user/{uid}`: every field optional; all but `readOnlyCases` required for a new record. */
export interface UserInput {
  /** A valid address of at most 320 characters, `""` or `null`. */
  email?: string | null;
  /** At most 200 characters, trimmed. */
  firstName?: string;
  /** At most 200 characters, trimmed. */
  lastName?: string;
  /** At most 200 characters, trimmed. */
  company?: string;
  /** Whether the account has the permitted (not demo) limits. */
  permitted?: boolean;
  /** Imported cases, kept as sent. */
  readOnlyCases?: NonNullable<UserData["readOnlyCases"]>;
}

/** One case to assign with `PUT /user/{uid}/cases`; other fields are kept. */
export interface CaseAssignmentInput {
  /** 1 to 200 characters, one key segment. */
  caseNumber: string;
  /** ISO 8601 date-time with `Z` or an offset; otherwise the server's time is stored. */
  createdAt?: string;
  /** Other fields, kept as sent. */
  [field: string]: unknown;
}

export type { LegalHold } from "../core/schemas/hold.ts";

/** The answer of the `/user/{uid}/holds` routes: the user's holds after the call. */
export interface LegalHolds {
  /** The user. */
  userUid: string;
  /** The holds, oldest first. */
  holds: LegalHold[];
}

/** The answer of `POST /data/history/prune`. */
export interface HistoryPruneResult {
  /** `HISTORY_RETENTION_DAYS`. */
  retentionDays: number;
  /** Versions written before this time (ISO 8601) were pruned, a key's newest version never. */
  cutoff: string;
  /** Histories examined. */
  histories: number;
  /** Each key pruned now, with the versions whose bytes were removed. */
  pruned: { key: string; versions: number[] }[];
  /** Keys left whole because their case is on legal hold. */
  held: string[];
}

/** The answer of `DELETE /user/{uid}`. */
export interface UserDeletion {
  /** Always true (a failure is thrown as a `ServiceClientError`). */
  success: true;
  /** `Account {uid} and its {n} case(s) were deleted`. */
  message: string;
}

/** The answer of `GET /user/` (the admin key only): every user, by uid. */
export interface UserList {
  /** One summary per stored record. */
  users: {
    /** The user id. */
    uid: string;
    /** The e-mail address, or null. */
    email?: string | null;
    /** First name. */
    firstName?: string;
    /** Last name. */
    lastName?: string;
    /** The user's lab. */
    company?: string;
    /** Whether the account may work. */
    permitted?: boolean;
    /** How many cases are assigned. */
    cases?: number;
    /** How many read-only (imported) cases are listed. */
    readOnlyCases?: number;
    /** When the record was created. */
    createdAt?: string;
    /** Why the stored record cannot be read (then the other fields are absent). */
    unreadable?: string;
  }[];
}

/** An audit entry as sent to `POST /audit/`: `receivedAt` is the service's to add. */
export type AuditEntryInput = AuditEntry & { receivedAt?: never };

/** A stored entry that cannot be served, in its place in a read answer. */
export interface UnreadableAuditEntry extends AuditEntry {
  /** Marks the stand-in. */
  unreadable: true;
  /** The stored file holding it. */
  filename: string;
  /** Its position in that file, from 0. */
  index: number;
  /** Why it cannot be served. */
  reason: string;
}

/** The answer of `POST /audit/`. */
export interface AuditAppended {
  /** Always true. */
  success: true;
  /** Entries in the day's file after the append. */
  entryCount: number;
  /** `audit-trails/{userId}-{YYYY-MM-DD}.json` */
  filename: string;
}

/** The answer of `GET /audit/`: newest first. */
export interface AuditEntries {
  /** The entries, or stand-ins for stored items that cannot be served. */
  entries: (AuditEntry | UnreadableAuditEntry)[];
  /** How many. */
  total: number;
}

/** The days `GET /audit/` reads: ISO 8601 dates or date-times, both days included; neither is today. */
export interface AuditRange {
  /** The first day. */
  startDate?: string;
  /** The last day. */
  endDate?: string;
}

/** The stored image an upload answers. */
export interface UploadedImage {
  /** The image id. */
  id: string;
  /** The part's file name. */
  filename: string;
  /** When it was stored (ISO 8601). */
  uploaded: string;
  /** Always true: delivery needs a signed URL. */
  requireSignedURLs: boolean;
  /** Delivery URLs to sign with {@link ImageClient.sign}. */
  variants: string[];
}

/** The answer of the captcha worker, whether or not the token passed. */
export interface CaptchaResult {
  /** Whether the token passed. */
  success: boolean;
  /** The verification service's error codes. */
  "error-codes": string[];
  /** When the challenge was solved. */
  challenge_ts?: string;
  /** The site the challenge was solved on. */
  hostname?: string;
}

/** The image worker's calls. */
export interface ImageClient {
  /** Uploads an image (`POST /image/`). */
  upload(file: Blob, filename?: string): Promise<UploadedImage>;
  /** A signed, time-limited URL for a delivery URL (`GET /image/{url}`). */
  sign(deliveryUrl: string): Promise<string>;
  /** Deletes an image (`DELETE /image/{id}`); with `owner`, only when it is recorded as that user's. */
  delete(imageId: string, options?: { owner?: string }): Promise<void>;
}
