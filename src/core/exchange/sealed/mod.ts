/**
 * @module
 * Sealed packages (docs/exchange.md#sealed-packages): a case's ZIP encrypted for one
 * recipient's public key, streamed both ways in authenticated chunks.
 *
 * @example
 * ```ts
 * import { openingKeyOf, openSealedPackage, recipientKeyOf, sealPackage } from "@forensic-annotation/service/exchange";
 *
 * const keys = await (await fetch("https://reviewer.example/exchange/keys")).json();
 * const recipient = await recipientKeyOf(keys.keys.find((key: { use?: string }) => key.use === "enc"));
 * const sealed = await sealPackage(zipStream, recipient);
 * // ...and at the reviewer's side, with its EXCHANGE_DECRYPTION_KEY:
 * const opened = await openSealedPackage(sealed, await openingKeyOf(privateJwk));
 * const zip = new Uint8Array(await new Response(opened.body).arrayBuffer());
 * ```
 */
export { isSealedPackage, type SealedHeader } from "./sealed-format.ts";
export { type OpeningKey, openingKeyOf, type RecipientKey, recipientKeyOf, type SealingAlgorithm } from "./sealing-keys.ts";
export { sealPackage, type SealOptions } from "./seal.ts";
export { type OpenedPackage, openSealedPackage } from "./open.ts";
