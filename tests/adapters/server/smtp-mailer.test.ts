import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { SMTPServer } from "smtp-server";
import { simpleParser, type ParsedMail } from "mailparser";
import { createSmtpMailer } from "../../../src/adapters/server/smtp-mailer.ts";
import { MailNotSentError } from "../../../src/core/mail/http-mailer.ts";
import { closedPort } from "../../helpers/http-server.ts";
import { spawnServe } from "../../helpers/spawn-serve.ts";
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A real SMTP server on 127.0.0.1 that requires a login and keeps what it receives. */
async function smtpServer(options: { reject?: boolean } = {}) {
  const received: { from: string; to: string[]; mail: ParsedMail }[] = [];
  const server = new SMTPServer({
    authOptional: false,
    allowInsecureAuth: true,
    disabledCommands: ["STARTTLS"],
    onAuth(auth, _session, callback) {
      if (auth.username === "mailer" && auth.password === "p@ss word") return callback(null, { user: auth.username });
      callback(new Error("Invalid username or password"));
    },
    onData(stream, session, callback) {
      if (options.reject) {
        stream.resume();
        stream.on("end", () => callback(Object.assign(new Error("Mailbox unavailable"), { responseCode: 550 })));
        return;
      }
      simpleParser(stream)
        .then((mail) => {
          received.push({
            from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            mail,
          });
          callback();
        })
        .catch(callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { port: (server.server.address() as AddressInfo).port, received };
}

describe("smtp transport (nodemailer) against a real SMTP server", () => {
  it("logs in and delivers the plain text with its HTML-escaped twin", async () => {
    const smtp = await smtpServer();
    const mailer = createSmtpMailer({ url: `smtp://mailer:${encodeURIComponent("p@ss word")}@127.0.0.1:${smtp.port}`, timeoutMs: 5_000 });
    await mailer.send({ from: "Lab <no-reply@lab.example>", to: "ana@lab.example", subject: "Your account has been deleted", text: "Dear <b>Ana</b> & Ñandú,\n\nbye." });
    expect(smtp.received).toHaveLength(1);
    const [{ from, to, mail }] = smtp.received as [(typeof smtp.received)[number]];
    expect(from).toBe("no-reply@lab.example");
    expect(to).toEqual(["ana@lab.example"]);
    expect(mail.subject).toBe("Your account has been deleted");
    expect(mail.text?.trim()).toBe("Dear <b>Ana</b> & Ñandú,\n\nbye.");
    expect(mail.html).toContain("Dear &lt;b&gt;Ana&lt;/b&gt; &amp; Ñandú,");
    expect(mail.html).not.toContain("<b>Ana");
  });

  it("a wrong password, a refused message or a closed port is MailNotSentError", async () => {
    const smtp = await smtpServer();
    const message = { from: "no-reply@lab.example", to: "ana@lab.example", subject: "s", text: "t" };
    await expect(createSmtpMailer({ url: `smtp://mailer:wrong@127.0.0.1:${smtp.port}`, timeoutMs: 5_000 }).send(message)).rejects.toBeInstanceOf(MailNotSentError);
    const refusing = await smtpServer({ reject: true });
    await expect(createSmtpMailer({ url: `smtp://mailer:${encodeURIComponent("p@ss word")}@127.0.0.1:${refusing.port}`, timeoutMs: 5_000 }).send(message)).rejects.toBeInstanceOf(MailNotSentError);
    const port = await closedPort();
    await expect(createSmtpMailer({ url: `smtp://127.0.0.1:${port}`, timeoutMs: 2_000 }).send(message)).rejects.toBeInstanceOf(MailNotSentError);
    expect(smtp.received).toEqual([]);
  });
});

describe("serve with MAIL_TRANSPORT=smtp", () => {
  it("an account deletion sends its two mails over SMTP", async () => {
    const smtp = await smtpServer();
    const dir = await mkdtemp(join(tmpdir(), "fa-smtp-serve-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const served = await spawnServe({
      dataDir: join(dir, "data"),
      env: {
        USER_DB_AUTH: "user-key",
        MAIL_TRANSPORT: "smtp",
        SMTP_URL: `smtp://mailer:${encodeURIComponent("p@ss word")}@127.0.0.1:${smtp.port}`,
        ADMIN_EMAIL: "admin@lab.example",
        MAIL_FROM: "no-reply@lab.example",
      },
    });
    cleanups.push(async () => void (await served.stop("SIGTERM")));
    const headers = { "X-Custom-Auth-Key": "user-key" };
    const created = await fetch(`${served.url}/user/u1`, { method: "PUT", headers, body: JSON.stringify({ email: "ana@lab.example", firstName: "Ana", lastName: "Ruiz", company: "Lab", permitted: true }) });
    expect(created.status).toBe(201);
    const deleted = await fetch(`${served.url}/user/u1`, { method: "DELETE", headers });
    expect(deleted.status).toBe(200);
    expect(smtp.received.flatMap((message) => message.to).sort()).toEqual(["admin@lab.example", "ana@lab.example"]);
  }, 60_000);
});
