/**
 * @module
 * A JSON mail API as transport (`MAIL_TRANSPORT=http`), with a SendLayer-compatible body
 * (`From`, `To`, `Subject`, `ContentType`, `HTMLContent`, `PlainContent`) and a bearer
 * token. A non-2xx answer, a network error or the timeout means the mail was not sent.
 */
import type { Mailer } from "../ports.ts";
import { htmlOf } from "./message.ts";
import { type Mailbox, parseMailbox } from "./mailbox.ts";
import { isTimeout } from "../outbound/timeout.ts";
import { fetchRefusingRedirects } from "../outbound/no-redirects.ts";

/** Options of {@link createHttpMailer}. */
export interface HttpMailerOptions {
  /** The endpoint, e.g. `https://console.sendlayer.com/api/v1/email`. */
  url: string;
  /** The API's bearer token (`MAIL_HTTP_TOKEN`). */
  token: string;
  /** How long one call may take. */
  timeoutMs: number;
  /** The fetch to call the API with (default: the global one). */
  fetch?: typeof fetch;
}

/** Why a mail was not sent: the transport's own words, without secrets. */
export class MailNotSentError extends Error {
  /** `reason` says what went wrong (status, timeout, unreachable). */
  constructor(reason: string) {
    super(`Mail not sent: ${reason}`);
    this.name = "MailNotSentError";
  }
}

const party = (mailbox: Mailbox) => ({ name: mailbox.name ?? "", email: mailbox.email });

/** Creates the HTTP mail API transport. */
export function createHttpMailer(options: HttpMailerOptions): Mailer {
  const doFetch = options.fetch ?? fetch;
  return {
    async send(message) {
      const from = parseMailbox(message.from);
      const to = parseMailbox(message.to);
      if (from === null || to === null) throw new MailNotSentError("invalid address");
      let response: Response;
      try {
        response = await fetchRefusingRedirects(doFetch, options.url, {
          method: "POST",
          headers: { Authorization: `Bearer ${options.token}`, "Content-Type": "application/json" },
          body: JSON.stringify({
            From: party(from),
            To: [party(to)],
            Subject: message.subject,
            ContentType: "HTML",
            HTMLContent: htmlOf(message.text),
            PlainContent: message.text,
          }),
          signal: AbortSignal.timeout(options.timeoutMs),
        });
      } catch (err) {
        throw new MailNotSentError(isTimeout(err) ? `no answer within ${options.timeoutMs} ms` : "mail API unreachable");
      }
      await response.body?.cancel();
      if (!response.ok) throw new MailNotSentError(`mail API answered HTTP ${response.status}`);
    },
  };
}
