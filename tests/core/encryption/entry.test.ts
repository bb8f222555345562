/**
 * The ./encryption entry: an embedder who builds its own ports and service gets encryption at
 * rest by wrapping them, as `serve` does, and a wrong key is refused before any request.
 */
import { describe, expect, it } from "vitest";
import { createMemoryPorts, createService, parseConfig } from "../../../mod.ts";
import { CanaryError, checkCanaries, encryptPorts, keyringOf } from "../../../src/core/service/encryption.ts";
import { containsBytes, dataKey, keySetText } from "../../helpers/encryption.ts";
import { KEYS } from "../../helpers/service.ts";

const MARKER = "MARKER-entry-51d0";

describe("the ./encryption entry", () => {
  it("wraps an embedder's own ports: the stores hold no plaintext, the API reads it back, a wrong key is refused", async () => {
    const env = { ...KEYS, DATA_ENCRYPTION_KEYS: keySetText(dataKey("k1")) };
    const config = parseConfig(env);
    const raw = createMemoryPorts();
    const keyring = keyringOf(config);
    await checkCanaries(raw, keyring);
    const app = createService(encryptPorts(raw, keyring), config);
    const headers = { "X-Custom-Auth-Key": KEYS.R2_KEY_SECRET };
    const body = JSON.stringify({ caseNumber: "C-1", notes: MARKER });
    expect((await app.request("/data/u1/C-1/data.json", { method: "PUT", headers, body })).status).toBe(200);
    expect(await (await app.request("/data/u1/C-1/data.json", { headers })).text()).toBe(body);
    expect(containsBytes((await raw.data.get("u1/C-1/data.json"))!, new TextEncoder().encode(MARKER))).toBe(false);
    // Without the wrap, the same service stores plaintext: the entry is what encrypts.
    const plain = createMemoryPorts();
    await createService(plain, config).request("/data/u1/C-1/data.json", { method: "PUT", headers, body });
    expect(containsBytes((await plain.data.get("u1/C-1/data.json"))!, new TextEncoder().encode(MARKER))).toBe(true);
    await expect(checkCanaries(raw, keyringOf(parseConfig({ ...env, DATA_ENCRYPTION_KEYS: keySetText(dataKey("k1")) })))).rejects.toThrow(CanaryError);
  });
});
