/**
 * @module
 * Reading an image by a delivery URL of this very service without a network round trip: the
 * PDF worker mounted beside the image worker gets the signed URL the client just obtained,
 * often on a loopback or LAN address the fetch allow-list rightly refuses. The signature is
 * still checked, by the host that made it.
 */
import type { ImageHostFactory } from "../ports.ts";

/** The image bytes for a delivery URL of this service, or null when the URL is not one. */
export type OwnDeliveryReader = (imageUrl: string, requestUrl: string) => Promise<Response> | null;

/** A delivery path of the local image host: its mount, the image id and the variant. */
export const DELIVERY_PATH: RegExp = /^(.*)\/delivery\/([^/]+)\/([^/]+)$/;

/** A reader over the local image host, for URLs on the request's origin or `PUBLIC_URL`. */
export function ownDeliveryReader(host: ImageHostFactory, publicUrl: string | undefined): OwnDeliveryReader {
  const publicOrigin = publicUrl === undefined ? undefined : new URL(publicUrl).origin;
  return (imageUrl, requestUrl) => {
    let url: URL;
    try {
      url = new URL(imageUrl);
    } catch {
      return null;
    }
    if (url.origin !== new URL(requestUrl).origin && url.origin !== publicOrigin) return null;
    const match = DELIVERY_PATH.exec(url.pathname);
    if (match === null) return null;
    const served = host(`${url.origin}${match[1]}/delivery`);
    if (served.serve === undefined) return null;
    let imageId: string;
    let variant: string;
    try {
      imageId = decodeURIComponent(match[2]!);
      variant = decodeURIComponent(match[3]!);
    } catch {
      return null;
    }
    return served.serve(imageId, variant, url.searchParams, undefined);
  };
}
