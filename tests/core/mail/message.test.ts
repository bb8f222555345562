import { describe, expect, it } from "vitest";
import { simpleParser } from "mailparser";
import { composeMessage } from "../../../src/core/mail/message.ts";
import { parseMailbox } from "../../../src/core/mail/mailbox.ts";

describe("RFC 5322 messages of the outbox", () => {
  it("round-trips UTF-8 names, subject and text through a real parser", async () => {
    const eml = composeMessage(
      { from: "Laboratório Ω <no-reply@lab.example>", to: "Ana <ana@lab.example>", subject: "Учётная запись удалена", text: "Ñandú — Σ\n\n<i>not markup</i>" },
      { date: new Date("2026-11-22T12:00:00Z"), messageId: "3f0e6a8e-0000-4000-8000-000000000000" },
    );
    expect(eml).toMatch(/^[\x00-\x7f]*$/); // 7-bit on the wire
    const mail = await simpleParser(eml);
    expect(mail.from?.value[0]).toEqual({ name: "Laboratório Ω", address: "no-reply@lab.example" });
    expect(mail.subject).toBe("Учётная запись удалена");
    expect(mail.text?.trim()).toBe("Ñandú — Σ\n\n<i>not markup</i>");
    expect(mail.html).toContain("&lt;i&gt;not markup&lt;/i&gt;");
    expect(mail.date?.toISOString()).toBe("2026-11-22T12:00:00.000Z");
    expect(mail.messageId).toBe("<3f0e6a8e-0000-4000-8000-000000000000@lab.example>");
  });

  it("refuses addresses that could carry a header", () => {
    for (const bad of ["a@b.example\r\nBcc: c@d.example", "a@b.example, c@d.example", "<a@b.example>\nX: y", "no at sign", "Eve\r\n <e@x.example>"]) {
      expect(parseMailbox(bad), JSON.stringify(bad)).toBeNull();
    }
    expect(() => composeMessage({ from: "a@b.example", to: "x@y.example\r\nBcc: z@y.example", subject: "s", text: "t" }, { date: new Date(), messageId: "m" })).toThrow();
    expect(parseMailbox("Lab <no-reply@lab.example>")).toEqual({ name: "Lab", email: "no-reply@lab.example" });
  });
});
