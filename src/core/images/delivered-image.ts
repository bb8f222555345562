/**
 * @module
 * Which image a delivery URL names, so that a report prints a review signature only over the
 * image it was given for: a delivery URL of this service's local host (on the request's origin or
 * `PUBLIC_URL`), or a Cloudflare Images delivery URL of this account. Any other URL (a `data:`
 * URL, another host) names none. Either kind is read only with a valid signature, checked by the
 * host that made it, so the image printed is the one named.
 */
import type { ServiceConfig } from "../config/mod.ts";
import { DELIVERY_PATH } from "./own-delivery.ts";

/** The id of the image `imageUrl` delivers from this service's image host, or null when it names none. */
export function deliveredImageId(
  imageUrl: string,
  requestUrl: string,
  config: Pick<ServiceConfig, "publicUrl" | "imageDeliveryHost" | "accountHash">,
): string | null {
  let url: URL;
  try {
    url = new URL(imageUrl);
  } catch {
    return null;
  }
  let segment: string | undefined;
  const parts = url.pathname.split("/").slice(1);
  if (url.protocol === "https:" && url.hostname === config.imageDeliveryHost && config.accountHash !== undefined && parts.length === 3 && parts[0] === config.accountHash) {
    segment = parts[1];
  } else if (url.origin === new URL(requestUrl).origin || (config.publicUrl !== undefined && url.origin === new URL(config.publicUrl).origin)) {
    segment = DELIVERY_PATH.exec(url.pathname)?.[2];
  }
  if (segment === undefined) return null;
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
