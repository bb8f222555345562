/**
 * @module
 * The `keys` commands of encryption at rest (docs/storage.md#encryption-at-rest): `generate`
 * prints `DATA_ENCRYPTION_KEYS` with a new key first, `rotate` re-wraps every data key under
 * the first key (turning version 1 envelopes into version 2), `encrypt-all` seals what was stored before encryption was turned on. Both
 * run against the stores `STORAGE` names (beside a running `serve` on Redis, S3 and Deno KV;
 * with the file store, once `serve` stopped: files/folder-lock.ts), and a stopped run is
 * resumed by running it again.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { ConfigError, parseConfig } from "../../core/config/mod.ts";
import { encodeBase64Url } from "../../core/encoding/base64url.ts";
import { CanaryError, encryptAll, type MaintenanceProgress, rotateKeys } from "../../core/encryption/mod.ts";
import { checkCanaries, encryptedStoresOf, keyringOf } from "../../core/service/encrypted-ports.ts";
import { serverCipherSuite } from "./node-cipher.ts";
import { commandIo, type ExchangeCommandIo, progressPrinter } from "./exchange-command.ts";
import { rawStoragePorts, type RuntimeStorage } from "./start.ts";

const USAGE = `Usage: forensic-annotation keys <command> [options]

Encryption at rest (DATA_ENCRYPTION_KEYS, see docs/storage.md).

Commands:
  generate      print DATA_ENCRYPTION_KEYS with a new key first, the keys
                already set after it (put it in the environment, restart serve)
  rotate        re-wrap every stored data key under the first key (also those
                of version 1 envelopes, into version 2); bodies are not
                re-encrypted; afterwards the other keys may be removed
  encrypt-all   encrypt every object still stored as plaintext (written before
                DATA_ENCRYPTION_KEYS was set)

Options:
  --data DIR    data directory (default ./.forensic-data), as for serve
  --kid ID      generate: the new key's id (default k-YYYY-MM-DD-xxxx)
  --url URL     refused: no route of a running service re-seals stored objects
                (DATA_ENCRYPTION_KEYS never goes over the wire); see below
  --help        show this help

rotate and encrypt-all work on the stores STORAGE names: on Redis, S3 and Deno KV
while serve runs (each object is changed with a compare-and-swap); with the file
store (the default) one process writes a --data folder at a time, so stop serve
first (they refuse a folder serve holds). A run that stopped is resumed by running
it again (what is done is skipped).
`;

/** Options of {@link runKeysCommand}. */
export interface KeysCommandOptions {
  /** Output, progress and environment (defaults: console, stderr, `.env` under the process environment). */
  io?: Partial<ExchangeCommandIo>;
  /** Stores only one runtime offers (Deno KV under Deno), as for `serve`. */
  runtimeStorage?: RuntimeStorage | undefined;
}

/** Runs `keys ...` (argv without the program name); resolves with the exit code (0 done, 1 failed, 2 usage or configuration). */
export async function runKeysCommand(argv: readonly string[], options: KeysCommandOptions = {}): Promise<number> {
  const { out, err, env } = commandIo(options.io);
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        data: { type: "string", default: "./.forensic-data" },
        kid: { type: "string" },
        url: { type: "string" },
        "key-file": { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (error) {
    err.write(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const command = positionals[1];
  if (values.help || command === undefined) {
    out(USAGE);
    return values.help ? 0 : 2;
  }
  let close = async () => {};
  try {
    const config = parseConfig(env);
    if (command === "generate") {
      const kid = values.kid ?? `k-${new Date().toISOString().slice(0, 10)}-${encodeBase64Url(crypto.getRandomValues(new Uint8Array(3)))}`;
      if (config.dataEncryptionKeys?.some((key) => key.kid === kid)) throw new ConfigError([`--kid: DATA_ENCRYPTION_KEYS already holds a key "${kid}"`]);
      const fresh = { kty: "oct" as const, kid, k: encodeBase64Url(crypto.getRandomValues(new Uint8Array(32))) };
      out(JSON.stringify({ keys: [fresh, ...(config.dataEncryptionKeys ?? [])] }));
      return 0;
    }
    if (command !== "rotate" && command !== "encrypt-all") {
      err.write(`Unknown keys command: ${command}\n\n${USAGE}`);
      return 2;
    }
    if (values.url !== undefined || values["key-file"] !== undefined) {
      // The keys worker hands out worker keys; nothing over HTTP opens or re-seals stored objects (nor should: DATA_ENCRYPTION_KEYS stays off the wire).
      err.write(`--url: keys ${command} works on the stored objects themselves, which no route of the service does; run it on the stores (beside serve on Redis, S3 and Deno KV; with the file store once serve stopped)\n`);
      return 2;
    }
    const keyring = config.dataEncryptionKeys === undefined ? undefined : keyringOf(config, await serverCipherSuite());
    if (keyring === undefined) throw new ConfigError([`DATA_ENCRYPTION_KEYS: required by keys ${command}`]);
    const storage = await rawStoragePorts(config, resolve(values.data), options.runtimeStorage, { command: `keys ${command}`, existing: true });
    close = storage.close;
    await checkCanaries(storage.ports, keyring);
    const progress = progressPrinter(err);
    const show = (state: MaintenanceProgress) => progress.show(command, state.done, state.total);
    const stores = encryptedStoresOf(storage.ports);
    const result = command === "rotate" ? await rotateKeys(stores, keyring, show) : await encryptAll(stores, keyring, show);
    progress.end();
    out(command === "rotate"
      ? `re-wrapped ${result.changed} of ${result.total} objects under key "${keyring.currentKid}" (${storage.description})`
      : `encrypted ${result.changed} of ${result.total} objects under key "${keyring.currentKid}" (${storage.description})`);
    return 0;
  } catch (error) {
    if (error instanceof ConfigError) {
      err.write(`${error.message}\n`);
      return 2;
    }
    if (error instanceof CanaryError) {
      err.write(`DATA_ENCRYPTION_KEYS: ${error.message}\n`);
      return 2;
    }
    // An object that cannot be opened stops the run; what was done stays done.
    err.write(`\n${error instanceof Error ? error.message : String(error)}\nrun the command again to resume once this is fixed\n`);
    return 1;
  } finally {
    await close();
  }
}
