/**
 * QR codes as SVG path data: what the card and the guardian's stub draw reads back, through an
 * independent decoder (jsQR), as the text it was made from, for passes and for texts of other lengths.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { qrSymbol } from '../../src/lib/qrCode.js';
import { qrTextOf } from '../support/qr.js';

/** The symbol drawn as the card draws it, rasterised at `scale` pixels a module, and decoded. */
const decode = async (text: string, scale = 6): Promise<string | undefined> => {
  const { size, path } = qrSymbol(text);
  const side = size * scale;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${side}" height="${side}" viewBox="0 0 ${size} ${size}"><rect width="${size}" height="${size}" fill="#fff"/><path d="${path}" fill="#000"/></svg>`;
  return qrTextOf(new TextEncoder().encode(svg), 72);
};

describe('QR codes as SVG path data', () => {
  it('a pass fits a version 3 symbol (29 modules) with its four-module quiet zone', () => {
    expect(qrSymbol('CHAMADA:FP1:ABCDEFGH:ABCDEFGHIJKLMNOPQRSTUVWXYZ').size).to.equal(29 + 8);
  });

  it('the quiet zone is light: no run starts in the first or last four rows or columns', () => {
    const { size, path } = qrSymbol('CHAMADA:FP1:ABCDEFGH:ABCDEFGHIJKLMNOPQRSTUVWXYZ');
    for (const m of path.matchAll(/M(\d+) (\d+)h(\d+)/g)) {
      const [x, y, w] = [Number(m[1]), Number(m[2]), Number(m[3])];
      expect(x).to.be.at.least(4);
      expect(y)
        .to.be.at.least(4)
        .and.below(size - 4);
      expect(x + w).to.be.at.most(size - 4);
    }
  });

  it('passes and other texts read back as themselves', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.stringMatching(/^CHAMADA:FP1:[A-Z2-7]{8}:[A-Z2-7]{26}$/),
          fc.string({ minLength: 1, maxLength: 120, unit: 'grapheme-ascii' }),
        ),
        async (text) => {
          expect(await decode(text)).to.equal(text);
        },
      ),
      { numRuns: 25 },
    );
  });
});
