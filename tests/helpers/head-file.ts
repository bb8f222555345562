/**
 * Reads an audit head file under `--data` as docs/storage.md#audit-heads-on-disk describes it,
 * independently of the store's code: two slots of half the file each, a slot being
 * `fa-head-slot {generation} {length} {crc32}\n` (hex) then the head's JSON; the current head
 * is the valid slot of the higher generation. A file in the whole form is the head's JSON itself.
 */
import { crc32 } from "../../src/core/encoding/crc32.ts";

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** One slot's generation and JSON text when its header and CRC-32 hold. */
export function headSlot(file: Uint8Array, slot: 0 | 1): { generation: number; text: string } | undefined {
  const at = slot * (file.length / 2);
  const header = decoder.decode(file.subarray(at, at + 48));
  const match = /^fa-head-slot ([0-9a-f]{16}) ([0-9a-f]{8}) ([0-9a-f]{8})\n$/.exec(header);
  if (match === null) return undefined;
  const body = file.subarray(at + 48, at + 48 + parseInt(match[2]!, 16));
  const crc = crc32(body, crc32(encoder.encode(`${match[1]} ${match[2]}`)));
  return crc === parseInt(match[3]!, 16) ? { generation: parseInt(match[1]!, 16), text: decoder.decode(body) } : undefined;
}

/** The current head's JSON text in a head file's bytes. */
export function headText(file: Uint8Array): string {
  if (decoder.decode(file.subarray(0, 13)) !== "fa-head-slot ") return decoder.decode(file);
  const slots = [headSlot(file, 0), headSlot(file, 1)].filter((slot) => slot !== undefined);
  if (slots.length === 0) throw new Error("neither slot of the head file is valid");
  return slots.sort((a, b) => b.generation - a.generation)[0]!.text;
}
