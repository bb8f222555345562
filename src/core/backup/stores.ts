/**
 * @module
 * Which stores a backup holds: every store among the ports, found by its shape rather than a
 * fixed list, so a store another feature adds to the ports is backed up (and restored) too.
 */
import type { BlobStore, KvStore } from "../ports.ts";
import { BLOB_CANARY_KEY, KV_CANARY_KEY } from "../encryption/encrypted-stores.ts";

/** One store of the ports, by the name of its port. */
export type NamedStore = { name: string; kind: "blob"; store: BlobStore } | { name: string; kind: "kv"; store: KvStore };

const isFunction = (value: unknown): boolean => typeof value === "function";

// The well-known ones first, the audit store last (its trails are read as one moment per user).
const ORDER = ["users", "data", "images", "outbox"];

/**
 * The stores among `ports` (anything with get, put, delete and list): a blob store when it can
 * append to a JSON array, else a string store. The audit store is named `audit`.
 */
export function storesOf(ports: object): NamedStore[] {
  const found: NamedStore[] = [];
  const seen = new Set<unknown>();
  for (const [name, value] of Object.entries(ports)) {
    // A store under two names is one store: backed up once, under the first.
    if (value === null || typeof value !== "object" || seen.has(value)) continue;
    const store = value as Record<string, unknown>;
    if (![store.get, store.put, store.delete, store.list].every(isFunction)) continue;
    seen.add(value);
    found.push(isFunction(store.appendToJsonArray) ? { name, kind: "blob", store: value as BlobStore } : { name, kind: "kv", store: value as KvStore });
  }
  const rank = (name: string) => (name === "audit" ? ORDER.length + 1 : ORDER.includes(name) ? ORDER.indexOf(name) : ORDER.length);
  return found.sort((a, b) => rank(a.name) - rank(b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The encryption canary: written by each start over its own keys, so never backed up or counted as data. */
export function isCanary(kind: NamedStore["kind"], key: string): boolean {
  return key === (kind === "blob" ? BLOB_CANARY_KEY : KV_CANARY_KEY);
}

const CASE = /^[^/]+\/[^/]+\/data\.json$/;
const ANNOTATIONS = /^[^/]+\/[^/]+\/[^/]+\/data\.json$/;

/** The kind an object is counted under in the manifest (`data/cases`, `audit/days`...). */
export function kindOf(store: string, key: string): string {
  switch (store) {
    case "users":
      return key.startsWith("legal-holds/") ? "users/holds" : "users/records";
    case "data":
      if (key.startsWith("#history/")) return "data/history";
      return CASE.test(key) ? "data/cases" : ANNOTATIONS.test(key) ? "data/annotations" : "data/other";
    case "audit":
      if (key.startsWith("reviews/") || key.startsWith("review-index/") || key.startsWith("review-members/")) return "audit/reviews";
      return key.startsWith("audit-heads/") ? "audit/heads" : key.startsWith("audit-trails/") ? "audit/days" : "audit/other";
    case "images":
      if (key.startsWith("#history/")) return "images/deleted";
      return key.startsWith("images/") ? (key.endsWith(".json") ? "images/metadata" : "images/images") : "images/other";
    case "outbox":
      return "outbox/mail";
    default:
      return `${store}/objects`;
  }
}
