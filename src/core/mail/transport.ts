/**
 * @module
 * The mailer `MAIL_TRANSPORT` names: the outbox store, the HTTP mail API, or SMTP (which
 * needs Node's sockets, so the Node and Bun adapters pass it in as a ready mailer).
 */
import type { BlobStore, Clock, Mailer } from "../ports.ts";
import type { MailConfig } from "../config/mod.ts";
import { createOutboxMailer } from "./outbox-mailer.ts";
import { createHttpMailer, MailNotSentError } from "./http-mailer.ts";

/** A mailer that refuses every message with the reason; deletions then answer rule 5's 500. */
function unavailable(reason: string): Mailer {
  return {
    send: () => Promise.reject(new MailNotSentError(reason)),
  };
}

/** Picks the mailer: a given one wins, then `MAIL_TRANSPORT`. */
export function mailerOf(config: MailConfig, ports: { mailer?: Mailer; outbox?: BlobStore; clock: Clock }): Mailer {
  if (ports.mailer !== undefined) return ports.mailer;
  switch (config.mailTransport) {
    case "outbox":
      return ports.outbox === undefined ? unavailable("no outbox store is configured for MAIL_TRANSPORT=outbox") : createOutboxMailer(ports.outbox, ports.clock);
    case "http":
      return createHttpMailer({ url: config.mailHttpUrl ?? "", token: config.mailHttpToken ?? "", timeoutMs: config.mailTimeoutMs });
    case "smtp":
      return unavailable("MAIL_TRANSPORT=smtp needs the Node or Bun adapter's SMTP mailer");
  }
}
