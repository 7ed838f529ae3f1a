/**
 * PWG Raster (PWG 5102.4), the one document format every IPP Everywhere printer takes: `RaS2`, then
 * per page a 1,796-byte header and the page's lines, compressed as the format requires (a line
 * repeat count, then runs of repeated pixels or of literal ones). Written by hand: no npm package
 * encodes it, and the format is a header of big-endian fields and a PackBits-like line code.
 *
 * Two colour spaces, those label printers list: `sgray_8` (8-bit grey, 255 white) and `black_1`
 * (1 bit per pixel, 1 black), thresholded at mid-grey.
 */
import { concatBytes, utf8Bytes, viewOf } from './bytes.js';
import type { GreyPage } from './render.js';

export type PwgType = 'sgray_8' | 'black_1';

const HEADER_BYTES = 1796;

// Colour spaces, as CUPS numbers them (cups_cspace_t): 3 black (K), 18 sGray.
const CSPACE_K = 3;
const CSPACE_SGRAY = 18;

const writeString = (buf: Uint8Array, offset: number, s: string): void => {
  buf.set(utf8Bytes(s).subarray(0, 63), offset);
};

const header = (page: GreyPage, type: PwgType, pageSizeName: string, totalPages: number): Uint8Array => {
  const bytes = new Uint8Array(HEADER_BYTES);
  const v = viewOf(bytes);
  const h = {
    writeUInt32BE: (n: number, at: number) => v.setUint32(at, n),
    writeInt32BE: (n: number, at: number) => v.setInt32(at, n),
  };
  const str = (at: number, s: string) => writeString(bytes, at, s);
  const bits = type === 'sgray_8' ? 8 : 1;
  const bytesPerLine = type === 'sgray_8' ? page.width : Math.ceil(page.width / 8);
  str(0, 'PwgRaster');
  str(64, ''); // MediaColor
  str(128, 'labels'); // MediaType
  str(192, ''); // PrintContentOptimize
  h.writeUInt32BE(0, 268); // CutMedia: the printer's default
  h.writeUInt32BE(0, 272); // Duplex
  h.writeUInt32BE(page.dpi, 276);
  h.writeUInt32BE(page.dpi, 280);
  h.writeUInt32BE(1, 340); // NumCopies
  h.writeUInt32BE(0, 344); // Orientation: portrait
  // PageSize in points.
  h.writeUInt32BE(Math.round((page.width * 72) / page.dpi), 352);
  h.writeUInt32BE(Math.round((page.height * 72) / page.dpi), 356);
  h.writeUInt32BE(page.width, 372);
  h.writeUInt32BE(page.height, 376);
  h.writeUInt32BE(bits, 384); // BitsPerColor
  h.writeUInt32BE(bits, 388); // BitsPerPixel
  h.writeUInt32BE(bytesPerLine, 392);
  h.writeUInt32BE(0, 396); // ColorOrder: chunky
  h.writeUInt32BE(type === 'sgray_8' ? CSPACE_SGRAY : CSPACE_K, 400);
  h.writeUInt32BE(1, 420); // NumColors
  h.writeUInt32BE(totalPages, 452);
  h.writeInt32BE(1, 456); // CrossFeedTransform
  h.writeInt32BE(1, 460); // FeedTransform
  h.writeUInt32BE(0, 464); // ImageBoxLeft
  h.writeUInt32BE(0, 468); // ImageBoxTop
  h.writeUInt32BE(page.width, 472);
  h.writeUInt32BE(page.height, 476);
  h.writeUInt32BE(0xffffff, 480); // AlternatePrimary: white
  h.writeUInt32BE(0, 484); // PrintQuality: default
  str(1668, ''); // RenderingIntent
  str(1732, pageSizeName);
  return bytes;
};

/** One line of the page in the colour space's bytes. */
const lineBytes = (page: GreyPage, y: number, type: PwgType): Uint8Array => {
  const row = page.pixels.subarray(y * page.width, (y + 1) * page.width);
  if (type === 'sgray_8') return row;
  const out = new Uint8Array(Math.ceil(page.width / 8));
  for (let x = 0; x < page.width; x += 1) {
    if ((row[x] ?? 255) < 128) out[x >> 3] = (out[x >> 3] ?? 0) | (0x80 >> (x & 7));
  }
  return out;
};

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return false;
  return true;
};

/**
 * A line's runs: a control byte 0–127 repeats the next byte (n + 1) times; 129–255 is followed by
 * (257 − n) literal bytes (the pixel unit is one byte in both colour spaces here).
 */
const encodeLine = (line: Uint8Array, out: number[]): void => {
  let i = 0;
  while (i < line.length) {
    let run = 1;
    while (i + run < line.length && run < 128 && line[i + run] === line[i]) run += 1;
    if (run >= 2) {
      out.push(run - 1, line[i] ?? 0);
      i += run;
      continue;
    }
    const start = i;
    let count = 0;
    while (i < line.length && count < 128) {
      if (i + 1 < line.length && line[i + 1] === line[i]) break;
      i += 1;
      count += 1;
    }
    out.push(257 - count);
    for (let k = start; k < start + count; k += 1) out.push(line[k] ?? 0);
  }
};

/** The pages as one PWG Raster document. */
export const pwgRaster = (
  pages: ReadonlyArray<GreyPage>,
  type: PwgType,
  pageSizeName: string,
): Uint8Array => {
  const parts: Uint8Array[] = [utf8Bytes('RaS2')];
  for (const page of pages) {
    parts.push(header(page, type, pageSizeName, pages.length));
    const body: number[] = [];
    let y = 0;
    while (y < page.height) {
      const line = lineBytes(page, y, type);
      let repeat = 1;
      while (y + repeat < page.height && repeat < 256 && sameBytes(lineBytes(page, y + repeat, type), line)) {
        repeat += 1;
      }
      body.push(repeat - 1);
      encodeLine(line, body);
      y += repeat;
    }
    parts.push(Uint8Array.from(body));
  }
  return concatBytes(parts);
};
