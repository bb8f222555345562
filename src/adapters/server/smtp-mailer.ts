/**
 * @module
 * `MAIL_TRANSPORT=smtp` with nodemailer (Node and Bun): `SMTP_URL` as
 * `smtp://user:pass@host:port` (STARTTLS when offered) or `smtps://` (TLS from the start).
 * The plain text is sent with its HTML-escaped twin; a refusal or the timeout is a failure.
 */
import { createTransport } from "nodemailer";
import type { Mailer } from "../../core/ports.ts";
import { htmlOf } from "../../core/mail/message.ts";
import { MailNotSentError } from "../../core/mail/http-mailer.ts";
import { parseMailbox } from "../../core/mail/mailbox.ts";

/** Options of {@link createSmtpMailer}. */
export interface SmtpMailerOptions {
  /** `SMTP_URL`. */
  url: string;
  /** How long connecting and sending may take. */
  timeoutMs: number;
}

/** Creates the SMTP transport. */
export function createSmtpMailer(options: SmtpMailerOptions): Mailer {
  const url = new URL(options.url);
  const secure = url.protocol === "smtps:";
  const transport = createTransport({
    host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port === "" ? (secure ? 465 : 587) : Number(url.port),
    secure,
    ...(url.username !== "" ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } } : {}),
    // Every phase is bounded, so a silent server is a failure, not a hang.
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
  });
  return {
    async send(message) {
      if (parseMailbox(message.from) === null || parseMailbox(message.to) === null) throw new MailNotSentError("invalid address");
      try {
        await transport.sendMail({ from: message.from, to: message.to, subject: message.subject, text: message.text, html: htmlOf(message.text) });
      } catch (err) {
        const code = err !== null && typeof err === "object" && "code" in err ? String(err.code) : "failed";
        throw new MailNotSentError(`SMTP ${code}`);
      }
    },
  };
}
