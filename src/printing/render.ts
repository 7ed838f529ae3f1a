/**
 * Labels drawn for a printer (0051): the lines `layOut` placed, as a PDF (pdf-lib), or as pixels
 * (resvg renders the same lines as SVG) that become PWG raster or JPEG. One font family everywhere,
 * DejaVu Sans from the `dejavu-fonts-ttf` package: it is measured once for the layout and embedded in
 * the PDF (subset), and the raster renderer loads the same files, so every format wraps the same
 * lines, whatever fonts the machine has (the service's image has none). DejaVu covers Latin,
 * Greek and Cyrillic names.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import fontkit from '@pdf-lib/fontkit';
import { Resvg } from '@resvg/resvg-js';
import { PDFDocument, type PDFFont, rgb, setCharacterSpacing } from 'pdf-lib';
import { qrSymbol } from '../lib/qrCode.js';
import type { FontStyle, Measure, PlacedLabel, PlacedQr } from '../rules/labels.js';

const fontDir = join(dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json')), 'ttf');

const FONT_FILES: Readonly<Record<FontStyle, string>> = {
  regular: join(fontDir, 'DejaVuSans.ttf'),
  bold: join(fontDir, 'DejaVuSans-Bold.ttf'),
  mono: join(fontDir, 'DejaVuSansMono-Bold.ttf'),
};

const SVG_FONTS: Readonly<Record<FontStyle, { family: string; weight: string }>> = {
  regular: { family: 'DejaVu Sans', weight: 'normal' },
  bold: { family: 'DejaVu Sans', weight: 'bold' },
  mono: { family: 'DejaVu Sans Mono', weight: 'bold' },
};

interface LoadedFont {
  readonly bytes: Uint8Array;
  readonly font: ReturnType<typeof fontkit.create>;
}

let loaded: Readonly<Record<FontStyle, LoadedFont>> | undefined;

/** Read once, when the first label is drawn (about 2 MB). */
const fonts = (): Readonly<Record<FontStyle, LoadedFont>> => {
  if (loaded === undefined) {
    const load = (style: FontStyle): LoadedFont => {
      const bytes = new Uint8Array(readFileSync(FONT_FILES[style]));
      return { bytes, font: fontkit.create(bytes) };
    };
    loaded = { regular: load('regular'), bold: load('bold'), mono: load('mono') };
  }
  return loaded;
};

/**
 * Widths in DejaVu's own metrics, as the PDF and the raster draw them: without kerning, which pdf-lib
 * does not apply when it draws (so the raster turns it off too, and every format sets the same line).
 */
export const measure: Measure = (text, sizePt, style) => {
  const { font } = fonts()[style];
  return (font.layout(text, { kern: false }).advanceWidth / font.unitsPerEm) * sizePt;
};

export interface Rendered {
  /** The document's MIME type, as IPP's `document-format` names it. */
  readonly format: string;
  readonly bytes: Uint8Array;
  readonly pages: number;
}

/** The QR code's modules as SVG path data, at `scale` points a module (the kiosk's stub draws the same). */
const qrPath = (qr: PlacedQr): { readonly path: string; readonly scale: number } => {
  const symbol = qrSymbol(qr.text);
  return { path: symbol.path, scale: qr.sidePt / symbol.size };
};

/** One page per label, each the label's size; the text embedded (a subset of the fonts). */
export const renderPdf = async (labels: ReadonlyArray<PlacedLabel>): Promise<Rendered> => {
  const doc = await PDFDocument.create();
  doc.registerFontkit(fontkit);
  doc.setTitle('Chamada labels');
  doc.setProducer('Chamada');
  doc.setCreator('Chamada');
  const f = fonts();
  const embedded: Record<FontStyle, PDFFont> = {
    regular: await doc.embedFont(f.regular.bytes, { subset: true }),
    bold: await doc.embedFont(f.bold.bytes, { subset: true }),
    mono: await doc.embedFont(f.mono.bytes, { subset: true }),
  };
  for (const label of labels) {
    const page = doc.addPage([label.widthPt, label.heightPt]);
    for (const t of label.texts) {
      const font = embedded[t.style];
      const y = label.heightPt - t.baseline;
      if (t.letterSpacing === undefined) {
        page.drawText(t.text, { x: t.x, y, size: t.sizePt, font, color: rgb(0, 0, 0) });
        continue;
      }
      // PDF's own character spacing (Tc): the code stays one string, as a reader extracts it.
      page.pushOperators(setCharacterSpacing(t.letterSpacing));
      page.drawText(t.text, { x: t.x, y, size: t.sizePt, font, color: rgb(0, 0, 0) });
      page.pushOperators(setCharacterSpacing(0));
    }
    if (label.qr !== undefined) {
      // drawSvgPath reads the path downwards from (x, y), as SVG does.
      const { path, scale } = qrPath(label.qr);
      page.drawSvgPath(path, {
        x: label.qr.x,
        y: label.heightPt - label.qr.y,
        scale,
        color: rgb(0, 0, 0),
        borderWidth: 0,
      });
    }
  }
  const bytes = await doc.save({ useObjectStreams: false });
  return { format: 'application/pdf', bytes, pages: labels.length };
};

const escapeXml = (s: string): string =>
  s.replace(
    /[<>&"']/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] ?? c,
  );

/** The label as SVG in points (the raster renderer scales it to the printer's resolution). */
export const svgOf = (label: PlacedLabel): string => {
  const texts = label.texts.map((t) => {
    const font = SVG_FONTS[t.style];
    const spacing = t.letterSpacing === undefined ? '' : ` letter-spacing="${t.letterSpacing.toFixed(2)}"`;
    return `<text x="${t.x.toFixed(2)}" y="${t.baseline.toFixed(2)}" font-family="${font.family}" font-weight="${font.weight}" font-size="${t.sizePt}" style="font-kerning:none"${spacing} xml:space="preserve">${escapeXml(t.text)}</text>`;
  });
  const qr =
    label.qr === undefined
      ? []
      : [
          ((q: PlacedQr) => {
            const { path, scale } = qrPath(q);
            return `<path transform="translate(${q.x.toFixed(2)} ${q.y.toFixed(2)}) scale(${scale.toFixed(4)})" d="${path}" fill="#000" shape-rendering="crispEdges"/>`;
          })(label.qr),
        ];
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${label.widthPt}pt" height="${label.heightPt}pt" viewBox="0 0 ${label.widthPt} ${label.heightPt}">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    ...texts,
    ...qr,
    '</svg>',
  ].join('');
};

/** A page of 8-bit grey pixels, one byte each, rows top to bottom (0 black, 255 white). */
export interface GreyPage {
  readonly width: number;
  readonly height: number;
  readonly dpi: number;
  readonly pixels: Uint8Array;
}

/** The label drawn at `dpi`, in grey. */
export const rasterise = (label: PlacedLabel, dpi: number): GreyPage => {
  const width = Math.round((label.widthPt * dpi) / 72);
  const rendered = new Resvg(svgOf(label), {
    font: {
      loadSystemFonts: false,
      fontFiles: Object.values(FONT_FILES),
      defaultFontFamily: 'DejaVu Sans',
    },
    fitTo: { mode: 'width', value: width },
    background: '#ffffff',
    shapeRendering: 1,
    textRendering: 1,
  }).render();
  const rgba = rendered.pixels;
  const pixels = new Uint8Array(rendered.width * rendered.height);
  for (let i = 0; i < pixels.length; i += 1) {
    // Rec. 601 luma of an opaque pixel (the background is white).
    const r = rgba[i * 4] ?? 255;
    const g = rgba[i * 4 + 1] ?? 255;
    const b = rgba[i * 4 + 2] ?? 255;
    pixels[i] = Math.round(0.299 * r + 0.587 * g + 0.114 * b);
  }
  return { width: rendered.width, height: rendered.height, dpi, pixels };
};
