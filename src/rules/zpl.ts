/**
 * Labels as ZPL II (0051), for Zebra-type printers on raw TCP 9100. ZPL is text, and what it takes
 * here is a page size, a position, a font height and the field's data per line (`^PW`, `^LL`, `^FO`,
 * `^A0`, `^FD`): the lines `layOut` placed, converted to dots. Written by hand: the npm packages that
 * generate ZPL build the same commands from objects and would add a dependency for a dozen lines.
 *
 * The printer's resolution is not asked (raw TCP has no answer channel): 203 dpi, the common one; a
 * 300 dpi printer prints the label smaller, in the top left two thirds of it.
 */
import type { PlacedLabel, PlacedQr } from './labels.js';

export const ZPL_DPI = 203;

const dots = (pt: number): number => Math.round((pt * ZPL_DPI) / 72);

/**
 * Field data with `^FH_` on: `_` starts a hexadecimal escape, so the characters that would end or
 * start a command (`^`, `~`) and the escape character itself are written as hex, and a name can
 * never become a command. Text is UTF-8 (`^CI28`).
 */
export const zplField = (text: string): string =>
  text
    .replace(/[_^~\\]/g, (c) => `_${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`)
    .replace(/[\r\n]/g, ' ');

/** Characters of QR's alphanumeric mode a symbol of each version holds at error correction M. */
const QR_ALPHANUMERIC_M = [20, 38, 61, 90, 122, 154, 178, 221, 262, 311];

/** Modules on a side of the smallest symbol holding `text` at level M (ZPL picks the mode itself). */
const qrModules = (text: string): number => {
  const version = QR_ALPHANUMERIC_M.findIndex((n) => n >= text.length) + 1;
  return 17 + 4 * (version === 0 ? QR_ALPHANUMERIC_M.length : version);
};

/**
 * The family pass as a ZPL QR code (`^BQN,2,m`: model 2, `m` dots a module): as many dots a module as
 * fit the placed square with its quiet zone of four modules, at least 1 and at most ZPL's 10. `MA,`
 * asks level M and automatic input; the pass is base32 and colons, so no `^FH` escape is needed, and
 * anything else is left out rather than sent as commands.
 */
const zplQr = (qr: PlacedQr): string[] => {
  if (!/^[A-Z0-9:]+$/.test(qr.text)) return [];
  const modules = qrModules(qr.text);
  const magnification = Math.max(1, Math.min(10, Math.floor(dots(qr.sidePt) / (modules + 8))));
  const quiet = 4 * magnification;
  return [`^FO${dots(qr.x) + quiet},${dots(qr.y) + quiet}^BQN,2,${magnification}^FDMA,${qr.text}^FS`];
};

/** One label as one ZPL format (`^XA` … `^XZ`); a job is the formats one after another. */
export const zplOf = (label: PlacedLabel): string => {
  const fields = label.texts.map((t) => {
    const h = dots(t.sizePt);
    // ^FO places the field's top left corner; the baseline sits about a font height below it.
    const top = Math.max(0, dots(t.baseline - t.sizePt));
    return `^FO${dots(t.x)},${top}^A0N,${h},${h}^FH_^FD${zplField(t.text)}^FS`;
  });
  return [
    '^XA',
    '^CI28',
    `^PW${dots(label.widthPt)}`,
    `^LL${dots(label.heightPt)}`,
    '^LH0,0',
    ...fields,
    ...(label.qr === undefined ? [] : zplQr(label.qr)),
    '^XZ',
    '',
  ].join('\n');
};
