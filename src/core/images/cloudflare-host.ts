/**
 * @module
 * Cloudflare Images as the image host: uploads and deletions through its API with the
 * upstream token (`CF_IMAGES_TOKEN`, never the token clients hold), delivery URLs on
 * `imagedelivery.net` signed with the account's signing key as Cloudflare documents.
 * Upstream refusals pass through with their status and body.
 */
import type { Clock, HostedImage, ImageHost, ImageUpload } from "../ports.ts";
import { ServiceError } from "../errors.ts";
import { fetchRefusingRedirects } from "../outbound/no-redirects.ts";
import { checkSegment, decodeSegment } from "../storage/keys.ts";
import { ImageUploadResponseSchema } from "../schemas/image.ts";
import { signDeliveryUrl } from "./signed-url.ts";
import { UpstreamError } from "./upstream-error.ts";

/** Options of {@link createCloudflareImageHost}. */
export interface CloudflareImageHostOptions {
  /** API base, default `https://api.cloudflare.com/client/v4` (tests point it at a local server). */
  apiBase: string;
  /** `CF_ACCOUNT_ID`: the upstream account. */
  accountId: string | undefined;
  /** `CF_IMAGES_TOKEN`: the upstream API token, never the one clients hold. */
  apiToken: string | undefined;
  /** `ACCOUNT_HASH`: the first path segment of delivery URLs. */
  accountHash: string | undefined;
  /** `HMAC_KEY`: the Images URL signing key. */
  signingKey: string | undefined;
  /** Delivery host, default `imagedelivery.net`. */
  deliveryHost: string;
  /** The time signed URLs expire from. */
  clock: Clock;
  /** Lifetime of a signed URL in seconds. */
  urlLifetimeSeconds: number;
  /** How long one upstream call may take. */
  timeoutMs: number;
  /** The fetch to call the API with (default: the global one). */
  fetch?: typeof fetch;
}

function required(value: string | undefined, name: string): string {
  if (value === undefined) throw ServiceError.server(`${name} is not configured on this service`);
  return value;
}

/** Creates the Cloudflare Images host. */
export function createCloudflareImageHost(options: CloudflareImageHostOptions): ImageHost {
  const doFetch = options.fetch ?? fetch;
  const imagesUrl = (suffix = "") =>
    `${options.apiBase.replace(/\/$/, "")}/accounts/${encodeURIComponent(required(options.accountId, "CF_ACCOUNT_ID"))}/images/v1${suffix}`;

  async function call(url: string, init: RequestInit): Promise<{ status: number; body: unknown }> {
    let response: Response;
    try {
      response = await fetchRefusingRedirects(doFetch, url, {
        ...init,
        headers: { Authorization: `Bearer ${required(options.apiToken, "CF_IMAGES_TOKEN")}` },
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (err) {
      if (err instanceof ServiceError) throw err;
      throw ServiceError.server("Cloudflare Images could not be reached");
    }
    const body: unknown = await response.json().catch(() => null);
    return { status: response.status, body };
  }

  /** The parts of a delivery URL of this account; any other URL is a 400. */
  function deliveryParts(requested: string): { url: URL; imageId: string } {
    let url: URL;
    try {
      url = new URL(requested);
    } catch {
      throw ServiceError.validation("Not a URL", { url: requested });
    }
    const hash = required(options.accountHash, "ACCOUNT_HASH");
    const parts = url.pathname.split("/").slice(1);
    if (url.protocol !== "https:" || url.hostname !== options.deliveryHost || parts.length !== 3 || parts[0] !== hash) {
      throw ServiceError.validation(`Only delivery URLs of this account are signed: https://${options.deliveryHost}/${hash}/{imageId}/{variant}`, {
        url: requested,
      });
    }
    const imageId = decodeSegment(parts[1]!, "imageId");
    decodeSegment(parts[2]!, "variant");
    return { url, imageId };
  }

  return {
    async upload(image: ImageUpload): Promise<HostedImage> {
      const form = new FormData();
      form.set("file", new Blob([image.bytes], { type: image.contentType }), image.filename);
      form.set("requireSignedURLs", "true");
      // Cloudflare keeps this metadata with the image (at most 1024 bytes): the owner and the size read from the header.
      const metadata = {
        ...(image.owner !== undefined ? { owner: image.owner } : {}),
        ...(image.width !== undefined && image.height !== undefined ? { width: image.width, height: image.height } : {}),
      };
      if (Object.keys(metadata).length > 0) form.set("metadata", JSON.stringify(metadata));
      const { status, body } = await call(imagesUrl(), { method: "POST", body: form });
      const parsed = ImageUploadResponseSchema.safeParse(body);
      if (status !== 200 || !parsed.success || !parsed.data.success) {
        if (body !== null && typeof body === "object") throw new UpstreamError(status === 200 ? 502 : status, body);
        throw ServiceError.server(`Cloudflare Images answered HTTP ${status} without a usable body`);
      }
      const { id, filename, uploaded, variants } = parsed.data.result;
      return { id, filename, uploaded, variants };
    },

    async delete(imageId) {
      checkSegment(imageId, "imageId");
      const { status, body } = await call(imagesUrl(`/${encodeURIComponent(imageId)}`), { method: "DELETE" });
      if (status === 404) return false;
      if (status !== 200) throw new UpstreamError(status, body ?? {});
      return true;
    },

    imageIdOf: (requested) => deliveryParts(requested).imageId,

    async ownerOf(imageId) {
      checkSegment(imageId, "imageId");
      const { status, body } = await call(imagesUrl(`/${encodeURIComponent(imageId)}`), { method: "GET" });
      if (status === 404) return null;
      if (status !== 200) throw new UpstreamError(status, body ?? {});
      const owner: unknown = (body as { result?: { meta?: { owner?: unknown } } } | null)?.result?.meta?.owner;
      return typeof owner === "string" ? owner : undefined;
    },

    async signedUrl(requested) {
      const { url } = deliveryParts(requested);
      const expires = Math.floor(options.clock.now().getTime() / 1000) + options.urlLifetimeSeconds;
      return await signDeliveryUrl(new URL(`${url.origin}${url.pathname}`), required(options.signingKey, "HMAC_KEY"), expires);
    },
  };
}
