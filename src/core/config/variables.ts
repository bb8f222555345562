/**
 * @module
 * The building blocks of a configuration section: value kinds (positive integer, URL, list),
 * the metadata every variable carries for the generated table, and the conversion of a
 * section's variable names to the configuration's field names (`USER_DB_AUTH` → `userDbAuth`).
 */
import * as z from "zod";

/** Where a variable is read, for the generated table (`user, keys`, `all`, `serve`). */
export interface VariableMeta {
  /** The workers or commands that read it. */
  usedBy: string;
  /** The default as the table shows it, when the schema's own default says too little (or there is none). */
  defaultText?: string;
  /** The kind of value as the table shows it, when the schema's own type says too little. */
  typeText?: string;
}

/**
 * Marks a variable's schema with what the table shows: its meaning and who reads it. Called
 * last on a schema, so the description sits on the schema the section holds.
 */
export function variable<S extends z.ZodType>(schema: S, meaning: string, meta: VariableMeta): S {
  return schema.meta({ ...meta }).describe(meaning);
}

/** An optional string: an unset or empty variable is `undefined`. */
export const text = (): z.ZodOptional<z.ZodString> => z.string().optional();

/** The longest wait a timer takes (`setTimeout`, `AbortSignal.timeout`): 2^31 - 1 ms, about 24.8 days. */
export const MAX_TIMER_MS = 2_147_483_647;

/** A variable's whole number: its text's decimal digits read as a number, any other value passed on to be refused. */
const decimalDigits = (value: unknown): unknown => (typeof value === "string" && /^\s*[0-9]+\s*$/.test(value) ? Number(value) : value);

/** What a whole-number variable parses to (`fallback` when unset). */
export type WholeNumberSchema = z.ZodDefault<z.ZodPreprocess<z.ZodNumber, unknown>>;

/**
 * A whole number from `min` to `max`, written in decimal digits (spaces around them allowed):
 * `0x1e`, `1e2`, `5.0` or a blank are refused, not read as the numbers JavaScript makes of them.
 */
export function wholeNumber(fallback: number, min: number, max: number): WholeNumberSchema {
  return z.preprocess(
    decimalDigits,
    z.number({ error: "must be a whole number written in decimal digits" }).int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`),
  ).default(fallback);
}

/** A whole number above 0 (at most `max`), read from the variable's text. */
export const positiveInt = (fallback: number, max: number = Number.MAX_SAFE_INTEGER): WholeNumberSchema => wholeNumber(fallback, 1, max);

/** An absolute `http:` or `https:` URL. */
export const httpUrl = (): z.ZodURL => z.url({ protocol: /^https?$/ });

/** A comma-separated list: items trimmed, empty items dropped. */
export function commaList(value: string): string[] {
  return value.split(",").map((item) => item.trim()).filter((item) => item !== "");
}

/**
 * Adds a cross-field problem to a section, naming every variable it concerns (the message
 * then reads `A, B: why`).
 */
export function variableProblem(ctx: z.RefinementCtx, variables: readonly string[], message: string): void {
  ctx.addIssue({ code: "custom", path: [variables[0]!], message, params: { variables } });
}

/** Refinements run only on values that passed their own checks, so each problem is reported once. */
export const WHEN_VALID: { when: (payload: { issues: readonly unknown[] }) => boolean } = {
  when: (payload) => payload.issues.length === 0,
};

/** `USER_DB_AUTH` → `userDbAuth`, as a type. */
export type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Lowercase<Head>}${Capitalize<CamelCase<Tail>>}`
  : Lowercase<S>;

/** A record of variables with the configuration's field names; every field present, `undefined` when unset. */
export type CamelKeys<T> = { [K in keyof T & string as CamelCase<K>]-?: T[K] | (undefined extends T[K] ? undefined : never) };

function camelCase(name: string): string {
  return name.toLowerCase().replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
}

/** Renames a section's parsed variables to the configuration's field names. */
export function camelKeys<T extends Record<string, unknown>>(values: T): CamelKeys<T> {
  // Object.fromEntries loses the key mapping that CamelKeys states.
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [camelCase(name), value])) as CamelKeys<T>;
}

/** How {@link jwkVariables} checks a signing key. */
export interface SigningKeyRule {
  /** A shared-secret (`oct`) key may sign: true where the verifier holds the secret too (export manifests). */
  symmetric: boolean;
}

/**
 * A refinement checking the shape of a signing variable and its verify-keys variable, so that a
 * key the service could never use stops the start instead of failing requests: the signing key
 * one private JWK (`d`, or `k` of an `oct` key where `rule.symmetric`), the verify keys a JWK, an
 * array of JWKs or a JWKS, every key with a `kty`. Whether the key material itself imports is
 * checked where keys are imported (asynchronously), at start.
 */
export function jwkVariables(signing: string, verifying: string, rule: SigningKeyRule): (values: Record<string, unknown>, ctx: z.RefinementCtx) => void {
  return (values, ctx) => {
    const signingText = values[signing];
    if (typeof signingText === "string") {
      const problem = signingKeyProblem(jwkListOf(signingText), rule);
      if (problem !== undefined) variableProblem(ctx, [signing], problem);
    }
    const verifyText = values[verifying];
    if (typeof verifyText === "string") {
      const list = jwkListOf(verifyText);
      if (list === undefined) variableProblem(ctx, [verifying], "must be JSON: a JWK, an array of JWKs or a JWKS");
      else if (!list.every(hasKty)) variableProblem(ctx, [verifying], "every key needs a \"kty\"");
    }
  };
}

/**
 * The keys of a JWK, an array of JWKs or a JWKS given as JSON text (any other JSON value is
 * one key, which its own check refuses); undefined when the text is not JSON.
 */
export function jwkListOf(text: string): unknown[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (Array.isArray(value)) return value;
  return value !== null && typeof value === "object" && "keys" in value && Array.isArray(value.keys) ? value.keys : [value];
}

const hasKty = (key: unknown): key is { kty: string } => key !== null && typeof key === "object" && typeof (key as { kty?: unknown }).kty === "string";

function signingKeyProblem(list: unknown[] | undefined, rule: SigningKeyRule): string | undefined {
  if (list === undefined) return "must be JSON: one private JWK";
  if (list.length !== 1) return `one private JWK expected, found ${list.length}`;
  const key = list[0];
  if (!hasKty(key)) return "the key needs a \"kty\"";
  if (key.kty === "oct") {
    if (!rule.symmetric) return "an oct (shared-secret) key has no public half to verify with: use an RSA, EC or OKP private key";
    return typeof (key as { k?: unknown }).k === "string" ? undefined : "an oct key needs its \"k\"";
  }
  return typeof (key as { d?: unknown }).d === "string" ? undefined : "not a private key (it has no \"d\")";
}
