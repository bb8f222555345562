/**
 * @module
 * The identity provider's key set, fetched and kept as long as its `Cache-Control: max-age`
 * says. jose's `createRemoteJWKSet` keeps keys for a fixed time whatever the provider
 * answers, so the caching is ours and jose's local key set picks the key. A token signed
 * with an unknown key id refetches the set (at most once per cooldown), so a rotation is
 * picked up without a restart.
 */
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from "jose";
import { type Clock, systemClock } from "../ports.ts";
import { ServiceError } from "../errors.ts";

/** Options of {@link createJwksCache}. */
export interface JwksCacheOptions {
  /** The JWKS URL. */
  url: string;
  /** The fetch used; default the global `fetch`. */
  fetch?: typeof fetch;
  /** Dates the cache; tests control it. */
  clock?: Clock;
  /** How long one fetch of the set may take (default 5000 ms). */
  timeoutMs?: number;
  /** The least time between two fetches, and the shortest time a set is kept (default 30 s). */
  cooldownSeconds?: number;
  /** How long a set without `max-age` is kept (default 600 s). */
  defaultMaxAgeSeconds?: number;
}

/** The key set of an identity provider, as jose's key resolver. */
export interface JwksCache {
  /** Resolves the key a token's header names (jose `JWTVerifyGetKey`). */
  getKey: JWTVerifyGetKey;
  /** Forgets the set, so the next token fetches it again. */
  clear(): void;
}

const MAX_AGE_CAP_SECONDS = 24 * 60 * 60;

/** The `max-age` of a `Cache-Control` header in seconds; 0 for `no-store`/`no-cache`; undefined when absent. */
export function maxAgeOf(cacheControl: string | null): number | undefined {
  if (cacheControl === null) return undefined;
  const directives = cacheControl.toLowerCase().split(",").map((part) => part.trim());
  if (directives.includes("no-store") || directives.includes("no-cache")) return 0;
  for (const directive of directives) {
    const match = /^max-age\s*=\s*"?(\d+)"?$/.exec(directive);
    if (match) return Number(match[1]);
  }
  return undefined;
}

interface CachedSet {
  resolve: ReturnType<typeof createLocalJWKSet>;
  fetchedAt: number;
  expiresAt: number;
}

function isKeySet(value: unknown): value is JSONWebKeySet {
  return typeof value === "object" && value !== null && Array.isArray((value as { keys?: unknown }).keys);
}

/**
 * The set's key for a token. jose's own errors speak of the token (no key of its id, an
 * algorithm the key does not take); any other (a key whose material does not import) is the
 * provider's fault, not the caller's: the 503 of a key set that cannot be used.
 */
async function providerKey(set: CachedSet, ...[header, token]: Parameters<CachedSet["resolve"]>): ReturnType<CachedSet["resolve"]> {
  try {
    return await set.resolve(header, token);
  } catch (err) {
    if (err instanceof errors.JOSEError) throw err;
    throw ServiceError.server("The identity provider's key set holds a key that cannot be used", "unavailable");
  }
}

/** Creates the cache of one JWKS URL. */
export function createJwksCache(options: JwksCacheOptions): JwksCache {
  const clock = options.clock ?? systemClock;
  const doFetch = options.fetch ?? fetch;
  const cooldownMs = (options.cooldownSeconds ?? 30) * 1000;
  const defaultMaxAgeMs = (options.defaultMaxAgeSeconds ?? 600) * 1000;
  let cached: CachedSet | undefined;
  let inFlight: Promise<CachedSet> | undefined;
  // When the set was last asked for, whether it came or not: the cooldown counts from here.
  let lastAttempt = Number.NEGATIVE_INFINITY;

  const load = async (): Promise<CachedSet> => {
    let response: Response;
    try {
      response = await doFetch(options.url, {
        headers: { Accept: "application/json" },
        signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
      });
    } catch {
      throw ServiceError.server("The identity provider's key set could not be fetched", "unavailable");
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw ServiceError.server(`The identity provider's key set answered ${response.status}`, "unavailable");
    }
    const body: unknown = await response.json().catch(() => undefined);
    if (!isKeySet(body)) throw ServiceError.server("The identity provider's key set is not a JWKS", "unavailable");
    const now = clock.now().getTime();
    const maxAge = maxAgeOf(response.headers.get("Cache-Control"));
    const keepMs = maxAge === undefined ? defaultMaxAgeMs : Math.min(maxAge, MAX_AGE_CAP_SECONDS) * 1000;
    let resolve: CachedSet["resolve"];
    try {
      resolve = createLocalJWKSet(body);
    } catch {
      throw ServiceError.server("The identity provider's key set is not a valid JWKS", "unavailable");
    }
    return { resolve, fetchedAt: now, expiresAt: now + Math.max(keepMs, cooldownMs) };
  };

  // One fetch at a time; a failed refresh keeps the set we have (the provider may be down briefly).
  const refresh = (): Promise<CachedSet> => {
    if (inFlight !== undefined) return inFlight;
    const now = clock.now().getTime();
    // A provider that just failed is not asked again before the cooldown: the stale set serves.
    if (now - lastAttempt < cooldownMs) {
      if (cached !== undefined) return Promise.resolve(cached);
      return Promise.reject(ServiceError.server("The identity provider's key set could not be fetched (retrying shortly)", "unavailable"));
    }
    lastAttempt = now;
    inFlight = load()
      .then((set) => (cached = set))
      .catch((err: unknown) => {
        if (cached === undefined) throw err;
        cached = { ...cached, expiresAt: now + cooldownMs };
        return cached;
      })
      .finally(() => (inFlight = undefined));
    return inFlight;
  };

  const getKey: JWTVerifyGetKey = async (header, token) => {
    const now = clock.now().getTime();
    const set = cached === undefined || now >= cached.expiresAt ? await refresh() : cached;
    try {
      return await providerKey(set, header, token);
    } catch (err) {
      const unknownKey = typeof err === "object" && err !== null && (err as { code?: unknown }).code === "ERR_JWKS_NO_MATCHING_KEY";
      if (!unknownKey || now - lastAttempt < cooldownMs) throw err;
      // A key id we have not seen: the provider may have rotated its keys.
      return await providerKey(await refresh(), header, token);
    }
  };

  return { getKey, clear: () => (cached = undefined) };
}
