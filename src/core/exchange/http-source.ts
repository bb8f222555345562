/**
 * @module
 * An {@link ExchangeStore} over the workers' HTTP API (docs/api.md), for a browser client or a
 * script that holds the worker keys: cases, annotations and images through the HTTP case store
 * of `../cases/`, the user record through the user worker, the audit trail through the audit
 * endpoints, all with the same deadline, credentials and error mapping. Updates are
 * read-then-write here: the HTTP API has no conditional write.
 */
import { storageKeys } from "../storage/keys.ts";
import { httpCaseStore, type HttpCaseStoreOptions } from "../cases/http-case-store.ts";
import { baseUrl, workerCalls } from "../cases/worker-calls.ts";
import { ExchangeError } from "./exchange-error.ts";
import type { ExchangeAuditEntry, ExchangeStore, ExchangeUser, ReadOnlyCaseEntry } from "./sources.ts";

/** Options of {@link httpExchangeStore}: the case store's, plus the user worker and the audit endpoints. */
export interface HttpExchangeOptions extends HttpCaseStoreOptions {
  /** The user worker's base URL, e.g. `http://127.0.0.1:8787/user`. */
  userWorkerUrl: string;
  /** Its `X-Custom-Auth-Key` (`USER_DB_AUTH`). */
  userKey: string;
  /** Base URL of the audit endpoints (`/audit/` under it); default the data worker. The data worker's key is sent. */
  auditUrl?: string | undefined;
  /** The time exports and audit entries are dated by (default: the system clock). */
  now?: (() => Date) | undefined;
}

/** Creates the HTTP store. */
export function httpExchangeStore(options: HttpExchangeOptions): ExchangeStore {
  const { call, expectOk } = workerCalls(options);
  const userHeaders = { "X-Custom-Auth-Key": options.userKey };
  const userUrl = (userUid: string): string => `${baseUrl(options.userWorkerUrl)}/${encodeURIComponent(storageKeys.user(userUid))}`;
  const users = "user worker";

  async function getUser(userUid: string): Promise<ExchangeUser | null> {
    const response = await expectOk(await call(userUrl(userUid), { headers: userHeaders }, users), users, true);
    return response === null ? null : (await response.json()) as ExchangeUser;
  }

  return {
    ...httpCaseStore(options),
    getUser,
    async updateReadOnlyCases(userUid, change) {
      const user = await getUser(userUid);
      if (user === null) throw new ExchangeError("NOT_FOUND", `User ${userUid} not found`);
      const readOnlyCases: ReadOnlyCaseEntry[] = change(user.readOnlyCases ?? []);
      const init = { method: "PUT", headers: { ...userHeaders, "Content-Type": "application/json" }, body: JSON.stringify({ readOnlyCases }) };
      await (await expectOk(await call(userUrl(userUid), init, users), users))!.body?.cancel();
    },
    async appendAudit(userUid, entry: ExchangeAuditEntry) {
      const url = `${baseUrl(options.auditUrl ?? options.dataWorkerUrl)}/audit/?userId=${encodeURIComponent(storageKeys.user(userUid))}`;
      const init = { method: "POST", headers: { "X-Custom-Auth-Key": options.dataKey, "Content-Type": "application/json" }, body: JSON.stringify(entry) };
      await (await expectOk(await call(url, init, "audit endpoint"), "audit endpoint"))!.body?.cancel();
    },
    now: options.now ?? (() => new Date()),
  };
}
