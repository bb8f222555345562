/**
 * @module
 * The geometry of the report page (docs/report.md "Page layout"): the image fitted into a
 * column with its aspect ratio kept, and boxes placed in percent of the drawn image
 * rectangle. The page's sizes are in `report-style.ts`. PDF coordinates: points, origin
 * bottom-left.
 */

/** A rectangle in PDF coordinates (`y` is its bottom edge). */
export interface Rect {
  /** Left edge. */
  x: number;
  /** Bottom edge. */
  y: number;
  /** Width. */
  width: number;
  /** Height. */
  height: number;
}

/**
 * The image's rectangle: as wide as `maxWidth` allows and no taller than `maxHeight`, aspect
 * ratio kept, centred horizontally in the column at `left`, its top edge at `top`.
 */
export function fitImage(
  pixels: { width: number; height: number },
  column: { left: number; top: number; maxWidth: number; maxHeight: number },
): Rect {
  const scale = Math.min(column.maxWidth / pixels.width, column.maxHeight / pixels.height);
  const width = pixels.width * scale;
  const height = pixels.height * scale;
  return { x: column.left + (column.maxWidth - width) / 2, y: column.top - height, width, height };
}

/** A box given in percent of the image (x, y from its top-left corner), clamped to the image. */
export interface PercentBox {
  /** Left edge, percent of the image width. */
  x: number;
  /** Top edge, percent of the image height, from the top. */
  y: number;
  /** Width, percent of the image width. */
  width: number;
  /** Height, percent of the image height. */
  height: number;
}

/** Where a box lies on the drawn image: percentages of `image`, clipped to its edges. */
export function boxRect(image: Rect, box: PercentBox): Rect {
  const left = Math.min(box.x, 100);
  const right = Math.min(box.x + box.width, 100);
  const top = Math.min(box.y, 100);
  const bottom = Math.min(box.y + box.height, 100);
  return {
    x: image.x + (image.width * left) / 100,
    y: image.y + image.height - (image.height * bottom) / 100,
    width: (image.width * (right - left)) / 100,
    height: (image.height * (bottom - top)) / 100,
  };
}
