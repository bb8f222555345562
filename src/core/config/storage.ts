/**
 * @module
 * Where `serve` and the commands keep their stores (Node, Bun and Deno; Cloudflare uses bindings).
 */
import * as z from "zod";
import { camelKeys, text, variable, variableProblem, WHEN_VALID } from "./variables.ts";

/** The storage variables. */
export const StorageSection = z.object({
  STORAGE: variable(
    z.enum(["fs", "memory", "redis", "s3", "deno-kv"]).default("fs"),
    "the stores' backend: files under `--data`, memory, Redis, S3, or Deno KV (under Deno only)",
    { usedBy: "serve" },
  ),
  STORAGE_URL: variable(
    text(),
    "the backend's URL: `redis://…` (required with `redis`); `https://host/bucket` (required with `s3`); a database file or `deploy` (`deno-kv`, default `--data/kv.sqlite3`); never returned by the keys worker",
    { usedBy: "serve", typeText: "URL or path" },
  ),
  S3_REGION: variable(z.string().default("us-east-1"), "the S3 signing region", { usedBy: "serve" }),
  S3_ACCESS_KEY_ID: variable(text(), "the S3 access key; required with `s3`; never returned by the keys worker", { usedBy: "serve" }),
  S3_SECRET_ACCESS_KEY: variable(text(), "the S3 secret key; required with `s3`; never returned by the keys worker", {
    usedBy: "serve",
    typeText: "secret",
  }),
  FSYNC: variable(
    z.enum(["audit", "all", "off"]).default("audit"),
    "what the file store (`STORAGE=fs`) fsyncs before answering: `audit` (every audit append and new audit file), `all` (every write of every store), `off` (nothing; the filesystem decides) ([fsync policy](docs/storage.md#fsync-policy))",
    { usedBy: "serve" },
  ),
}).superRefine((e, ctx) => {
  if (e.STORAGE === "redis" && !e.STORAGE_URL?.startsWith("redis")) {
    variableProblem(ctx, ["STORAGE_URL"], "required when STORAGE=redis (e.g. redis://127.0.0.1:6379/0)");
  }
  if (e.STORAGE === "s3") {
    if (!e.STORAGE_URL || !/^https?:\/\/[^/]+\/[^/]+\/?$/.test(e.STORAGE_URL)) {
      variableProblem(ctx, ["STORAGE_URL"], "required when STORAGE=s3, as the endpoint and bucket (https://host/bucket)");
    }
    if (!e.S3_ACCESS_KEY_ID || !e.S3_SECRET_ACCESS_KEY) variableProblem(ctx, ["S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY"], "required when STORAGE=s3");
  }
}, WHEN_VALID).transform(camelKeys);

/** What {@link StorageSection} parses. */
export type StorageConfig = z.output<typeof StorageSection>;
