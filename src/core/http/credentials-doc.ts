/**
 * @module
 * The credentials of docs/api.md#access as OpenAPI security schemes, and the requirement each
 * kind of route states, so that generators and the docs page know which header carries which key.
 */

/** An OpenAPI security scheme object (the kinds the service uses). */
export type SecurityScheme =
  | { type: "apiKey"; in: "header"; name: string; description: string }
  | { type: "http"; scheme: "bearer"; description: string };

/** The service's credentials by scheme name. */
export const SECURITY_SCHEMES = {
  userKey: { type: "apiKey", in: "header", name: "X-Custom-Auth-Key", description: "`USER_DB_AUTH`: the user worker's key (401 when missing or wrong)." },
  dataKey: {
    type: "apiKey",
    in: "header",
    name: "X-Custom-Auth-Key",
    description: "`R2_KEY_SECRET`: the data worker's key, also the key of the audit endpoints (403 when missing or wrong).",
  },
  keysKey: { type: "apiKey", in: "header", name: "X-Custom-Auth-Key", description: "`KEYS_AUTH`: the keys worker's key (not used in identity-token mode)." },
  imagesToken: { type: "http", scheme: "bearer", description: "`IMAGES_API_TOKEN`: the image worker's bearer token." },
  identityToken: {
    type: "apiKey",
    in: "header",
    name: "X-Identity-Token",
    description: "In identity-token mode: the identity provider's JWT, sent besides the worker's key; the token's user acts only on their own data.",
  },
  adminKey: {
    type: "apiKey",
    in: "header",
    name: "X-Admin-Key",
    description: "`ADMIN_AUTH`: acts on any user, sent besides the worker's key; every use is recorded in the audit trail.",
  },
  metricsToken: { type: "http", scheme: "bearer", description: "`METRICS_TOKEN`: the bearer token of `GET /metrics` (401 when missing or wrong)." },
} as const satisfies Record<string, SecurityScheme>;

/** The name of one of {@link SECURITY_SCHEMES}. */
export type SecuritySchemeName = keyof typeof SECURITY_SCHEMES;

/** One OpenAPI security requirement: every scheme it names is sent together. */
export type SecurityRequirement = Partial<Record<SecuritySchemeName, string[]>>;

/**
 * A worker key alone (key-only mode), or with an identity token (identity-token mode), or
 * with the admin key.
 */
export function keyedSecurity(key: "userKey" | "dataKey" | "imagesToken"): SecurityRequirement[] {
  return [{ [key]: [] }, { [key]: [], identityToken: [] }, { [key]: [], adminKey: [] }];
}

/** The keys worker: its key, or in identity-token mode any token instead, or the admin key. */
export const KEYS_SECURITY: SecurityRequirement[] = [{ keysKey: [] }, { identityToken: [] }, { adminKey: [] }];

/** No credential, an identity token may name the actor (the PDF worker). */
export const OPTIONAL_IDENTITY: SecurityRequirement[] = [{}, { identityToken: [] }, { adminKey: [] }];

/** An identity token alone (the review worker). */
export const IDENTITY_ONLY: SecurityRequirement[] = [{ identityToken: [] }];

/** No credential at all (health, captcha, signed image delivery). */
export const OPEN: SecurityRequirement[] = [];

/** How a scheme's credential is sent, as a header line. */
function headerOf(scheme: SecurityScheme): string {
  return scheme.type === "http" ? "`Authorization: Bearer …`" : `\`${scheme.name}\``;
}

/**
 * The introduction of the OpenAPI document (`info.description`, shown at the top of `/docs`):
 * which key goes in which header, the identity token and the admin key, from
 * {@link SECURITY_SCHEMES} itself so the two cannot differ.
 */
export function credentialsIntroduction(): string {
  const rows = Object.entries(SECURITY_SCHEMES).map(([name, scheme]) => `| \`${name}\` | ${headerOf(scheme)} | ${scheme.description} |`);
  return [
    "The back end of a forensic image-annotation application: seven workers (user, image, pdf, data, keys, captcha, audit), each under its own path and tag below. The whole reference is docs/api.md in the package.",
    "",
    "## Credentials",
    "",
    "Each worker takes its own key, sent in a header on every call; the operations below name the schemes they accept.",
    "",
    "| scheme | header | value |",
    "| --- | --- | --- |",
    ...rows,
    "",
    "- **Key-only mode** (the default): the worker's key alone; its holder may act on any user.",
    "- **Identity-token mode** (`AUTH_JWKS_URL`, `AUTH_ISSUER` and `AUTH_AUDIENCE`, or `FIREBASE_PROJECT_ID`, are set): the worker's key **and** the identity provider's JWT as `X-Identity-Token`; the token's user acts only on their own data (the keys worker takes the token instead of its key).",
    "- **Admin key**: `X-Admin-Key` besides the worker's key acts on any user; every use is written to the audit trail. Browsers cannot send it (CORS).",
    "",
    "The PDF and captcha workers, image delivery (a signed URL) and `/health` need no credential.",
    "",
    "To try a call here: **Authorize**, fill in the schemes you hold (userKey, dataKey and keysKey are all `X-Custom-Auth-Key`: each operation sends its own worker's), then **Try it out** on an operation.",
  ].join("\n");
}
