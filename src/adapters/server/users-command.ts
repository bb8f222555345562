/**
 * @module
 * The `users` commands (docs/operations.md#users): the user records, for a lab's first set-up
 * and its administrator.
 *
 *     forensic-annotation users list | show UID | create UID --email E --first F --last L [--company C] [--permitted] | permit UID | delete UID
 *
 * Through the user worker: with `--url` the running service's, without it the service
 * in-process over the stores (running-service.ts), so `create`, `permit` and `delete` do what
 * the worker does, account deletion's mails and audit entries included. `list` and `show`
 * without `--url` only read the stores, beside a running `serve`.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { ConfigError, parseConfig } from "../../core/config/mod.ts";
import { ServiceError } from "../../core/errors.ts";
import { checkSegment } from "../../core/storage/keys.ts";
import { UserPutBodySchema, type UserSummary } from "../../core/schemas/user.ts";
import { userRecords } from "../../core/users/user-records.ts";
import { listUsers } from "../../core/users/user-list.ts";
import type { ServiceClient } from "../../client/mod.ts";
import { commandIo, type ExchangeCommandIo } from "./exchange-command.ts";
import { callProblem, inProcessService, runningServiceClient, serviceUrl, ServiceClientError, workerKey } from "./running-service.ts";
import { type RuntimeStorage, storagePorts } from "./start.ts";
import { terminalJson, terminalLine } from "./terminal-text.ts";
import { STORE_COMMAND_OPTIONS } from "./command-options.ts";
import { commandFailure, UsageError } from "./command-failure.ts";

const USAGE = `Usage:
  forensic-annotation users list [--json]
  forensic-annotation users show UID [--json]
  forensic-annotation users create UID --email E --first F --last L [--company C] [--permitted]
  forensic-annotation users permit UID
  forensic-annotation users delete UID

The user records, for a lab's first set-up and its administrator. create makes a
record (refused when the UID has one), permit lets the account work, delete is the
account deletion of the user worker: every case with its files and images, a mail
to the user and one to ADMIN_EMAIL, an audit entry, then the record.

Without --url the command works on the stores the environment configures (files
under --data by default): list and show read them beside a running serve; create,
permit and delete write, so with the file store they refuse a folder serve holds:
give --url then. With --url they go through the running service's user worker,
with USER_DB_AUTH (or --key-file) and ADMIN_AUTH (needed by list, and so that the
service records the changes as the administrator's).

Exit 0 done, 1 no such user (or it exists, for create) or the service failed,
2 bad usage (a UID no key can hold, an e-mail that is none, a missing option).

Options:
  --email E        create: the user's e-mail address
  --first F        create: first name
  --last L         create: last name
  --company C      create: the user's lab (default empty)
  --permitted      create: the account may work at once (default: not until permit)
  --json           print the answer as JSON
  --url URL        the running service's base URL, e.g. http://127.0.0.1:8787
  --key-file FILE  with --url: a file whose first line is USER_DB_AUTH (default: the
                   environment, .env, then the key serve generated under --data)
  --data DIR       data directory (default ./.forensic-data)
  --help           show this help

Environment (and .env): STORAGE and the storage variables as for serve; USER_DB_AUTH,
ADMIN_AUTH; MAIL_FROM, ADMIN_EMAIL and the mail transport for delete.
`;


/** A value no user record can take (a UID, an e-mail): exit 2, said in one line. */
class BadValue extends Error {}

/** A refusal a user reads as the outcome (no such user, exists already): exit 1, one line. */
class Outcome extends Error {}

function parse(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        ...STORE_COMMAND_OPTIONS,
        email: { type: "string" },
        first: { type: "string" },
        last: { type: "string" },
        company: { type: "string" },
        permitted: { type: "boolean", default: false },
      },
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}
type Flags = ReturnType<typeof parse>["values"];

const SUBCOMMANDS = new Set(["list", "show", "create", "permit", "delete"]);

/** The UID as a stored key takes it; a `UsageError` naming why not. */
function checkedUid(uid: string | undefined, command: string): string {
  if (uid === undefined) throw new UsageError(`users ${command} needs a UID`);
  try {
    return checkSegment(uid, "UID");
  } catch (err) {
    throw new BadValue(`UID ${JSON.stringify(uid)}: ${err instanceof ServiceError ? err.message : String(err)}`);
  }
}

/** The body of `create`, checked with the user worker's own schema before anything is opened. */
function createBody(flags: Flags) {
  const missing = (["email", "first", "last"] as const).filter((flag) => flags[flag] === undefined);
  if (missing.length > 0) throw new UsageError(`users create needs ${missing.map((flag) => `--${flag}`).join(", ")}`);
  const body = { email: flags.email, firstName: flags.first, lastName: flags.last, company: flags.company ?? "", permitted: flags.permitted };
  const parsed = UserPutBodySchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const flag = { email: "--email", firstName: "--first", lastName: "--last", company: "--company" }[String(issue.path[0])] ?? String(issue.path[0]);
    throw new BadValue(issue.path[0] === "email" ? `--email ${JSON.stringify(flags.email)} is not an e-mail address` : `${flag}: ${issue.message}`);
  }
  if (parsed.data.email === "" || parsed.data.email === null || parsed.data.email === undefined) throw new BadValue("--email needs an e-mail address");
  for (const [flag, value] of [["--first", parsed.data.firstName], ["--last", parsed.data.lastName]] as const) {
    if (value === "") throw new BadValue(`${flag} needs a name`);
  }
  return parsed.data;
}

/** The flags each subcommand takes beside --json, --url, --key-file and --data. */
const CREATE_ONLY = ["email", "first", "last", "company"] as const;

function checkFlags(command: string, flags: Flags): void {
  if (command !== "create") {
    const given = CREATE_ONLY.filter((flag) => flags[flag] !== undefined).map((flag) => `--${flag}`);
    if (flags.permitted) given.push("--permitted");
    if (given.length > 0) throw new UsageError(`${given.join(", ")}: options of users create only`);
  }
  if (flags["key-file"] !== undefined && flags.url === undefined) throw new UsageError("--key-file goes with --url (without it the command opens the stores itself)");
}

/** One line per user: uid, permitted or not, e-mail, name, lab, cases. */
function listLines(users: readonly UserSummary[]): string[] {
  if (users.length === 0) return ["no users"];
  return users.map((user) => {
    if (user.unreadable !== undefined) return terminalLine(`${user.uid}  UNREADABLE: ${user.unreadable}`);
    const name = `${user.firstName ?? ""} ${user.lastName ?? ""}`.trim();
    const cases = `${user.cases ?? 0} case(s)${user.readOnlyCases ? `, ${user.readOnlyCases} read-only` : ""}`;
    return terminalLine(`${user.uid}  ${user.permitted ? "permitted" : "not permitted"}  ${user.email ?? "(no e-mail)"}  ${name}${user.company ? ` (${user.company})` : ""}  ${cases}`);
  });
}

/** A record in words. */
function showLines(user: Record<string, unknown>): string[] {
  const cases = (user.cases as { caseNumber: string }[] | undefined ?? []).map((assigned) => assigned.caseNumber);
  const readOnly = (user.readOnlyCases as { caseNumber: string }[] | undefined ?? []).map((imported) => imported.caseNumber);
  return [
    `uid:        ${user.uid}`,
    `e-mail:     ${user.email ?? "(none)"}`,
    `name:       ${user.firstName} ${user.lastName}`,
    `company:    ${user.company}`,
    `permitted:  ${user.permitted ? "yes" : "no"}`,
    `cases:      ${cases.length === 0 ? "none" : cases.join(", ")}`,
    ...(readOnly.length === 0 ? [] : [`read-only:  ${readOnly.join(", ")}`]),
    `created:    ${user.createdAt}${user.updatedAt === undefined ? "" : `, updated ${user.updatedAt}`}`,
  ].map(terminalLine);
}

/** Whether the call failed because the user has no record. */
const noSuchUser = (err: unknown): boolean => err instanceof ServiceClientError && err.status === 404;

/** Runs a subcommand through the user worker (the running one, or in-process). */
async function throughWorker(command: string, uid: string | undefined, flags: Flags, client: ServiceClient, out: (line: string) => void): Promise<void> {
  const print = (value: unknown, lines: string[]) => {
    if (flags.json) out(terminalJson(value));
    else for (const line of lines) out(line);
  };
  const existing = async (id: string) => {
    try {
      return await client.user.get(id);
    } catch (err) {
      if (noSuchUser(err)) throw new Outcome(`no user ${terminalLine(id)}`);
      throw err;
    }
  };
  if (command === "list") {
    const { users } = await client.user.list();
    print({ users }, listLines(users));
    return;
  }
  const id = uid!;
  if (command === "show") {
    const user = await existing(id);
    print(user, showLines(user));
    return;
  }
  if (command === "create") {
    const body = createBody(flags);
    try {
      await client.user.get(id);
      throw new Outcome(`user ${terminalLine(id)} exists already (users show ${terminalLine(id)}; permit changes its permission)`);
    } catch (err) {
      if (!noSuchUser(err)) throw err;
    }
    const user = await client.user.put(id, body);
    print(user, [terminalLine(`created user ${id} (${user.permitted ? "permitted" : "not permitted: users permit " + id + " lets it work"})`)]);
    return;
  }
  if (command === "permit") {
    const before = await existing(id);
    const user = before.permitted ? before : await client.user.put(id, { permitted: true });
    print(user, [terminalLine(before.permitted ? `user ${id} was permitted already` : `user ${id} is permitted`)]);
    return;
  }
  try {
    const deleted = await client.user.delete(id);
    print(deleted, [terminalLine(deleted.message)]);
  } catch (err) {
    if (noSuchUser(err)) throw new Outcome(`no user ${terminalLine(id)}`);
    throw err;
  }
}

/** `list` and `show` without `--url`: the stores read as they are, beside a running serve. */
async function readStores(command: string, uid: string | undefined, flags: Flags, io: ExchangeCommandIo, runtimeStorage: RuntimeStorage | undefined, onOpen: (close: () => Promise<void>) => void): Promise<void> {
  const config = parseConfig(io.env);
  const storage = await storagePorts(config, resolve(flags.data), runtimeStorage, { readOnly: true, existing: true });
  onOpen(storage.close);
  const records = userRecords(storage.ports.users);
  const print = (value: unknown, lines: string[]) => {
    if (flags.json) io.out(terminalJson(value));
    else for (const line of lines) io.out(line);
  };
  if (command === "list") {
    const users = await listUsers(storage.ports.users, records);
    print({ users }, listLines(users));
    return;
  }
  const user = await records.get(uid!);
  if (user === null) throw new Outcome(`no user ${terminalLine(uid!)}`);
  print(user, showLines(user));
}

/** Options of {@link runUsersCommand}. */
export interface UsersCommandOptions {
  /** Stores only one runtime offers (Deno KV under Deno), as for `serve`. */
  runtimeStorage?: RuntimeStorage | undefined;
  /** Output and environment; default the process's. */
  io?: Partial<ExchangeCommandIo> | undefined;
}

/** Runs `users ...` (argv without the program name); resolves with the exit code (0 done, 1 no such user or failed, 2 usage). */
export async function runUsersCommand(argv: readonly string[], options: UsersCommandOptions = {}): Promise<number> {
  const io = commandIo(options.io);
  let close = async () => {};
  try {
    const { values: flags, positionals } = parse(argv);
    if (flags.help) {
      io.out(USAGE);
      return 0;
    }
    const command = positionals[1];
    if (command === undefined || !SUBCOMMANDS.has(command)) throw new UsageError(`Unknown users command: ${command ?? "(none)"} (list, show, create, permit or delete)`);
    const uid = command === "list" ? undefined : checkedUid(positionals[2], command);
    const extra = positionals[command === "list" ? 2 : 3];
    if (extra !== undefined) throw new UsageError(`Unexpected argument: ${extra}`);
    checkFlags(command, flags);
    if (command === "create") createBody(flags);
    const dataDir = resolve(flags.data);
    if (flags.url !== undefined) {
      const url = serviceUrl(flags.url);
      const userKey = await workerKey("USER_DB_AUTH", { keyFile: flags["key-file"], env: io.env, dataDir });
      if (userKey === undefined) throw new ConfigError(["USER_DB_AUTH: the user worker's key is needed with --url (set it, or give --key-file)"]);
      const adminKey = io.env.ADMIN_AUTH === "" ? undefined : io.env.ADMIN_AUTH;
      if (command === "list" && adminKey === undefined) throw new ConfigError(["ADMIN_AUTH: users list --url needs the admin key (the user worker lists users to the administrator only)"]);
      const client = runningServiceClient(url, { userKey, ...(adminKey === undefined ? {} : { adminKey }) });
      await withCallProblems(url, () => throughWorker(command, uid, flags, client, io.out));
      return 0;
    }
    if (command === "list" || command === "show") {
      await readStores(command, uid, flags, io, options.runtimeStorage, (closing) => (close = closing));
      return 0;
    }
    const service = await inProcessService(io.env, dataDir, `users ${command}`, options.runtimeStorage);
    close = service.close;
    await withCallProblems("the service", () => throughWorker(command, uid, flags, service.client, io.out));
    return 0;
  } catch (err) {
    // A bad value may hold what the user typed: escaped for the terminal.
    if (err instanceof BadValue) return commandFailure(err, io.err, { usage: USAGE, input: [BadValue], inputLine: terminalLine });
    return commandFailure(err, io.err, { usage: USAGE, input: [ConfigError] });
  } finally {
    await close();
  }
}

/** A failed call said in one line (an `Outcome`, exit 1). */
async function withCallProblems(where: string, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (err) {
    if (err instanceof ServiceClientError) throw new Outcome(callProblem(err, where));
    throw err;
  }
}
