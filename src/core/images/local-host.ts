/**
 * @module
 * The embedded default image host (CONTRACT "Hosted images"): images in their own blob
 * store with their metadata, delivered by the image worker itself through signed URLs.
 */
import type { BlobStore, Clock, HostedImage, ImageHost, ImageUpload } from "../ports.ts";
import { ServiceError } from "../http/errors.ts";
import { checkSegment, decodeSegment, storageKeys } from "../storage/keys.ts";
import { checkSignedUrl, signDeliveryUrl } from "./signed-url.ts";
import { type ImageMetadata, ImageMetadataSchema } from "../schemas/image.ts";

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
}

/** The variant every image has (the original bytes). */
export const PUBLIC_VARIANT = "public";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A host that keeps images itself and serves them on signed URLs. */
export type LocalImageHost = ImageHost & Required<Pick<ImageHost, "serve">>;

/** Creates the local image host. */
export function createLocalImageHost(options: LocalImageHostOptions): LocalImageHost {
  const base = new URL(options.deliveryBase.replace(/\/+$/, ""));
  const metadataKey = (id: string) => `${storageKeys.image(id)}.json`;
  const deliveryUrl = (id: string, variant: string) => new URL(`${base.href}/${encodeURIComponent(id)}/${variant}`);
  const key = () => {
    if (options.signingKey === undefined) throw ServiceError.server("HMAC_KEY is not configured on this service");
    return options.signingKey;
  };
  const nowSeconds = () => Math.floor(options.clock.now().getTime() / 1000);

  /** The id of a delivery URL of this service; any other URL is a 400. */
  function imageIdOf(requested: string): string {
    let url: URL;
    try {
      url = new URL(requested);
    } catch {
      throw ServiceError.validation("Not a URL", { url: requested });
    }
    const prefix = `${base.pathname}/`;
    const rest = url.origin === base.origin && url.pathname.startsWith(prefix) ? url.pathname.slice(prefix.length) : null;
    const parts = rest?.split("/") ?? [];
    if (parts.length !== 2 || parts[1] !== PUBLIC_VARIANT) {
      throw ServiceError.validation(`Only delivery URLs of this service are signed: ${base.href}/{imageId}/${PUBLIC_VARIANT}`, {
        url: requested,
      });
    }
    return decodeSegment(parts[0]!, "imageId");
  }

  async function metadata(id: string): Promise<ImageMetadata | null> {
    const stored = await options.store.get(metadataKey(id));
    if (stored === null) return null;
    return ImageMetadataSchema.parse(JSON.parse(decoder.decode(stored)));
  }

  return {
    async upload(image: ImageUpload): Promise<HostedImage> {
      const id = crypto.randomUUID();
      const meta: ImageMetadata = {
        id,
        contentType: image.contentType,
        size: image.bytes.length,
        filename: image.filename,
        uploaded: options.clock.now().toISOString(),
        ...(image.owner !== undefined ? { owner: image.owner } : {}),
      };
      // Bytes first, metadata last: an image exists once its metadata does.
      await options.store.put(storageKeys.image(id), image.bytes);
      await options.store.put(metadataKey(id), encoder.encode(JSON.stringify(meta)));
      return { id, filename: meta.filename, uploaded: meta.uploaded, variants: [deliveryUrl(id, PUBLIC_VARIANT).href] };
    },

    async delete(imageId) {
      checkSegment(imageId, "imageId");
      const existed = await options.store.delete(metadataKey(imageId));
      await options.store.delete(storageKeys.image(imageId));
      return existed;
    },

    imageIdOf,

    async ownerOf(imageId) {
      const meta = await metadata(checkSegment(imageId, "imageId"));
      return meta === null ? null : meta.owner;
    },

    async signedUrl(requested) {
      const id = imageIdOf(requested);
      if ((await metadata(id)) === null) throw ServiceError.notFound("Image not found", { imageId: id });
      return signDeliveryUrl(deliveryUrl(id, PUBLIC_VARIANT), key(), nowSeconds() + options.urlLifetimeSeconds);
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
      const bytes = meta === null ? null : await options.store.get(storageKeys.image(imageId));
      if (meta === null || bytes === null) throw ServiceError.notFound("Image not found", { imageId });
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
      if (ifNoneMatch !== undefined && ifNoneMatch.split(",").some((tag) => tag.trim() === etag)) {
        return new Response(null, { status: 304, headers });
      }
      return new Response(bytes, { status: 200, headers: { ...headers, "Content-Length": String(bytes.length) } });
    },
  };
}
