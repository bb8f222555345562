/**
 * @module
 * Where exports read and imports write: an {@link ExchangeStore}, the case store of
 * `../cases/` plus the user record and the audit trail. Two exist: this one over the
 * service's ports (the stores and the image host, as `serve` and the command use them), and
 * `httpExchangeStore` over the workers' HTTP API (for a browser or a remote script); the
 * cases part of each is the one case store of `../cases/`.
 */
import type { LegalHold } from "../schemas/hold.ts";
import { legalHoldStore } from "../users/legal-holds.ts";
import type { BlobStore, Clock, ImageHost, KvStore } from "../ports.ts";
import type { CaseImageUpload, CaseStore } from "../cases/case-store.ts";
import { portsCaseStore } from "../cases/ports-case-store.ts";
import type { KeyHistories } from "../history/mod.ts";
import { appendAuditEntry } from "../audit/trail.ts";
import type { AuditChainOptions } from "../audit/chain.ts";
import { createLocalImageHost } from "../images/local-host.ts";
import { userRecords } from "../users/user-records.ts";
import { UserDataSchema } from "../schemas/user.ts";
import type { UserData } from "../schemas/resources.ts";
import { ValidationAuditEntrySchema } from "../schemas/audit.ts";
import { ExchangeError } from "./exchange-error.ts";

/** The user record as exports and imports use it: the service's user record. */
export type ExchangeUser = UserData;

/** An imported case in a user's `readOnlyCases`. */
export type ReadOnlyCaseEntry = NonNullable<UserData["readOnlyCases"]>[number];

/** An audit entry as the exchange functions write it (docs/api.md#entry-shape ValidationAuditEntry). */
export interface ExchangeAuditEntry {
  /** When, ISO 8601. */
  timestamp: string;
  /** The acting user. */
  userId: string;
  /** The acting user's email ("" when unknown). */
  userEmail: string;
  /** case-export, case-import, confirmation-create, confirmation-export or confirmation-import. */
  action: "case-export" | "case-import" | "confirmation-create" | "confirmation-export" | "confirmation-import";
  /** success, failure or blocked. */
  result: "success" | "failure" | "blocked";
  /** AuditDetails of docs/api.md#entry-shape. */
  details: {
    /** The case concerned. */
    caseNumber?: string | undefined;
    /** The exported or imported file's name. */
    fileName?: string | undefined;
    /** json, csv, zip, xlsx or confirmation-json. */
    fileType?: string | undefined;
    /** Whether the hashes matched (imports). */
    hashValid?: boolean | undefined;
    /** Why it failed. */
    validationErrors: string[];
    /** The original analyst. */
    originalExaminerUid?: string | undefined;
    /** The reviewer. */
    reviewingExaminerUid?: string | undefined;
    /** The confirmation concerned. */
    confirmationId?: string | undefined;
    /** case-export, case-import or confirmation. */
    workflowPhase: "case-export" | "case-import" | "confirmation";
    /** Time taken and bytes handled. */
    performanceMetrics?: { processingTimeMs: number; fileSizeBytes: number } | undefined;
  };
}

/** An image to store again at import (docs/exchange.md import rule 6). */
export type ExchangeImageUpload = CaseImageUpload;

/**
 * What exports read and imports write: a {@link CaseStore} (cases, annotations, images), plus
 * the user record's `readOnlyCases`, the audit trail and the time. Every method may throw when
 * the backend fails; imports then roll back what they wrote.
 */
export interface ExchangeStore extends CaseStore {
  /** The user record, or null. */
  getUser(userUid: string): Promise<ExchangeUser | null>;
  /**
   * Changes the user's `readOnlyCases` (the only field exchanges touch); NOT_FOUND when the user
   * is absent. `change` may run more than once (again on a record another process changed).
   */
  updateReadOnlyCases(userUid: string, change: (current: ReadOnlyCaseEntry[]) => ReadOnlyCaseEntry[]): Promise<void>;
  /** Appends an audit entry to the user's audit day. */
  appendAudit(userUid: string, entry: ExchangeAuditEntry): Promise<void>;
  /** The current time (exports, imports and audit entries are dated by it). */
  now(): Date;
  /** The legal hold on one of the user's cases (docs/api.md#legal-holds); absent: holds are not known here. */
  legalHold?(userUid: string, caseNumber: string): Promise<LegalHold | undefined>;
}

/** What {@link portsExchangeStore} needs: the service's ports (a `ServicePorts` fits). */
export interface ExchangePorts {
  /** Cases and annotations. */
  data: BlobStore;
  /** User records. */
  users: KvStore;
  /** Audit days. */
  audit: BlobStore;
  /** The image store of the local image host (`images/{id}`). */
  images: BlobStore;
  /** The time. */
  clock: Clock;
  /** The image host imports upload to; default: the local host over `images`. */
  imageHost?: ImageHost | undefined;
  /** Signs the audit heads of the entries imports write (`AUDIT_SIGNING_KEY`). */
  auditChain?: AuditChainOptions | undefined;
  /** How to read an image's bytes; default: `images/{id}` of `images` (the local host's layout). */
  readImage?: ((imageId: string) => Promise<Uint8Array | null>) | undefined;
  /**
   * Record history (`DATA_HISTORY=on`): an import's writes and deletes of documents keep their
   * versions (docs/storage.md#record-history). The service and the commands pass theirs; internal.
   *
   * @ignore
   */
  histories?: KeyHistories | undefined;
}

/** An {@link ExchangeStore} over the service's stores and image host. */
export function portsExchangeStore(ports: ExchangePorts): ExchangeStore {
  const records = userRecords(ports.users);
  const host = ports.imageHost ?? createLocalImageHost({
    store: ports.images,
    signingKey: undefined,
    deliveryBase: "http://localhost/image/delivery",
    clock: ports.clock,
    urlLifetimeSeconds: 3600,
  });
  const cases = portsCaseStore({ data: ports.data, images: ports.images, imageHost: host, readImage: ports.readImage, histories: ports.histories });
  const holds = legalHoldStore(ports.users);

  return {
    ...cases,
    legalHold: (userUid, caseNumber) => holds.holdOn(userUid, caseNumber),
    async getUser(userUid) {
      const user = await records.get(userUid);
      return user === null ? null : { ...user, readOnlyCases: user.readOnlyCases?.map((entry) => ({ ...entry, isReadOnly: true as const })) };
    },
    async updateReadOnlyCases(userUid, change) {
      await records.update(userUid, (current) => {
        if (current === null) throw new ExchangeError("NOT_FOUND", `User ${userUid} not found`);
        const next = change((current.readOnlyCases ?? []).map((entry) => ({ ...entry, isReadOnly: true as const })));
        return { next: UserDataSchema.parse({ ...current, readOnlyCases: next }), result: undefined };
      });
    },
    async appendAudit(userUid, entry) {
      await appendAuditEntry(ports.audit, ports.clock, userUid, ValidationAuditEntrySchema.parse(entry), ports.auditChain);
    },
    now: () => ports.clock.now(),
  };
}
