import { describe } from "vitest";
import { memoryPorts } from "../../helpers/service.ts";
import type { ServicePorts } from "../../../src/core/service/service.ts";
import { encryptionSuite } from "../../storage/encryption-suite.ts";

// The memory driver holds what it was given; reading every key back raw is reading the backend.
async function dump(ports: ServicePorts): Promise<Uint8Array[]> {
  const values: Uint8Array[] = [];
  for (const store of [ports.data, ports.audit, ports.images]) {
    for (const key of await store.list("")) values.push((await store.get(key))!);
  }
  for (const key of await ports.users.list("")) values.push(new TextEncoder().encode((await ports.users.get(key))!));
  return values;
}

describe("encryption at rest on memory", () => {
  encryptionSuite("memory", { ports: async () => memoryPorts(), dump });
});
