/**
 * @module
 * The record history of a data key as `GET /data/{key}?history` answers it (docs/api.md#record-history).
 */
import * as z from "zod";
import { queryFlag } from "./query-flag.ts";

/** One version of a data key. */
export const VersionRecordSchema = z.object({
  version: z.number().int().min(1).describe("1 for the key's first version, then 2, 3... without gaps"),
  sha256: z.string().describe("Lower-case hex SHA-256 of the version's bytes (of no bytes for a deletion mark)"),
  size: z.number().int().min(0).describe("The bytes' length; 0 for a deletion mark"),
  writtenAt: z.string().describe("ISO 8601 time on the server's clock"),
  writtenBy: z.string().describe("The identity token's `sub`; `data-key` in key-only mode; `admin` with the admin key; `before-history` for a value stored before history was kept"),
  deleted: z.boolean().describe("True for a deletion mark (a DELETE): the key read as missing from this version on"),
  previous: z.string().nullable().describe("Hex SHA-256 of the previous version's record in canonical JSON (RFC 8785); null for version 1"),
}).meta({ id: "VersionRecord" });

/** What `GET /data/{key}?history` answers. */
export const KeyHistorySchema = z.object({
  key: z.string().describe("The data key"),
  versions: z.array(VersionRecordSchema).describe("Every version kept, oldest first"),
  current: z.number().int().nullable().describe("The version the key reads as now; null when the newest is a deletion mark"),
  valid: z.boolean().optional().describe("With `verify=true`: whether every version's bytes, the chain and the key's value match"),
  firstBadVersion: z.number().int().optional().describe("With `verify=true`, when not valid: the first version that does not verify"),
  reason: z.enum(["record missing", "chain broken", "bytes altered", "tail dropped", "head mismatch", "value differs"]).optional()
    .describe("With `verify=true`, when not valid: why that version does not verify"),
}).meta({ id: "KeyHistory" });

/** The query of a document read that asks for its history or one of its versions. */
export const HistoryQuerySchema = z.object({
  history: z.string().optional().describe("Present (any value, e.g. `?history`): answer the key's versions instead of its value"),
  verify: queryFlag("With `history`: `true` also verifies every version and the chain"),
  version: z.string().regex(/^[1-9][0-9]{0,15}$/).optional().describe("Answer version N's bytes exactly as stored (404 for a deletion mark or an unknown N)"),
});
