import { afterAll, describe, expect, it } from "vitest";
import { Miniflare } from "miniflare";
import { createCloudflareRateLimiter, type RateLimitBindingLike } from "../../../src/adapters/cloudflare/rate-limiter.ts";

const rule = { limit: 30, windowSeconds: 60 };

describe("Cloudflare rate limiter over a fake binding", () => {
  it("passes the key and reports the binding's answer", async () => {
    const keys: string[] = [];
    let success = true;
    const binding: RateLimitBindingLike = {
      limit: ({ key }) => {
        keys.push(key);
        return Promise.resolve({ success });
      },
    };
    const limiter = createCloudflareRateLimiter(binding, { limit: 5, period: 10 });
    expect(await limiter.hit("ip:203.0.113.7:pdf", rule)).toEqual({ allowed: true, limit: 5, remaining: 4, resetSeconds: 10 });
    success = false;
    expect(await limiter.hit("ip:203.0.113.7:pdf", rule)).toEqual({ allowed: false, limit: 5, remaining: 0, resetSeconds: 10 });
    expect(keys).toEqual(["ip:203.0.113.7:pdf", "ip:203.0.113.7:pdf"]);
  });

  it("reports the rule's limit and a 60 s period when the binding's are not given", async () => {
    const limiter = createCloudflareRateLimiter({ limit: () => Promise.resolve({ success: true }) });
    expect(await limiter.hit("k", rule)).toEqual({ allowed: true, limit: 30, remaining: 29, resetSeconds: 60 });
  });

  it("refuses a period the binding cannot have", () => {
    expect(() => createCloudflareRateLimiter({ limit: () => Promise.resolve({ success: true }) }, { period: 30 as 60 })).toThrow(
      /10 or 60/,
    );
  });
});

describe("Cloudflare rate limiter over the binding in workerd", () => {
  const running: Miniflare[] = [];
  afterAll(async () => {
    await Promise.all(running.map((mf) => mf.dispose()));
  });

  it("[workerd] allows the binding's limit per key, then refuses", async () => {
    const mf = new Miniflare({
      modules: true,
      script: "export default { fetch: () => new Response('ok') }",
      compatibilityDate: "2026-04-01",
      ratelimits: { LIMITER: { simple: { limit: 3, period: 60 } } },
    });
    running.push(mf);
    const binding = (await mf.getBindings<{ LIMITER: RateLimitBindingLike }>()).LIMITER;
    const limiter = createCloudflareRateLimiter(binding, { limit: 3, period: 60 });
    const decisions = [];
    for (let i = 0; i < 5; i++) decisions.push(await limiter.hit("ip:203.0.113.7:image.upload", rule));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
    expect(decisions[4]).toEqual({ allowed: false, limit: 3, remaining: 0, resetSeconds: 60 });
    expect((await limiter.hit("ip:198.51.100.9:image.upload", rule)).allowed).toBe(true);
  }, 60_000);
});
