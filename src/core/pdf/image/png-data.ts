/**
 * @module
 * Whether a PNG's compressed pixel data, which the report embeds as it is, really holds the
 * image its header describes: inflated as a stream and counted, never held, so a file with
 * sound chunks and garbage (or too little) data is refused instead of drawn broken. The
 * runtime's own zlib does the work (`DecompressionStream`), which also checks the Adler-32.
 */
import { ServiceError } from "../../errors.ts";

/** The PNG's image data does not inflate to what its header says; the message says how. */
export class UnreadablePngData extends ServiceError {
  /** @param problem what is wrong, phrased to follow "The image at imageUrl is not a readable PNG: ". */
  constructor(problem: string) {
    super("invalid", problem);
  }
}

/**
 * Inflates `zlibData` and checks that it yields exactly `size` bytes (the filtered rows of a
 * non-interlaced image: `height * (1 + bytes per row)`). Throws {@link UnreadablePngData}.
 */
export async function checkPngData(zlibData: Uint8Array, size: number): Promise<void> {
  const stream = new Blob([zlibData as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream("deflate"));
  const reader = stream.getReader();
  let length = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      length += value.length;
      if (length > size) {
        await reader.cancel().catch(() => {});
        throw new UnreadablePngData(`its image data holds more than the ${size} bytes its size and format need`);
      }
    }
  } catch (err) {
    if (err instanceof UnreadablePngData) throw err;
    // The runtime's zlib message is not for clients; where the stream broke is.
    throw new UnreadablePngData(`its image data is not valid zlib data (it breaks after ${length} of ${size} bytes)`);
  }
  if (length < size) throw new UnreadablePngData(`its image data holds ${length} bytes, but its size and format need ${size}`);
}
