/**
 * @module
 * User accounts: their limits, what sign-up may do, and where the user worker deployed alone
 * reaches cases and images.
 */
import * as z from "zod";
import { camelKeys, httpUrl, positiveInt, variable } from "./variables.ts";

const ALONE = "the user worker deployed alone reaches cases and images through these workers, with its own `R2_KEY_SECRET` and `IMAGES_API_TOKEN`; mounted in one service it uses the stores directly";
const DEMO = "demo account (`permitted: false`) may hold; `PUT /user/{uid}/cases` and `PUT /data/{uid}/{case}/data.json` answer 403 `FORBIDDEN` beyond them (a new case document counts the record's cases and the case folders already stored under `{uid}/`, not read-only imported cases; files count the `files` of the case document; [user limits](docs/api.md#user-limits))";

/** The account variables. */
export const AccountsSection = z.object({
  MAX_CASES: variable(positiveInt(Number.MAX_SAFE_INTEGER), "cases a permitted account (`permitted: true`) may hold", {
    usedBy: "user, data",
    defaultText: "unlimited",
  }),
  MAX_FILES_PER_CASE: variable(positiveInt(Number.MAX_SAFE_INTEGER), "files a case of a permitted account may hold", {
    usedBy: "user, data",
    defaultText: "unlimited",
  }),
  DEMO_MAX_CASES: variable(positiveInt(3), `cases a ${DEMO}`, { usedBy: "user, data" }),
  DEMO_MAX_FILES_PER_CASE: variable(positiveInt(10), "files a case of a demo account may hold (403 beyond, as with `DEMO_MAX_CASES`)", { usedBy: "user, data" }),
  SELF_REGISTRATION: variable(
    z.enum(["permitted", "demo", "closed"]).default("permitted"),
    "identity-token mode: what a user creating their own record (`PUT /user/{uid}` with their token, the Striae client's sign-up) gets. `permitted` stores what the client sends, `permitted: true` included; `demo` stores the record with `permitted: false` whatever the body says (201 with the stored record); `closed` refuses with 403. Raising an existing record's `permitted` from false to true is the admin key's in every mode. A token's user with no record is held to the same: the limits sign-up would give, and under `closed` the data worker refuses their documents. Key-only mode is unaffected ([self-registration](docs/api.md#self-registration))",
    { usedBy: "user, data" },
  ),
  DATA_WORKER_URL: variable(httpUrl().optional(), `the data worker: ${ALONE}`, { usedBy: "user" }),
  IMAGE_WORKER_URL: variable(httpUrl().optional(), `the image worker: ${ALONE}`, { usedBy: "user" }),
}).transform(({ MAX_CASES, MAX_FILES_PER_CASE, DEMO_MAX_CASES, DEMO_MAX_FILES_PER_CASE, ...rest }) => ({
  ...camelKeys(rest),
  limits: { maxCases: MAX_CASES, maxFilesPerCase: MAX_FILES_PER_CASE },
  demoLimits: { maxCases: DEMO_MAX_CASES, maxFilesPerCase: DEMO_MAX_FILES_PER_CASE },
}));

/** What {@link AccountsSection} parses. */
export type AccountsConfig = z.output<typeof AccountsSection>;
