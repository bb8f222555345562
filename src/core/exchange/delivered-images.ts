/**
 * @module
 * How an export reads an image's bytes when Cloudflare Images hosts them: through a signed
 * delivery URL of the host (the local host's images are read from its store directly).
 */
import type { ImagesConfig } from "../config/mod.ts";
import type { ImageHost } from "../ports.ts";

/**
 * Reads images through `host`'s signed delivery URLs for `IMAGE_HOST=cloudflare`; undefined for
 * the local host (the exchange store then reads `images/{id}` of the image store).
 */
export function deliveredImageReader(
  config: Pick<ImagesConfig, "imageHost" | "imageDeliveryHost" | "accountHash" | "imageUpstreamTimeoutMs">,
  host: ImageHost,
): ((imageId: string) => Promise<Uint8Array | null>) | undefined {
  if (config.imageHost !== "cloudflare") return undefined;
  return async (imageId) => {
    const signed = await host.signedUrl(`https://${config.imageDeliveryHost}/${config.accountHash ?? ""}/${encodeURIComponent(imageId)}/public`);
    const response = await fetch(signed, { signal: AbortSignal.timeout(config.imageUpstreamTimeoutMs) });
    if (response.status === 404) return null;
    if (!response.ok) throw new Error(`Image delivery answered HTTP ${response.status} for ${imageId}`);
    return new Uint8Array(await response.arrayBuffer());
  };
}
