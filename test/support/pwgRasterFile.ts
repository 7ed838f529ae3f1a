/**
 * Reads a PWG Raster document (PWG 5102.4) back to pages of grey pixels, written from the
 * specification's field table and line code, for the tests to measure what a printer kept and to
 * turn each page into a picture (and text, through OCR).
 */
export interface RasterPage {
  readonly width: number;
  readonly height: number;
  readonly dpi: number;
  /** PageSize, in points. */
  readonly pageSizePt: readonly [number, number];
  readonly bitsPerPixel: number;
  readonly pageSizeName: string;
  /** One byte per pixel, 0 black, 255 white. */
  readonly grey: Uint8Array;
}

const HEADER = 1796;

const cString = (b: Buffer, at: number): string => {
  const end = b.indexOf(0, at);
  return b.toString('ascii', at, end < 0 || end > at + 64 ? at + 64 : end);
};

export const readPwgRaster = (file: Buffer): RasterPage[] => {
  if (file.toString('ascii', 0, 4) !== 'RaS2') throw new Error('not a PWG Raster document');
  const pages: RasterPage[] = [];
  let at = 4;
  while (at < file.length) {
    const h = file.subarray(at, at + HEADER);
    if (h.length < HEADER || cString(h, 0) !== 'PwgRaster') throw new Error(`no page header at ${at}`);
    const width = h.readUInt32BE(372);
    const height = h.readUInt32BE(376);
    const bpp = h.readUInt32BE(388);
    const bytesPerLine = h.readUInt32BE(392);
    const unit = Math.max(1, bpp / 8);
    at += HEADER;
    const grey = new Uint8Array(width * height);
    let y = 0;
    while (y < height) {
      const repeat = (file[at] ?? 0) + 1;
      at += 1;
      const line = new Uint8Array(bytesPerLine);
      let x = 0;
      while (x < bytesPerLine) {
        const control = file[at] ?? 0;
        at += 1;
        if (control === 128) {
          line.fill(bpp === 1 ? 0 : 255, x);
          x = bytesPerLine;
        } else if (control < 128) {
          const unitBytes = file.subarray(at, at + unit);
          at += unit;
          for (let k = 0; k <= control; k += 1) {
            line.set(unitBytes, x);
            x += unit;
          }
        } else {
          const count = (257 - control) * unit;
          line.set(file.subarray(at, at + count), x);
          at += count;
          x += count;
        }
      }
      for (let r = 0; r < repeat && y < height; r += 1, y += 1) {
        for (let px = 0; px < width; px += 1) {
          grey[y * width + px] =
            bpp === 1 ? (((line[px >> 3] ?? 0) >> (7 - (px & 7))) & 1 ? 0 : 255) : (line[px] ?? 255);
        }
      }
    }
    pages.push({
      width,
      height,
      dpi: h.readUInt32BE(276),
      pageSizePt: [h.readUInt32BE(352), h.readUInt32BE(356)],
      bitsPerPixel: bpp,
      pageSizeName: cString(h, 1732),
      grey,
    });
  }
  return pages;
};
