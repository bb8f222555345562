/**
 * @module
 * The `serve` command, the same on Node, Bun and Deno (docs/configuration.md): flags,
 * `.env`, start, and a graceful stop on SIGINT/SIGTERM.
 */
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { readEnvironment } from "./environment.ts";
import { ConfigError } from "../../core/config/mod.ts";
import { ServiceError } from "../../core/errors.ts";
import { type Listen, ListenError, type RuntimeStorage, startService } from "./start.ts";
import { runExchangeCommand } from "./exchange-command.ts";
import { runAuditCommand } from "./audit-command.ts";
import { runKeysCommand } from "./keys-command.ts";
import { runBackupCommand } from "./backup-command.ts";
import { runUsersCommand } from "./users-command.ts";
import { runHistoryCommand } from "./history-command.ts";

const USAGE = `Usage: forensic-annotation serve [options]

Runs the workers of the forensic annotation service on one port.
With no other configuration every store is files under --data, mail goes to
DATA/outbox/, images are hosted by the image worker itself.

Options:
  --port PORT   port to listen on (default 8787; 0 picks a free one)
  --host HOST   address to bind (default 127.0.0.1)
  --data DIR    data directory (default ./.forensic-data)
  --help        show this help

Configuration comes from environment variables and a .env file in the working
directory (the environment wins); see README.md.

Case export and import: forensic-annotation export --help
Audit trail verification and export: forensic-annotation audit --help
Encryption at rest: forensic-annotation keys --help
Backup and restore: forensic-annotation backup --help
User records: forensic-annotation users --help
`;

const COMMANDS = `Usage: forensic-annotation <command> [options]

Commands:
  serve     run the service on one port (the default command)
  export    export a case or all cases of a user (JSON, CSV, ZIP, XLSX)
  import    import a case package as a read-only case
  audit     verify a user's audit trail (hash chain and signed head) or export it (JSON, CSV, PDF)
  keys      encryption at rest: generate a key, rotate keys, encrypt-all
  backup    back up every store into one archive; backup verify FILE checks one
  restore   write a backup archive into the stores (another backend, or after a loss)
  users     the user records: list, show, create, permit, delete
  history   history prune: remove versions older than HISTORY_RETENTION_DAYS

export, import, audit verify, users and history prune also work against a running service with
--url URL, so nothing has to be stopped (see each command's --help).

Options:
  --help, -h      this help; "forensic-annotation <command> --help" for a command's
  --version, -v   the package version
`;

/** The commands {@link main} runs (COMMANDS lists them). */
const COMMAND_NAMES = new Set(["serve", "export", "import", "audit", "keys", "backup", "restore", "users", "history"]);

const SHUTDOWN_GRACE_MS = 30_000;

/** The package's version, read from the package.json above this file (dist or source). */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth++) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string; version?: string };
      if (manifest.name === "@forensic-annotation/service" && typeof manifest.version === "string") return manifest.version;
    } catch {
      // no package.json here: look one folder up
    }
    dir = dirname(dir);
  }
  return "unknown";
}

/** parseArgs' refusal, said in our words and pointing at the help. */
function flagProblem(err: unknown, command: string): string {
  const code = typeof err === "object" && err !== null && "code" in err ? err.code : undefined;
  const option = /'([^']+)'/.exec(err instanceof Error ? err.message : "")?.[1];
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && option !== undefined) return `unknown option ${option} (forensic-annotation ${command} --help lists the options)`;
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && option !== undefined) return `option ${option} needs a value (forensic-annotation ${command} --help)`;
  return err instanceof Error ? err.message : String(err);
}

/** Whether a start failed because the address is taken (Node, Bun and Deno say it differently). */
function addressInUse(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const { code, name, message } = err as { code?: unknown; name?: unknown; message?: unknown };
  return code === "EADDRINUSE" || name === "AddrInUse" || (typeof message === "string" && /address already in use/i.test(message));
}

/** Whether a write failed for want of space (ENOSPC, or EDQUOT: the user's quota). */
function diskFull(err: unknown): boolean {
  const code = typeof err === "object" && err !== null && "code" in err ? err.code : undefined;
  return code === "ENOSPC" || code === "EDQUOT";
}

/** What the runtime's listen threw, in one line (a busy port, or a host that is no address here: 999.1.1.1), not a stack. */
export function listenProblem(err: ListenError): string {
  return addressInUse(err.cause)
    ? `${err.host}:${err.port} is already in use: stop what listens there or pass another --port (0 picks a free one)`
    : `${err.message} (--host names an address of this machine: 127.0.0.1, 0.0.0.0, ::)`;
}

/** The parsed flags of `serve`. */
export interface ServeFlags {
  /** `--port` (default 8787; 0 picks a free port). */
  port: number;
  /** `--host`, the address to bind (default 127.0.0.1). */
  host: string;
  /** `--data`, the data directory (default `./.forensic-data`). */
  data: string;
}

/** Parses `serve` flags; a string is the error to print (exit 2), null means `--help`. */
export function parseServeFlags(argv: readonly string[]): ServeFlags | string | null {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        port: { type: "string", default: "8787" },
        host: { type: "string", default: "127.0.0.1" },
        data: { type: "string", default: "./.forensic-data" },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (err) {
    return flagProblem(err, "serve");
  }
  const { values, positionals } = parsed;
  if (values.help) return null;
  if ((positionals[0] ?? "serve") !== "serve" || positionals.length > 1) {
    return `Unknown command: ${positionals.join(" ")}`;
  }
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65535) return `--port must be an integer from 0 to 65535, got "${values.port}"`;
  return { port, host: values.host, data: values.data };
}


/** Runs `serve` until SIGINT/SIGTERM; resolves with the exit code. */
export async function runServeCommand(argv: readonly string[], listen: Listen, runtimeStorage?: RuntimeStorage): Promise<number> {
  const flags = parseServeFlags(argv);
  if (flags === null) {
    console.log(USAGE);
    return 0;
  }
  if (typeof flags === "string") {
    console.error(`${flags}\n\n${USAGE}`);
    return 2;
  }
  // Listening for signals before the ready line: a SIGTERM right after it must still stop gracefully.
  let signalled: string | undefined;
  let onSignal = (signal: string) => {
    signalled = signal;
  };
  process.once("SIGTERM", () => onSignal("SIGTERM"));
  process.once("SIGINT", () => onSignal("SIGINT"));
  let server;
  try {
    server = await startService({ port: flags.port, host: flags.host, dataDir: resolve(flags.data), env: readEnvironment() }, listen, runtimeStorage);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      return 2;
    }
    if (err instanceof ListenError) {
      console.error(listenProblem(err));
      return 1;
    }
    // A store that does not answer at start (Redis or S3 down), or a full disk under the lock: its one line, not a stack.
    if (err instanceof ServiceError) {
      console.error(`cannot start: ${err.message}`);
      return 1;
    }
    // A full disk under another first write (secrets.json, an encryption canary): one line too.
    if (diskFull(err)) {
      console.error(`cannot start: the disk of --data ${resolve(flags.data)} is full (${err instanceof Error ? err.message : String(err)}): free space and start again`);
      return 1;
    }
    throw err;
  }
  const started = server;
  await new Promise<void>((resolveStop) => {
    const stop = (signal: string) => {
      console.log(`${signal}: finishing in-flight requests`);
      const force = setTimeout(() => {
        console.error("in-flight requests did not finish in time; exiting");
        process.exit(1);
      }, SHUTDOWN_GRACE_MS);
      started.close().then(() => {
        clearTimeout(force);
        resolveStop();
      }, () => resolveStop());
    };
    onSignal = stop;
    if (signalled !== undefined) stop(signalled);
  });
  return 0;
}

/** Runs the command and exits the process with its code. */
export function main(argv: readonly string[], listen: Listen, runtimeStorage?: RuntimeStorage): void {
  if (argv[0] === "--version" || argv[0] === "-v") {
    console.log(packageVersion());
    process.exit(0);
  }
  if (argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help") {
    // serve is the default command, so its options follow the list of commands.
    console.log(`${COMMANDS}\n${USAGE}`);
    process.exit(0);
  }
  // A word that names no command: the list of commands, not serve's options (serve took it as its own).
  const first = argv[0];
  if (first !== undefined && !first.startsWith("-") && !COMMAND_NAMES.has(first)) {
    console.error(`Unknown command: ${first}\n\n${COMMANDS}`);
    process.exit(2);
  }
  const run = argv[0] === "export" || argv[0] === "import"
    ? runExchangeCommand(argv, runtimeStorage === undefined ? {} : { runtimeStorage })
    : argv[0] === "audit"
    ? runAuditCommand(argv, { runtimeStorage })
    : argv[0] === "keys"
    ? runKeysCommand(argv, { runtimeStorage })
    : argv[0] === "backup" || argv[0] === "restore"
    ? runBackupCommand(argv, { runtimeStorage })
    : argv[0] === "users"
    ? runUsersCommand(argv, { runtimeStorage })
    : argv[0] === "history"
    ? runHistoryCommand(argv, { runtimeStorage })
    : runServeCommand(argv, listen, runtimeStorage);
  run.then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
      process.exit(1);
    },
  );
}
