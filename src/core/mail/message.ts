/**
 * @module
 * An RFC 5322 message (UTF-8, MIME multipart/alternative: the plain text and the same text
 * HTML-escaped) for the outbox. Written here rather than with nodemailer's composer, which
 * needs Node streams and Buffer, because the outbox also runs in workerd and Deno Deploy.
 */
import type { MailMessage } from "../ports.ts";
import { parseMailbox, type Mailbox } from "./mailbox.ts";

const encoder = new TextEncoder();

/** Escapes text for HTML so that names and notes never become markup. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!);
}

/** The HTML body transports send next to the text: every line escaped, nothing else. */
export function htmlOf(text: string): string {
  const paragraphs = text.split(/\n{2,}/).map((block) => `<p>${escapeHtml(block).replace(/\n/g, "<br>\n")}</p>`);
  return `<!doctype html>\n<html><body>\n${paragraphs.join("\n")}\n</body></html>\n`;
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** RFC 2047 encoded-word when the text is not plain printable ASCII. */
function headerText(text: string): string {
  if (/^[\x20-\x7e]*$/.test(text)) return text;
  return `=?UTF-8?B?${base64(encoder.encode(text))}?=`;
}

function mailboxHeader(mailbox: Mailbox): string {
  if (mailbox.name === undefined) return mailbox.email;
  const name = /^[\x20-\x7e]*$/.test(mailbox.name) ? `"${mailbox.name.replace(/["\\]/g, "\\$&")}"` : headerText(mailbox.name);
  return `${name} <${mailbox.email}>`;
}

function base64Lines(text: string): string {
  return base64(encoder.encode(text)).replace(/.{1,76}/g, "$&\r\n");
}

/** RFC 5322 date, e.g. `Sun, 22 Nov 2026 12:00:00 +0000`. */
function rfc5322Date(date: Date): string {
  return date.toUTCString().replace("GMT", "+0000");
}

/** Composes one message; throws when an address could inject a header. */
export function composeMessage(message: MailMessage, options: { date: Date; messageId: string }): string {
  const from = parseMailbox(message.from);
  const to = parseMailbox(message.to);
  if (from === null || to === null) throw new Error("Refusing to compose a message with an invalid address");
  const domain = from.email.slice(from.email.indexOf("@") + 1);
  const boundary = `=_alt_${options.messageId.replace(/[^A-Za-z0-9]/g, "")}`;
  const lines = [
    `From: ${mailboxHeader(from)}`,
    `To: ${mailboxHeader(to)}`,
    `Subject: ${headerText(message.subject.replace(/[\r\n]+/g, " "))}`,
    `Date: ${rfc5322Date(options.date)}`,
    `Message-ID: <${options.messageId}@${domain}>`,
    "MIME-Version: 1.0",
    `Content-Type: multipart/alternative; boundary="${boundary}"`,
    "",
    `--${boundary}`,
    "Content-Type: text/plain; charset=utf-8",
    "Content-Transfer-Encoding: base64",
    "",
    base64Lines(message.text),
    `--${boundary}`,
    "Content-Type: text/html; charset=utf-8",
    "Content-Transfer-Encoding: base64",
    "",
    base64Lines(htmlOf(message.text)),
    `--${boundary}--`,
    "",
  ];
  return lines.join("\r\n");
}
