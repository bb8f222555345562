/**
 * @module
 * The OpenAPI document's tags: one per worker (and one for the service's own routes), so that
 * `/docs` and generated clients group the operations by worker instead of under "default".
 */

/** The tags, in the order `/docs` lists them, each with what its worker does and which credential it takes. */
export const OPENAPI_TAGS = [
  { name: "user", description: "User records and their case assignments; deleting an account deletes its cases, files and images. Credential: userKey." },
  { name: "data", description: "JSON documents under `{userId}/{caseNumber}/…` keys: case documents, annotations of one file, any other `.json` document. A read of a missing document answers `[]`. Credential: dataKey." },
  {
    name: "audit",
    description: "The append-only audit trail, one hash chain per user: append, read a range of days, verify. Served by the audit worker (`/audit/audit`) and by the data worker (`/data/audit`). Credential: dataKey.",
  },
  { name: "image", description: "Image upload, signed delivery URLs, deletion, and delivery of self-hosted images. Credential: imagesToken (delivery: the signed URL)." },
  { name: "pdf", description: "Renders the annotated report of one image as a PDF. No credential; an identity token names the actor." },
  { name: "keys", description: "Named keys the front end reads (e.g. ACCOUNT_HASH). Credential: keysKey, or an identity token." },
  { name: "review", description: "Review of a case by a second examiner of the same lab: blind or open, conclusions, electronic signatures (docs/review.md). Credential: an identity token; `GET /review/keys` is open." },
  { name: "captcha", description: "Verifies a captcha (Turnstile) token. No credential." },
  {
    name: "exchange",
    description: "A user's cases exported (ZIP with a signed manifest, JSON, CSV; every case as JSON or XLSX), case packages imported as read-only cases, and confirmations both ways. Credential: dataKey.",
  },
  { name: "service", description: "The service itself: liveness." },
] as const satisfies readonly { name: string; description: string }[];

/** The name of one of {@link OPENAPI_TAGS}. */
export type OpenApiTag = (typeof OPENAPI_TAGS)[number]["name"];

/** The `tags` of an operation of `tag`'s group. */
export function tagged(tag: OpenApiTag): OpenApiTag[] {
  return [tag];
}
