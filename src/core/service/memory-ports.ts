/**
 * @module
 * Every store in memory (unstorage's memory driver): for tests, demos and embedding.
 * Nothing survives the process.
 */
import { createStorage } from "unstorage";
import { createBlobStore, createKvStore } from "../storage/unstorage-stores.ts";
import { type Clock, systemClock } from "../ports.ts";
import type { ServicePorts } from "./service.ts";

/** Ports whose stores live in this process's memory. */
export function createMemoryPorts(clock: Clock = systemClock): ServicePorts {
  return {
    data: createBlobStore(createStorage(), { soleWriter: true }),
    audit: createBlobStore(createStorage()),
    images: createBlobStore(createStorage()),
    outbox: createBlobStore(createStorage()),
    users: createKvStore(createStorage()),
    clock,
  };
}
