/**
 * @module
 * Where the account-deletion mails go, and who sends and receives them.
 */
import * as z from "zod";
import { camelKeys, httpUrl, MAX_TIMER_MS, positiveInt, text, variable, variableProblem, WHEN_VALID } from "./variables.ts";

/** The outbox's recipients when none are configured: the operator reads `DATA/outbox/`. */
const DEFAULT_ADMIN_EMAIL = "admin@localhost";
const DEFAULT_MAIL_FROM = "Forensic Annotation <no-reply@localhost>";

/** The mail variables. */
export const MailSection = z.object({
  MAIL_TRANSPORT: variable(
    z.enum(["outbox", "smtp", "http"]).default("outbox"),
    "where the two account-deletion mails go: `outbox` (one RFC 5322 `.eml` file per message in `DATA/outbox/`, [outbox](docs/storage.md#mail-outbox)), `http` (a JSON mail API, SendLayer-compatible body, bearer token) or `smtp` (nodemailer; Node, Bun and Deno `serve`)",
    { usedBy: "user" },
  ),
  ADMIN_EMAIL: variable(text(), "the administrator notified of an account deletion", {
    usedBy: "user",
    defaultText: `\`${DEFAULT_ADMIN_EMAIL}\` with \`outbox\`; required otherwise`,
    typeText: "address",
  }),
  MAIL_FROM: variable(text(), "the sender of the account-deletion mails", {
    usedBy: "user",
    defaultText: `\`${DEFAULT_MAIL_FROM}\` with \`outbox\`; required otherwise`,
    typeText: "`addr` or `Name <addr>`",
  }),
  MAIL_HTTP_URL: variable(httpUrl().optional(), "the mail API endpoint; required with `http`", { usedBy: "user" }),
  MAIL_HTTP_TOKEN: variable(text(), "the mail API's bearer token; required with `http`; never returned by the keys worker", {
    usedBy: "user",
    typeText: "secret",
  }),
  SMTP_URL: variable(
    text(),
    "`smtp://user:pass@host:port` (STARTTLS when offered) or `smtps://...`; required with `smtp`; never returned by the keys worker",
    { usedBy: "user", typeText: "`smtp:` or `smtps:` URL" },
  ),
  MAIL_TIMEOUT_MS: variable(
    positiveInt(15_000, MAX_TIMER_MS),
    "how long one mail may take, in milliseconds; a timeout, refusal or non-2xx answer is a failed mail. Also the timeout of the user worker's calls to the data and image workers when deployed alone",
    { usedBy: "user" },
  ),
}).superRefine((e, ctx) => {
  if (e.MAIL_TRANSPORT === "http" && (!e.MAIL_HTTP_URL || !e.MAIL_HTTP_TOKEN)) {
    variableProblem(ctx, ["MAIL_HTTP_URL", "MAIL_HTTP_TOKEN"], "required when MAIL_TRANSPORT=http");
  }
  if (e.MAIL_TRANSPORT === "smtp" && !/^smtps?:\/\//.test(e.SMTP_URL ?? "")) {
    variableProblem(ctx, ["SMTP_URL"], "required when MAIL_TRANSPORT=smtp (smtp://user:pass@host:port or smtps://...)");
  }
  // Real mail needs real addresses; the outbox defaults to local ones an operator reads.
  if (e.MAIL_TRANSPORT !== "outbox" && (!e.ADMIN_EMAIL || !e.MAIL_FROM)) {
    variableProblem(ctx, ["ADMIN_EMAIL", "MAIL_FROM"], `required when MAIL_TRANSPORT=${e.MAIL_TRANSPORT}`);
  }
}, WHEN_VALID).transform((e) => ({
  ...camelKeys(e),
  adminEmail: e.ADMIN_EMAIL ?? (e.MAIL_TRANSPORT === "outbox" ? DEFAULT_ADMIN_EMAIL : undefined),
  mailFrom: e.MAIL_FROM ?? (e.MAIL_TRANSPORT === "outbox" ? DEFAULT_MAIL_FROM : undefined),
}));

/** What {@link MailSection} parses. */
export type MailConfig = z.output<typeof MailSection>;
