/**
 * @module
 * The two mails of an account deletion (docs/api.md#user-worker): a confirmation to the user and a
 * notification to the administrator. Plain text; transports that add HTML escape it.
 */
import type { MailMessage } from "../ports.ts";
import type { UserData } from "../schemas/user.ts";
import { parseMailbox } from "./mailbox.ts";

/** What the mails say about the deleted account. */
export interface DeletionSummary {
  /** The user record as it was read before anything was deleted. */
  user: UserData;
  /** How many cases (own and read-only) were removed. */
  casesDeleted: number;
  /** When the deletion finished, ISO 8601. */
  deletedAt: string;
}

/** The confirmation to the user; null when the record holds no address. */
export function userDeletionMail(summary: DeletionSummary, from: string): MailMessage | null {
  const { user } = summary;
  // An address that is not one safe mailbox (written by another client) gets no mail.
  if (user.email === null || parseMailbox(user.email) === null) return null;
  return {
    from,
    to: user.email,
    subject: "Your account has been deleted",
    text: [
      `Dear ${user.firstName} ${user.lastName},`,
      "",
      `your account (${user.email}) and its ${summary.casesDeleted} case(s), with their files, annotations and images, were deleted permanently on ${summary.deletedAt}.`,
      "",
      "The audit trail of your work is kept, as the law of evidence requires.",
      "",
      "If you did not ask for this, contact your administrator at once.",
    ].join("\n"),
  };
}

/** The notification to the administrator. */
export function adminDeletionMail(summary: DeletionSummary, from: string, adminEmail: string): MailMessage {
  const { user } = summary;
  return {
    from,
    to: adminEmail,
    subject: "Account deleted",
    text: [
      "An account was deleted.",
      "",
      `User id: ${user.uid}`,
      `Name: ${user.firstName} ${user.lastName}`,
      `Email: ${user.email ?? "(none)"}`,
      `Company: ${user.company}`,
      `Cases deleted: ${summary.casesDeleted}`,
      `Deleted at: ${summary.deletedAt}`,
    ].join("\n"),
  };
}
