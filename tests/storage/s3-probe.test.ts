import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeConditionalWrites } from "../../src/adapters/s3/s3-store.ts";

// A stand-in S3 service holding objects in memory, honouring If-None-Match and, when asked, If-Match:
// the probe must say false for a service that honours only the first (the audit store's blocks need both).
function fakeS3(honoursIfMatch: boolean): Server {
  const objects = new Map<string, { etag: string }>();
  let next = 0;
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on("end", () => {
      const key = req.url ?? "";
      const stored = objects.get(key);
      if (req.method === "PUT") {
        const ifNoneMatch = req.headers["if-none-match"];
        const ifMatch = req.headers["if-match"];
        if ((ifNoneMatch === "*" && stored) || (honoursIfMatch && ifMatch !== undefined && ifMatch !== stored?.etag)) {
          res.writeHead(412).end();
          return;
        }
        const etag = `"${++next}"`;
        objects.set(key, { etag });
        res.writeHead(200, { ETag: etag }).end();
        return;
      }
      if (req.method === "HEAD") {
        res.writeHead(stored ? 200 : 404).end();
        return;
      }
      if (req.method === "DELETE") {
        objects.delete(key);
        res.writeHead(204).end();
        return;
      }
      res.writeHead(405).end();
    });
  });
}

describe.each([
  { honoursIfMatch: true, expected: true },
  { honoursIfMatch: false, expected: false },
])("the S3 conditional-write probe (If-Match honoured: $honoursIfMatch)", ({ honoursIfMatch, expected }) => {
  let server: Server;
  let endpoint = "";
  beforeAll(async () => {
    server = fakeS3(honoursIfMatch);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it(`reports ${expected}`, async () => {
    const location = { endpoint, bucket: "b", region: "us-east-1", accessKeyId: "k", secretAccessKey: "s" };
    expect(await probeConditionalWrites(location)).toBe(expected);
  });
});
