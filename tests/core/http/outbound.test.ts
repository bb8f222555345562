import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fetchRefusingRedirects } from "../../../src/core/outbound/no-redirects.ts";

describe("fetchRefusingRedirects", () => {
  let server: Server;
  let base: string;
  const reached: string[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      reached.push(request.url ?? "");
      if (request.url === "/moved") {
        response.writeHead(302, { Location: "/target" }).end();
      } else if (request.url === "/see-other") {
        response.writeHead(303, { Location: "/target" }).end();
      } else {
        response.setHeader("Content-Type", "application/json");
        response.end(JSON.stringify({ path: request.url }));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("answers as fetch does when there is no redirect", async () => {
    const response = await fetchRefusingRedirects(fetch, `${base}/plain`, { method: "POST", body: "x" });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ path: "/plain" });
  });

  it("fails on a redirect, as redirect: error does, and never reaches the target", async () => {
    reached.length = 0;
    for (const path of ["/moved", "/see-other"]) {
      await expect(fetchRefusingRedirects(fetch, `${base}${path}`)).rejects.toThrow(TypeError);
    }
    expect(reached).toEqual(["/moved", "/see-other"]);
  });

  it("sends redirect: manual, the one mode workerd accepts besides follow", async () => {
    const modes: (RequestRedirect | undefined)[] = [];
    const spy: typeof fetch = async (input, init) => {
      modes.push(init?.redirect);
      return new Response("{}");
    };
    await fetchRefusingRedirects(spy, "https://siteverify.example/", { redirect: "follow" });
    expect(modes).toEqual(["manual"]);
  });
});
