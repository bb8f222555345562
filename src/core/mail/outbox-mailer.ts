/**
 * @module
 * The embedded default mail transport (docs/storage.md#mail-outbox): each message is one `.eml`
 * file in the outbox store (`DATA/outbox/` under `serve`), written atomically by the store.
 */
import type { BlobStore, Clock, Mailer } from "../ports.ts";
import { composeMessage } from "./message.ts";

const encoder = new TextEncoder();

/** ISO 8601 basic format (`20261122T120000.000Z`): no `:`, which storage keys treat as a separator. */
function basicIso(date: Date): string {
  return date.toISOString().replace(/[-:]/g, "");
}

/** A mailer that writes `<ISO time>-<id>.eml` into `store`. */
export function createOutboxMailer(store: BlobStore, clock: Clock): Mailer {
  return {
    async send(message) {
      const date = clock.now();
      const id = crypto.randomUUID();
      await store.put(`${basicIso(date)}-${id}.eml`, encoder.encode(composeMessage(message, { date, messageId: id })));
    },
  };
}
