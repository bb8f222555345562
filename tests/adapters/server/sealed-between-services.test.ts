/**
 * A sealed package between two running services with their own generated
 * EXCHANGE_DECRYPTION_KEY (docs/exchange.md#sealed-packages), through the typed client: the
 * analyst's service (serve on Node) seals a case for the reviewer's public key, the reviewer's
 * service (serve on Deno) imports it, and the analyst's own service refuses it, naming the
 * thumbprint it was sealed for.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { calculateJwkThumbprint, type JWK } from "jose";
import { createClient, ServiceClientError } from "../../../src/client/mod.ts";
import { createFilePorts } from "../../../src/adapters/server/files/file-ports.ts";
import { spawnServe, type Served } from "../../helpers/spawn-serve.ts";
import { KEYS } from "../../helpers/service.ts";
import { ANALYST, CASE, putUser, REVIEWER, seedCase } from "../../exchange/exchange-fixtures.ts";

let dir: string;
const running: Served[] = [];
let analyst: Served;
let reviewer: Served;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "fa-sealed-"));
  // The analyst's case, on files under the analyst's --data as serve would have stored it.
  const seeded = await seedCase();
  const files = createFilePorts(join(dir, "analyst"));
  for (const key of await seeded.ports.data.list("")) await files.data.put(key, (await seeded.ports.data.get(key))!);
  for (const key of await seeded.ports.images.list("")) await files.images.put(key, (await seeded.ports.images.get(key))!);
  for (const key of await seeded.ports.users.list("")) await files.users.put(key, (await seeded.ports.users.get(key))!);
  await putUser(createFilePorts(join(dir, "reviewer")), REVIEWER, ["REVIEWER-OWN-1"]);
  const env = { R2_KEY_SECRET: KEYS.R2_KEY_SECRET };
  [analyst, reviewer] = await Promise.all([
    spawnServe({ dataDir: join(dir, "analyst"), env }),
    spawnServe({ runtime: "deno", dataDir: join(dir, "reviewer"), env, timeoutMs: 60_000 }),
  ]);
  running.push(analyst, reviewer);
}, 90_000);

afterAll(async () => {
  while (running.length) await running.pop()!.stop("SIGKILL");
  await rm(dir, { recursive: true, force: true });
});

describe("a sealed package between two services (serve on Node and on Deno)", () => {
  it("the analyst's service seals for the reviewer's key; only the reviewer's service imports it", async () => {
    const analystClient = createClient({ baseUrl: analyst.url, dataKey: KEYS.R2_KEY_SECRET });
    const reviewerClient = createClient({ baseUrl: reviewer.url, dataKey: KEYS.R2_KEY_SECRET });

    // Each service generated its own key; the reviewer's public half is served without a credential.
    const generated = JSON.parse(JSON.parse(await readFile(join(dir, "reviewer", "secrets.json"), "utf8")).EXCHANGE_DECRYPTION_KEY) as JWK;
    const keys = await createClient({ baseUrl: reviewer.url }).exchange.keys();
    const recipient = keys.keys.find((key) => (key as { use?: string }).use === "enc")!;
    const thumbprint = await calculateJwkThumbprint(generated);
    expect(recipient).toEqual({ kty: "EC", crv: "P-256", x: generated.x, y: generated.y, kid: thumbprint, alg: "ECDH-ES+A256KW", use: "enc" });
    expect(reviewer.output()).not.toContain(generated.d);

    const sealed = await analystClient.exchange.exportSealedCase(ANALYST, CASE, recipient);
    expect(sealed.fileName).toMatch(new RegExp(`^${CASE}-export-\\d{8}\\.sealed$`));
    expect(sealed.contentType).toBe("application/octet-stream");
    const bytes = await sealed.bytes();
    expect(new TextDecoder().decode(bytes.subarray(0, 8))).toBe("FASEALED");

    const refused = await analystClient.exchange.importCase(ANALYST, bytes).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ServiceClientError);
    expect(refused).toMatchObject({ status: 400, code: "VALIDATION_ERROR", error: { details: { sealedFor: thumbprint } } });
    expect((refused as ServiceClientError).message).toContain(`it was sealed for the key ${thumbprint}`);

    const result = await reviewerClient.exchange.importCase(REVIEWER, new Blob([bytes as BlobPart]).stream(), { fileName: sealed.fileName });
    expect(result).toMatchObject({ success: true, caseNumber: CASE, filesImported: 3, isReadOnly: true });
  }, 60_000);
});
