import { createStorage } from "unstorage";
import memoryDriver from "unstorage/drivers/memory";
import { createBlobStore, createKvStore } from "../../src/core/storage/unstorage-stores.ts";
import { parseConfig } from "../../src/core/config/mod.ts";
import { createService, type ServicePorts } from "../../src/core/service/service.ts";
import type { CaptchaVerifier, Clock } from "../../src/core/ports.ts";

export const KEYS = {
  USER_DB_AUTH: "user-key-0123456789",
  R2_KEY_SECRET: "data-key-0123456789",
  KEYS_AUTH: "keys-key-0123456789",
  IMAGES_API_TOKEN: "images-token-0123456789",
  ACCOUNT_HASH: "account-hash-abc",
  HMAC_KEY: "hmac-key-0123456789",
} as const;

/** A clock the test moves by hand. */
export function fixedClock(iso: string): Clock & { set(iso: string): void } {
  let now = new Date(iso);
  return { now: () => new Date(now), set: (next) => (now = new Date(next)) };
}

export function memoryPorts(overrides: Partial<ServicePorts> = {}): ServicePorts {
  return {
    data: createBlobStore(createStorage({ driver: memoryDriver() })),
    audit: createBlobStore(createStorage({ driver: memoryDriver() })),
    users: createKvStore(createStorage({ driver: memoryDriver() })),
    images: createBlobStore(createStorage({ driver: memoryDriver() })),
    outbox: createBlobStore(createStorage({ driver: memoryDriver() })),
    clock: fixedClock("2026-11-22T12:00:00Z"),
    ...overrides,
  };
}

export function testService(env: Record<string, string> = {}, overrides: Partial<ServicePorts> = {}) {
  const ports = memoryPorts(overrides);
  const config = parseConfig({ ...KEYS, ALLOWED_ORIGIN: "https://lab.example", ...env });
  return { app: createService(ports, config), ports, config };
}

export const dataHeaders = { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET };

export function stubVerifier(answer: Awaited<ReturnType<CaptchaVerifier["verify"]>>): CaptchaVerifier & {
  calls: { token: string; ip: string | undefined }[];
} {
  const calls: { token: string; ip: string | undefined }[] = [];
  return {
    calls,
    verify: async (token, ip) => {
      calls.push({ token, ip });
      return answer;
    },
  };
}
