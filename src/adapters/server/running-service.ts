/**
 * @module
 * What the commands share to act through the workers (docs/operations.md#commands-against-a-running-service):
 * with `--url`, a client of the running service (the URL checked, the worker's key from the
 * environment, `--key-file`, or the secrets `serve` kept under `--data`); without it, the
 * service run in-process over the stores, holding the file store's lock, so a command does what
 * the worker does (its checks, mails and audit entries) with no second implementation.
 */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { ConfigError, GENERATED_SECRETS, parseConfig, type ServiceConfig } from "../../core/config/mod.ts";
import { checkAuditKeys } from "../../core/audit/signing-keys.ts";
import { bytesToHex } from "../../core/encoding/hex.ts";
import { type ClientOptions, createClient, type ServiceClient, ServiceClientError } from "../../client/mod.ts";
import { storedSecrets } from "./secrets.ts";
import { type RuntimeStorage, serviceOnStores, storagePorts } from "./start.ts";

/** `--url`: the service's base URL (origin and mount prefix), without a trailing `/`; a `ConfigError` when it cannot be one. */
export function serviceUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError([`--url ${text} is not a URL: give the service's base URL, e.g. http://127.0.0.1:8787`]);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ConfigError([`--url ${text}: only http: and https: URLs name a service`]);
  // A URL is printed and logged: a key in it would be shown to whoever reads those.
  if (url.username !== "" || url.password !== "") throw new ConfigError(["--url carries no credentials: the keys come from the environment or --key-file"]);
  if (url.search !== "" || url.hash !== "") throw new ConfigError([`--url ${text}: the base URL has no query or fragment`]);
  return url.href.replace(/\/+$/, "");
}

/** Where a command finds a worker's key for `--url`. */
export interface KeySources {
  /** `--key-file`: a file whose first line is the key (wins over the rest). */
  keyFile?: string | undefined;
  /** The environment (and `.env`). */
  env: Readonly<Record<string, string | undefined>>;
  /** `--data`: its `secrets.json` holds the keys `serve` generated there. */
  dataDir: string;
}

/** The key named `variable`: `--key-file`, else the environment, else what `serve` generated under `--data`; undefined when none. */
export async function workerKey(variable: string, sources: KeySources): Promise<string | undefined> {
  if (sources.keyFile !== undefined) {
    let text: string;
    try {
      text = await readFile(resolve(sources.keyFile), "utf8");
    } catch (err) {
      throw new ConfigError([`--key-file ${sources.keyFile} cannot be read (${err instanceof Error ? err.message : String(err)})`]);
    }
    const key = text.split(/\r?\n/, 1)[0]!.trim();
    if (key === "") throw new ConfigError([`--key-file ${sources.keyFile} is empty: its first line is the key (${variable})`]);
    return key;
  }
  const configured = sources.env[variable];
  if (configured !== undefined && configured !== "") return configured;
  try {
    return (await storedSecrets(resolve(sources.dataDir)))[variable];
  } catch {
    // An unreadable secrets.json: as if none, the refusal names the variable.
    return undefined;
  }
}

/**
 * The environment with the `AUDIT_SIGNING_KEY` that `serve` generated under `dataDir` when none is
 * configured: a command on the stores signs the heads it appends as serve does (an unsigned head
 * over a signed trail would verify as `signature missing`), and checks heads with serve's key.
 */
export async function withServeAuditKey(env: Readonly<Record<string, string | undefined>>, dataDir: string): Promise<Record<string, string | undefined>> {
  if (env.AUDIT_SIGNING_KEY !== undefined && env.AUDIT_SIGNING_KEY !== "") return { ...env };
  let stored: string | undefined;
  try {
    stored = (await storedSecrets(resolve(dataDir))).AUDIT_SIGNING_KEY;
  } catch (err) {
    throw new ConfigError([`${resolve(dataDir, "secrets.json")} cannot be read (${err instanceof Error ? err.message : String(err)}): it holds the AUDIT_SIGNING_KEY serve generated`]);
  }
  return stored === undefined ? { ...env } : { ...env, AUDIT_SIGNING_KEY: stored };
}

/** A client of the running service at `url` with the given keys (the admin key from `ADMIN_AUTH` when set). */
export function runningServiceClient(url: string, keys: Pick<ClientOptions, "userKey" | "dataKey" | "adminKey">): ServiceClient {
  return createClient({ baseUrl: url, ...keys });
}

/** The service in-process over the stores, and how to release them. */
export interface InProcessService {
  /** A client whose calls the in-process service answers, as the admin. */
  client: ServiceClient;
  /** The configuration it runs with. */
  config: ServiceConfig;
  /** Releases the stores (and the file store's lock). */
  close(): Promise<void>;
}

/**
 * The service over the stores the environment configures, called in-process as the administrator
 * (`ADMIN_AUTH`, or a key made for this run only): what it changes is done by the workers' own
 * code and audited as an admin's act. With the file store it takes the data folder's lock, so it
 * refuses a folder `serve` holds (the refusal says `--url` works beside it).
 */
export async function inProcessService(
  env: Readonly<Record<string, string | undefined>>,
  dataDir: string,
  command: string,
  runtimeStorage?: RuntimeStorage,
): Promise<InProcessService> {
  const made = () => bytesToHex(crypto.getRandomValues(new Uint8Array(32)));
  const given = { ...(await storedSecrets(dataDir).catch(() => ({}))), ...definedOf(env) };
  // A key serve has not generated yet is made for this run: no one but this process sees it.
  // The exchange decryption and audit signing keys are JWKs, not random hex: left unset when serve made none (heads then unsigned, as serve wrote them).
  const madeHere = GENERATED_SECRETS.filter((name) => name !== "ACCOUNT_HASH" && ((name !== "EXCHANGE_DECRYPTION_KEY" && name !== "AUDIT_SIGNING_KEY") || given[name] !== undefined));
  const keys: Record<string, string> = Object.fromEntries(madeHere.map((name) => [name, given[name] ?? made()]));
  const adminKey = given.ADMIN_AUTH ?? made();
  const userKey = keys.USER_DB_AUTH!;
  const dataKey = keys.R2_KEY_SECRET!;
  const config = parseConfig({ ...given, ...keys, ADMIN_AUTH: adminKey });
  await checkAuditKeys(config);
  const storage = await storagePorts(config, dataDir, runtimeStorage, { existing: true, command }).catch((err: unknown) => {
    throw withUrlHint(err, command);
  });
  try {
    const app = await serviceOnStores(storage, config, dataDir);
    const client = createClient({ baseUrl: "http://in-process", userKey, dataKey, adminKey, fetch: (request) => Promise.resolve(app.fetch(request)) });
    return { client, config, close: storage.close };
  } catch (err) {
    await storage.close();
    throw err;
  }
}

/** The file store's refusal of a folder `serve` holds, saying that the command works through serve with `--url`; any other error as it is. */
export function withUrlHint(err: unknown, command: string): unknown {
  if (!(err instanceof ConfigError) || !/ is in use by serve /.test(err.message)) return err;
  return new ConfigError([`${err.problems.join("; ")}; or give --url with serve's address to ${command} through it`]);
}

/** The variables that hold a value (`NAME=` in a .env is unset, as for serve). */
function definedOf(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === "string" && entry[1] !== ""));
}

/** A failed call in one line: no answer (the URL), or the service's status and message. */
export function callProblem(err: ServiceClientError, where: string): string {
  if (err.code === "NETWORK_ERROR") return `no answer from ${where}: ${err.message.replace(/^0: /, "")} (is serve running there?)`;
  if (err.status === 401 || err.status === 403) return `${where} refused the key (${err.message}); check the key (the environment, .env or --key-file) and, for what needs it, ADMIN_AUTH`;
  return err.message;
}

export { ServiceClientError };
