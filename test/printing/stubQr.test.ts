/**
 * The family pass on the guardian's stub as the printers receive it (0049, 0051): drawn by the same
 * renderers that feed IPP (the raster sent as PWG Raster, the SVG it is drawn from) on every label
 * layout, and read back by jsQR, a decoder independent of the `qr` encoder the service uses.
 */

import { expect } from 'chai';
import jsQRModule from 'jsqr';
import { LABEL_PAGES, PRINTER_LAYOUTS } from '../../src/domain/labelLayouts.js';
import { measure, rasterise, svgOf } from '../../src/printing/render.js';
import { type LabelledChild, labelsOf, layOut, PT_PER_MM } from '../../src/rules/labels.js';

const jsQR = jsQRModule.default;

const PASS = 'CHAMADA:FP1:ABCDEFGH:ABCDEFGHIJKLMNOPQRSTUVWXYZ';

const children: LabelledChild[] = [
  {
    displayName: 'Ana Beatriz Souza',
    className: 'Berçário',
    sessionTitle: 'Culto',
    allergies: null,
    specialNeeds: null,
    code: 'K7Q2',
  },
  {
    displayName: 'Bruno Souza',
    className: 'Maternal',
    sessionTitle: 'Culto',
    allergies: null,
    specialNeeds: null,
    code: 'M3X9',
  },
];

/** The stub of the two children, with the pass or without. */
const stubOf = (pass: string | undefined) => {
  const stub = labelsOf(children, '26/11/2026 10:05', 'pt-BR', pass).at(-1);
  if (stub?.kind !== 'stub') throw new Error('no stub');
  return stub;
};

/** jsQR over a grey page, as RGBA. */
const decodeGrey = (page: { width: number; height: number; pixels: Uint8Array }): string | undefined => {
  const rgba = new Uint8ClampedArray(page.width * page.height * 4);
  for (let i = 0; i < page.pixels.length; i += 1) {
    const v = page.pixels[i] ?? 255;
    rgba[i * 4] = v;
    rgba[i * 4 + 1] = v;
    rgba[i * 4 + 2] = v;
    rgba[i * 4 + 3] = 255;
  }
  return jsQR(rgba, page.width, page.height)?.data;
};

describe("the guardian's stub carries the family pass (IPP renderings; the PDF's in test/print/stubQrPdf.print.ts)", function () {
  // Drawing and decoding whole labels at 300 dpi takes seconds on a shared machine.
  this.timeout(60_000);
  for (const layout of PRINTER_LAYOUTS) {
    it(`on ${layout}, the raster sent over IPP reads back as the pass, beside or under the children's codes`, async () => {
      const placed = layOut(stubOf(PASS), layout, measure);
      const qr = placed.qr;
      if (qr === undefined) throw new Error('the pass was not placed');
      expect(qr.sidePt).to.be.closeTo(LABEL_PAGES[layout].stubQr.sideMm * PT_PER_MM, 1e-9);
      expect(qr.x + qr.sidePt).to.be.at.most(placed.widthPt + 1e-6);
      expect(qr.y + qr.sidePt).to.be.at.most(placed.heightPt + 1e-6);
      // Every child's code is still printed, and none of them under the QR code.
      const codes = placed.texts.filter((t) => t.role === 'code');
      expect(codes.map((c) => c.text)).to.deep.equal(['K7Q2', 'M3X9']);
      for (const c of codes) {
        const beside = c.x + measure(c.text, c.sizePt, 'mono') <= qr.x;
        const above = c.baseline <= qr.y;
        expect(beside || above, `${c.text} clear of the QR code`).to.equal(true);
      }
      // 300 dpi grey, as the worker rasterises for an IPP Everywhere printer (PWG Raster).
      expect(decodeGrey(rasterise(placed, 300))).to.equal(PASS);
    });
  }

  it('a stub without a pass (a child without a family) has no QR code, in any format', async () => {
    for (const layout of PRINTER_LAYOUTS) {
      const placed = layOut(stubOf(undefined), layout, measure);
      expect(placed.qr).to.equal(undefined);
      expect(decodeGrey(rasterise(placed, 300))).to.equal(undefined);
      expect(svgOf(placed)).to.not.contain('<path');
    }
  });
});
