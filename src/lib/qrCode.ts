/**
 * QR codes as SVG path data, with the `qr` package's encoder: the server's printed card and the
 * tablet's guardian stub draw the same modules, the tablet without any image address (its CSP allows
 * images from its own origin only, and an inline `<svg>` built from elements is no image source).
 */
import encodeQR from 'qr';

/** The quiet zone the standard asks around a symbol, in modules (ISO/IEC 18004 §5.3.8). */
const QUIET_MODULES = 4;

export interface QrSymbol {
  /** Modules on a side, the quiet zone included. */
  readonly size: number;
  /**
   * The dark modules as path data at one unit a module (`M x y h w v 1 h -w z` per run of a row), for
   * a `<path>` in a `viewBox="0 0 size size"`.
   */
  readonly path: string;
}

/**
 * The symbol of `text` at error-correction level M (15 %: a scratched or creased card still reads),
 * in the smallest version that holds it.
 */
export const qrSymbol = (text: string): QrSymbol => {
  const rows = encodeQR(text, 'raw', { ecc: 'medium', border: QUIET_MODULES });
  const parts: string[] = [];
  rows.forEach((row, y) => {
    let x = 0;
    while (x < row.length) {
      if (row[x] !== true) {
        x += 1;
        continue;
      }
      const start = x;
      while (row[x] === true) x += 1;
      parts.push(`M${start} ${y}h${x - start}v1h${start - x}z`);
    }
  });
  return { size: rows.length, path: parts.join('') };
};
