/**
 * The printable family pass (decision 0049): a card the size of a bank card (85.6 × 54 mm) with the
 * family's QR code, the guardian's first name and the children's first names, and nothing else
 * personal. SVG, or PNG at 300 dpi rendered from the same SVG by sharp (librsvg; the text needs a font
 * on the machine, which the Docker image installs).
 */
import sharp from 'sharp';
import type { FamilyPassFormat } from '../domain/familyPass.js';
import { qrSymbol } from '../lib/qrCode.js';

export interface CardText {
  readonly guardianName: string;
  readonly childrenNames: ReadonlyArray<string>;
}

/** Children named on the card one a line; more are counted on the last line. */
const MAX_CHILD_LINES = 5;
const MAX_NAME_CHARS = 22;

const escapeXml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) =>
    c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&apos;',
  );

const clip = (s: string): string => (s.length <= MAX_NAME_CHARS ? s : `${s.slice(0, MAX_NAME_CHARS - 1)}…`);

const px = (mm: number): number => Math.round((mm / MM_PER_INCH) * PNG_DPI);

const FONT = "font-family=\"'DejaVu Sans', 'Liberation Sans', Arial, Helvetica, sans-serif\"";

export const PNG_DPI = 300;
const MM_PER_INCH = 25.4;
const WIDTH_MM = 85.6;
const HEIGHT_MM = 54;

/**
 * The card as SVG text; `content` is the QR code's text. Units of the view box are 0.1 mm. `pixels`:
 * sized in pixels at `PNG_DPI` (what the PNG is rendered from), not in millimetres.
 */
export const familyPassSvg = (content: string, text: CardText, pixels = false): string => {
  const qr = qrSymbol(content);
  const qrSide = 440;
  const unit = qrSide / qr.size;
  const shown = text.childrenNames.slice(
    0,
    text.childrenNames.length > MAX_CHILD_LINES ? MAX_CHILD_LINES - 1 : MAX_CHILD_LINES,
  );
  const more = text.childrenNames.length - shown.length;
  const line = (y: number, size: number, body: string, weight = 'normal') =>
    `<text x="480" y="${y}" font-size="${size}" font-weight="${weight}" ${FONT}>${escapeXml(body)}</text>`;
  const children = [...shown.map(clip), ...(more > 0 ? [`+ ${more}`] : [])].map((name, i) =>
    line(300 + i * 38, 32, name),
  );
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" width="${pixels ? px(WIDTH_MM) : `${WIDTH_MM}mm`}" height="${pixels ? px(HEIGHT_MM) : `${HEIGHT_MM}mm`}" viewBox="0 0 856 540">`,
    '<title>Cartão da família</title>',
    '<rect x="2" y="2" width="852" height="536" rx="30" fill="#ffffff" stroke="#999999" stroke-width="2"/>',
    `<g transform="translate(20 50) scale(${unit.toFixed(4)})">`,
    `<path d="${qr.path}" fill="#000000" shape-rendering="crispEdges"/>`,
    '</g>',
    line(80, 30, 'Cartão da família', 'bold'),
    line(130, 22, 'Responsável'),
    line(175, 40, clip(text.guardianName), 'bold'),
    line(250, 22, 'Crianças'),
    ...children,
    line(490, 20, 'Para a entrada no totem.'),
    line(518, 20, 'Não serve para a saída.'),
    '</svg>',
    '',
  ].join('\n');
};

/** The card in the format asked for, as bytes and their media type. */
export const familyPassCard = async (
  content: string,
  text: CardText,
  format: FamilyPassFormat,
): Promise<{ readonly body: Uint8Array; readonly mediaType: 'image/svg+xml' | 'image/png' }> => {
  if (format === 'svg')
    return { body: new TextEncoder().encode(familyPassSvg(content, text)), mediaType: 'image/svg+xml' };
  // Drawn at its size in pixels, and the PNG says its resolution, so it prints at the card's size.
  const png = await sharp(Buffer.from(familyPassSvg(content, text, true), 'utf8'))
    .withMetadata({ density: PNG_DPI })
    .png()
    .toBuffer();
  return { body: new Uint8Array(png.buffer, png.byteOffset, png.byteLength), mediaType: 'image/png' };
};
