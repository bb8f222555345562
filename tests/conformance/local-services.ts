/**
 * The outside services a deployment calls, played by one HTTP server on 127.0.0.1: a
 * siteverify endpoint (`/siteverify`, token `good-token` passes), a SendLayer-style mail API
 * (`/mail`, bearer token) and an image host (`/sample.png`). It records what it was sent.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/** One call the server received. */
export interface ReceivedCall {
  path: string;
  authorization: string | undefined;
  body: string;
}

/** The running server. */
export interface LocalServices {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** `127.0.0.1:PORT`, as `PDF_IMAGE_HOSTS` lists it. */
  host: string;
  siteverify: ReceivedCall[];
  mails: ReceivedCall[];
  images: ReceivedCall[];
  close(): Promise<void>;
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Starts the server on a free port of 127.0.0.1; `image` is served at `/sample.png`. */
export async function startLocalServices(image: Uint8Array): Promise<LocalServices> {
  const siteverify: ReceivedCall[] = [];
  const mails: ReceivedCall[] = [];
  const images: ReceivedCall[] = [];
  const server = createServer((request, response) => {
    void bodyOf(request).then((body) => {
      const path = new URL(request.url ?? "/", "http://local").pathname;
      const call = { path, authorization: request.headers.authorization, body };
      if (path === "/siteverify" && request.method === "POST") {
        siteverify.push(call);
        const passed = new URLSearchParams(body).get("response") === "good-token";
        response.setHeader("Content-Type", "application/json");
        response.end(JSON.stringify(passed ? { success: true, "error-codes": [], hostname: "lab.example" } : { success: false, "error-codes": ["invalid-input-response"] }));
      } else if (path === "/mail" && request.method === "POST") {
        mails.push(call);
        response.setHeader("Content-Type", "application/json");
        response.end(JSON.stringify({ MessageID: `m-${mails.length}` }));
      } else if (path === "/sample.png") {
        images.push(call);
        response.setHeader("Content-Type", "image/png");
        response.end(image);
      } else {
        response.statusCode = 404;
        response.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    siteverify,
    mails,
    images,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
