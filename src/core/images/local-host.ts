/**
 * @module
 * The embedded default image host (docs/api.md#image-worker): images in their own blob
 * store with their metadata, delivered by the image worker itself through signed URLs.
 */
import type { BlobStore, Clock, HostedImage, ImageHost, ImageUpload } from "../ports.ts";
import { joinStream } from "../storage/byte-stream.ts";
import { ServiceError } from "../errors.ts";
import { checkSegment, decodeSegment, storageKeys } from "../storage/keys.ts";
import { checkSignedUrl, signDeliveryUrl } from "./signed-url.ts";
import { type ImageMetadata, ImageMetadataSchema } from "../schemas/image.ts";
import { deletedImageKey, deletedImageMetadataKey } from "../history/mod.ts";

/** Options of {@link createLocalImageHost}. */
export interface LocalImageHostOptions {
  /** The image store (`images/{id}` and `images/{id}.json`). */
  store: BlobStore;
  /** `HMAC_KEY`; without it nothing can be signed or served. */
  signingKey: string | undefined;
  /** Absolute URL under which images are delivered, e.g. `https://lab.example/image/delivery`. */
  deliveryBase: string;
  /** The time uploads are dated and signed URLs expire from. */
  clock: Clock;
  /** Lifetime of a signed URL in seconds. */
  urlLifetimeSeconds: number;
  /**
   * `ACCOUNT_HASH` and `IMAGE_DELIVERY_HOST`: clients written for Cloudflare Images ask to
   * sign `https://{deliveryHost}/{accountHash}/{imageId}/{variant}`; such a URL names the
   * same image here and is answered with this service's own signed delivery URL.
   */
  cloudflareForm?: { accountHash: string | undefined; deliveryHost: string };
  /**
   * Record history (`DATA_HISTORY=on`): a deleted image's bytes and metadata are kept, as its
   * deletion mark, under `#history/images/{id}` and `#history/images/{id}.json` (the metadata
   * with `deleted: true` and `deletedAt`); the image itself is gone as before. Default false.
   */
  keepDeleted?: boolean;
}


/** An image's metadata is stored beside its bytes under this suffix (`images/{id}.json`). */
const METADATA_SUFFIX = ".json";

/** The variant every image has (the original bytes). */
export const PUBLIC_VARIANT = "public";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A host that keeps images itself and serves them on signed URLs. */
export type LocalImageHost = ImageHost & Required<Pick<ImageHost, "serve" | "uploadStream">>;

/** Creates the local image host. */
export function createLocalImageHost(options: LocalImageHostOptions): LocalImageHost {
  const base = new URL(options.deliveryBase.replace(/\/+$/, ""));
  const metadataKey = (id: string) => `${storageKeys.image(id)}${METADATA_SUFFIX}`;
  const deliveryUrl = (id: string, variant: string) => new URL(`${base.href}/${encodeURIComponent(id)}/${encodeURIComponent(variant)}`);
  const key = () => {
    if (options.signingKey === undefined) throw ServiceError.server("HMAC_KEY is not configured on this service");
    return options.signingKey;
  };
  const nowSeconds = () => Math.floor(options.clock.now().getTime() / 1000);

  /** The image and variant a delivery URL names: this service's own form or the Cloudflare form. */
  function deliveryTarget(requested: string): { id: string; variant: string } {
    let url: URL;
    try {
      url = new URL(requested);
    } catch {
      throw ServiceError.validation("Not a URL", { url: requested });
    }
    const cloudflare = options.cloudflareForm;
    if (cloudflare !== undefined && url.hostname === cloudflare.deliveryHost) return cloudflareTarget(url, requested, cloudflare);
    const prefix = `${base.pathname}/`;
    const rest = url.origin === base.origin && url.pathname.startsWith(prefix) ? url.pathname.slice(prefix.length) : null;
    const parts = rest?.split("/") ?? [];
    if (parts.length !== 2 || parts[1] !== PUBLIC_VARIANT) {
      const alsoCloudflare = cloudflare === undefined ? "" : ` or https://${cloudflare.deliveryHost}/{ACCOUNT_HASH}/{imageId}/{variant}`;
      throw ServiceError.validation(`Only delivery URLs of this service are signed: ${base.href}/{imageId}/${PUBLIC_VARIANT}${alsoCloudflare}`, {
        url: requested,
      });
    }
    return { id: decodeSegment(parts[0]!, "imageId"), variant: PUBLIC_VARIANT };
  }

  /** `https://{host}/{ACCOUNT_HASH}/{imageId}/{variant}`: the hash must be this deployment's. */
  function cloudflareTarget(
    url: URL,
    requested: string,
    form: { accountHash: string | undefined; deliveryHost: string },
  ): { id: string; variant: string } {
    const parts = url.pathname.split("/").slice(1);
    if (url.protocol !== "https:" || parts.length !== 3) {
      throw ServiceError.validation(`A Cloudflare-form delivery URL is https://${form.deliveryHost}/{ACCOUNT_HASH}/{imageId}/{variant}`, { url: requested });
    }
    if (form.accountHash === undefined) {
      throw ServiceError.validation("ACCOUNT_HASH is not configured on this service, so Cloudflare-form delivery URLs cannot be checked", { url: requested });
    }
    if (decodeSegment(parts[0]!, "accountHash") !== form.accountHash) {
      throw ServiceError.validation("The delivery URL names another account hash than this service's ACCOUNT_HASH", { url: requested });
    }
    return { id: decodeSegment(parts[1]!, "imageId"), variant: decodeSegment(parts[2]!, "variant") };
  }

  /** An image's bytes: streamed when the store can (an encrypted store opens a chunk at a time). */
  async function read(key: string): Promise<{ size: number; body: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> } | null> {
    if (options.store.getStream !== undefined) return options.store.getStream(key);
    const bytes = await options.store.get(key);
    return bytes === null ? null : { size: bytes.length, body: bytes };
  }

  async function metadata(id: string): Promise<ImageMetadata | null> {
    const stored = await options.store.get(metadataKey(id));
    if (stored === null) return null;
    return ImageMetadataSchema.parse(JSON.parse(decoder.decode(stored)));
  }

  /** Keeps an image's bytes, then its metadata marked deleted, before the image is removed. */
  async function keepAsDeleted(id: string): Promise<void> {
    const meta = await metadata(id);
    if (meta === null) return; // no image (or only bytes a failed deletion left): nothing to keep
    const stored = await read(storageKeys.image(id));
    if (stored !== null) {
      if (stored.body instanceof ReadableStream) {
        if (options.store.putStream !== undefined) await options.store.putStream(deletedImageKey(storageKeys.image(id)), stored.size, stored.body);
        else await options.store.put(deletedImageKey(storageKeys.image(id)), new Uint8Array(await new Response(stored.body).arrayBuffer()));
      } else {
        await options.store.put(deletedImageKey(storageKeys.image(id)), stored.body);
      }
    }
    const mark = { ...meta, deleted: true, deletedAt: options.clock.now().toISOString() };
    await options.store.put(deletedImageMetadataKey(storageKeys.image(id)), encoder.encode(JSON.stringify(mark)));
  }

  /** Stores an image's bytes with `write`, then its metadata: an image exists once its metadata does. */
  async function storeImage(image: Omit<ImageUpload, "bytes">, size: number, write: (key: string) => Promise<void>): Promise<HostedImage> {
    const id = crypto.randomUUID();
    const meta: ImageMetadata = {
      id,
      contentType: image.contentType,
      size,
      filename: image.filename,
      uploaded: options.clock.now().toISOString(),
      ...(image.owner !== undefined ? { owner: image.owner } : {}),
      ...(image.width !== undefined && image.height !== undefined ? { width: image.width, height: image.height } : {}),
    };
    await write(storageKeys.image(id));
    try {
      await options.store.put(metadataKey(id), encoder.encode(JSON.stringify(meta)));
    } catch (err) {
      // No metadata, no image: its bytes would lie in the store unreachable for good.
      await options.store.delete(storageKeys.image(id)).catch(() => false);
      throw err;
    }
    return { id, filename: meta.filename, uploaded: meta.uploaded, variants: [deliveryUrl(id, PUBLIC_VARIANT).href] };
  }

  return {
    upload: (image: ImageUpload) => storeImage(image, image.bytes.length, (key) => options.store.put(key, image.bytes)),

    // Piece by piece where the store writes streams (a file renamed into place); else joined first.
    uploadStream: (image) =>
      storeImage(image, image.size, async (key) =>
        options.store.putStream !== undefined ? await options.store.putStream(key, image.size, image.body) : await options.store.put(key, await joinStream(image.body, image.size))),

    async delete(imageId) {
      checkSegment(imageId, "imageId");
      // `X.json` is image X's metadata key, not an image: deleting "its" bytes would delete X's metadata.
      if (imageId.endsWith(METADATA_SUFFIX)) return false;
      if (options.keepDeleted === true) await keepAsDeleted(imageId);
      // Metadata first: the image is gone at once; bytes a failed attempt left go with the retry (404).
      const existed = await options.store.delete(metadataKey(imageId));
      await options.store.delete(storageKeys.image(imageId));
      return existed;
    },

    imageIdOf: (requested) => deliveryTarget(requested).id,

    async ownerOf(imageId) {
      const meta = await metadata(checkSegment(imageId, "imageId"));
      return meta === null ? null : meta.owner;
    },

    async signedUrl(requested) {
      const { id, variant } = deliveryTarget(requested);
      if ((await metadata(id)) === null) throw ServiceError.notFound("Image not found", { imageId: id });
      // Every variant is the original bytes; the signature covers the variant asked for.
      return signDeliveryUrl(deliveryUrl(id, variant), key(), nowSeconds() + options.urlLifetimeSeconds);
    },

    async serve(imageId, variant, query, ifNoneMatch) {
      const url = deliveryUrl(imageId, variant);
      for (const name of ["exp", "sig"]) {
        const value = query.get(name);
        if (value !== null) url.searchParams.set(name, value);
      }
      const refused = await checkSignedUrl(url, key(), nowSeconds());
      if (refused !== null) throw ServiceError.forbidden(`Signed URL refused: ${refused}`);
      checkSegment(imageId, "imageId");
      const meta = await metadata(imageId);
      const stored = meta === null ? null : await read(storageKeys.image(imageId));
      if (meta === null || stored === null) throw ServiceError.notFound("Image not found", { imageId });
      const expiresIn = Math.max(0, Number(query.get("exp")) - nowSeconds());
      // An id names one upload's bytes forever, so the id is a strong validator; hashing
      // 25 MB here would cost a third copy of the image (web crypto copies its input).
      const etag = `"${meta.id}"`;
      const headers = {
        "Content-Type": meta.contentType,
        "Cache-Control": `private, max-age=${expiresIn}`,
        ETag: etag,
        "X-Content-Type-Options": "nosniff",
      };
      if (ifNoneMatch !== undefined && matchesNoneMatch(ifNoneMatch, etag)) {
        if (stored.body instanceof ReadableStream) await stored.body.cancel();
        return new Response(null, { status: 304, headers });
      }
      return new Response(stored.body, { status: 200, headers: { ...headers, "Content-Length": String(stored.size) } });
    },
  };
}

/** Whether `If-None-Match` names `etag` (RFC 9110 13.1.2: weak comparison, so `W/` is ignored) or is `*`. */
function matchesNoneMatch(header: string, etag: string): boolean {
  return header.split(",").some((tag) => {
    const trimmed = tag.trim();
    return trimmed === "*" || trimmed === etag || trimmed === `W/${etag}`;
  });
}
