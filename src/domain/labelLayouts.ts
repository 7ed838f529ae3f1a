/**
 * The label layouts, by printer (decision 0028), one definition for the kiosk's print styles and the
 * server's print jobs (0051): a sheet (any printer, the browser's page), a Brother QL with 62 mm
 * continuous tape (cut at 100 mm), a Dymo 30252 address label (2.25 × 1.25 in) and a 4 × 6 in
 * shipping label (Zebra and the like).
 *
 * Sizes and type sizes are those of the kiosk's `@page` rules and custom properties
 * (`src/kiosk/app/styles.css`), so a label the server renders has the proportions of the one the
 * browser prints; a change to one is a change to both.
 */
import * as t from 'io-ts';

export const LABEL_LAYOUTS = ['sheet', 'brother62', 'dymo30252', 'label4x6'] as const;
export type LabelLayout = (typeof LABEL_LAYOUTS)[number];
export const isLabelLayout = (s: unknown): s is LabelLayout => LABEL_LAYOUTS.some((l) => l === s);

/** The layouts with a page of their own: a label printer's. The sheet is whatever page the browser has. */
export const PRINTER_LAYOUTS = ['brother62', 'dymo30252', 'label4x6'] as const;
export type PrinterLayout = (typeof PRINTER_LAYOUTS)[number];

export const PrinterLayoutC = t.keyof(
  Object.fromEntries(PRINTER_LAYOUTS.map((l) => [l, null])) as Record<PrinterLayout, null>,
);

/** Type sizes in points, by the role of the line on the label. */
export interface LabelTypeSizes {
  readonly when: number;
  readonly name: number;
  readonly class: number;
  readonly allergy: number;
  readonly code: number;
  readonly stubName: number;
  readonly stubCode: number;
}

export interface LabelPage {
  /** The page, in millimetres (portrait: the width is the printer's print width). */
  readonly widthMm: number;
  readonly heightMm: number;
  /** The blank margin kept on each side, in millimetres. */
  readonly paddingXMm: number;
  readonly paddingYMm: number;
  readonly sizes: LabelTypeSizes;
  /** A label too small for captions drops them (the code's caption, the stub's hint). */
  readonly captions: boolean;
  /**
   * The family pass's QR code on the guardian's stub (0049), its side in millimetres with the quiet
   * zone: under the children on upright labels, beside them on the Dymo's wide, low one (the kiosk's
   * `--stub-qr`).
   */
  readonly stubQr: { readonly sideMm: number; readonly beside: boolean };
}

const MM_PER_INCH = 25.4;

export const LABEL_PAGES: Readonly<Record<PrinterLayout, LabelPage>> = {
  brother62: {
    widthMm: 62,
    heightMm: 100,
    paddingXMm: 3.5,
    paddingYMm: 3,
    sizes: { when: 8, name: 20, class: 11, allergy: 13, code: 20, stubName: 12, stubCode: 13 },
    captions: true,
    stubQr: { sideMm: 28, beside: false },
  },
  dymo30252: {
    widthMm: 2.25 * MM_PER_INCH,
    heightMm: 1.25 * MM_PER_INCH,
    paddingXMm: 2,
    paddingYMm: 1.2,
    sizes: { when: 5.5, name: 12, class: 6.5, allergy: 7.5, code: 12, stubName: 7, stubCode: 7.5 },
    captions: false,
    stubQr: { sideMm: 18, beside: true },
  },
  label4x6: {
    widthMm: 4 * MM_PER_INCH,
    heightMm: 6 * MM_PER_INCH,
    paddingXMm: 6,
    paddingYMm: 6,
    sizes: { when: 11, name: 34, class: 16, allergy: 20, code: 34, stubName: 18, stubCode: 20 },
    captions: true,
    stubQr: { sideMm: 45, beside: false },
  },
};
