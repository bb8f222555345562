import { afterAll, beforeAll } from "vitest";
import { Miniflare } from "miniflare";
import type { KVNamespaceLike, R2BucketLike, R2ObjectLike } from "../../src/adapters/cloudflare/bindings.ts";

/**
 * A worker that does each binding call a test asks of it over HTTP, on the real workerd's R2 and
 * KV. Not Miniflare's binding proxy (`getR2Bucket`): the first call of each method of each
 * object it hands out is synchronous (a worker thread and `Atomics.wait`), and under load its
 * `SynchronousFetcher` read an answer before it had arrived (`assert(message?.id === id)`),
 * after which every call of the file failed (three CI runs of 2026-12-02).
 */
const BINDINGS_WORKER = `
const meta = (object) => (object === null ? null : { key: object.key, etag: object.etag });
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const [, kind, name, op] = url.pathname.split("/");
    const key = url.searchParams.get("key");
    const options = JSON.parse(url.searchParams.get("options") ?? "null") ?? undefined;
    const binding = env[name];
    if (kind === "r2") {
      if (op === "get") {
        const object = await binding.get(key);
        return object === null ? new Response(null, { status: 404 }) : new Response(object.body, { headers: { "x-etag": object.etag } });
      }
      if (op === "head") return Response.json(meta(await binding.head(key)));
      if (op === "put") return Response.json(meta(await binding.put(key, await request.arrayBuffer(), options)));
      if (op === "delete") return Response.json((await binding.delete(options)) ?? null);
      if (op === "list") {
        const page = await binding.list(options);
        return Response.json({ objects: page.objects.map(meta), truncated: page.truncated, cursor: page.truncated ? page.cursor : undefined });
      }
    }
    if (kind === "kv") {
      if (op === "get") {
        const value = await binding.get(key, "text");
        return value === null ? new Response(null, { status: 404 }) : new Response(value);
      }
      if (op === "put") return Response.json((await binding.put(key, await request.text())) ?? null);
      if (op === "delete") return Response.json((await binding.delete(key)) ?? null);
      if (op === "list") return Response.json(await binding.list(options));
    }
    return new Response("no such call", { status: 400 });
  },
};`;

/** The bytes of what a test puts: R2's `put` takes these forms. */
async function bytesOf(value: ArrayBuffer | ArrayBufferView | string | ReadableStream | null): Promise<Uint8Array> {
  if (value === null) return new Uint8Array();
  if (typeof value === "string") return new TextEncoder().encode(value);
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  return new Uint8Array(await new Response(value).arrayBuffer());
}

/**
 * The real workerd's R2 buckets and KV namespaces (through a worker in the same Miniflare) for
 * the calling test file: started before its tests, disposed of after them. Each call of `bucket`
 * or `namespace` hands out one not handed out before, so cases share nothing.
 */
export function useWorkerdBindings(counts: { buckets: number; namespaces?: number }): {
  bucket(): Promise<R2BucketLike>;
  namespace(): Promise<KVNamespaceLike>;
} {
  const buckets = Array.from({ length: counts.buckets }, (_, i) => `BUCKET_${i}`);
  const namespaces = Array.from({ length: counts.namespaces ?? 0 }, (_, i) => `KV_${i}`);
  let mf: Miniflare | undefined;
  let nextBucket = 0;
  let nextNamespace = 0;
  beforeAll(async () => {
    mf = new Miniflare({ modules: true, script: BINDINGS_WORKER, compatibilityDate: "2026-04-01", r2Buckets: buckets, kvNamespaces: namespaces });
    await mf.ready;
  }, 60_000);
  afterAll(async () => {
    await mf?.dispose();
  });
  /** One binding call; throws on anything but an answer of the worker. */
  const call = async (path: string, query: Record<string, unknown>, body?: Uint8Array | string): Promise<Response> => {
    const url = new URL(`http://bindings${path}`);
    // The key as it is; options as JSON.
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, name === "key" ? String(value) : JSON.stringify(value));
    const response = await mf!.dispatchFetch(url, body === undefined ? {} : { method: "POST", body });
    if (response.status !== 200 && response.status !== 404) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`);
    return response as unknown as Response;
  };
  const json = async <T>(path: string, query: Record<string, unknown>, body?: Uint8Array | string): Promise<T> => (await (await call(path, query, body)).json()) as T;
  return {
    bucket: async (): Promise<R2BucketLike> => {
      const name = buckets[nextBucket++]!;
      return {
        async get(key) {
          const response = await call(`/r2/${name}/get`, { key });
          if (response.status === 404) return null;
          const bytes = await response.arrayBuffer();
          return { key, etag: response.headers.get("x-etag")!, arrayBuffer: async () => bytes };
        },
        head: (key) => json<R2ObjectLike | null>(`/r2/${name}/head`, { key }),
        put: async (key, value, options) => json<R2ObjectLike | null>(`/r2/${name}/put`, { key, options }, await bytesOf(value)),
        delete: async (keys) => void (await json(`/r2/${name}/delete`, { options: keys })),
        list: (options) => json(`/r2/${name}/list`, { options }),
      };
    },
    namespace: async (): Promise<KVNamespaceLike> => {
      const name = namespaces[nextNamespace++]!;
      return {
        async get(key) {
          const response = await call(`/kv/${name}/get`, { key });
          return response.status === 404 ? null : await response.text();
        },
        put: async (key, value) => void (await json(`/kv/${name}/put`, { key }, value)),
        delete: async (key) => void (await json(`/kv/${name}/delete`, { key })),
        list: (options) => json(`/kv/${name}/list`, { options }),
      };
    },
  };
}
