/**
 * The family pass on the guardian's stub in the PDF the service sends to a printer that takes PDF
 * (0049, 0051): poppler's pdftoppm, a rasteriser other than the service's, draws the stub's page, and
 * jsQR reads the pass back. Run with `npm run test:print` (poppler-utils, which `.ci/run` installs).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { PRINTER_LAYOUTS } from '../../src/domain/labelLayouts.js';
import { measure, renderPdf } from '../../src/printing/render.js';
import { labelsOf, layOut } from '../../src/rules/labels.js';
import { qrTextOf } from '../support/qr.js';

const run = promisify(execFile);
const PASS = 'CHAMADA:FP1:ABCDEFGH:ABCDEFGHIJKLMNOPQRSTUVWXYZ';

describe("the guardian's stub in a PDF carries the family pass", function () {
  this.timeout(60_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'stub-qr-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  for (const layout of PRINTER_LAYOUTS) {
    it(`on ${layout}, poppler's drawing of the stub's page reads back as the pass; the child's page has none`, async () => {
      const child = {
        displayName: 'Ana Souza',
        className: 'Berçário',
        sessionTitle: 'Culto',
        allergies: null,
        specialNeeds: null,
        code: 'K7Q2',
      };
      const labels = labelsOf([child], '26/11/2026 10:05', 'pt-BR', PASS).map((c) =>
        layOut(c, layout, measure),
      );
      const pdf = join(dir, `${layout}.pdf`);
      await writeFile(pdf, (await renderPdf(labels)).bytes);
      await run('pdftoppm', ['-r', '300', '-png', pdf, join(dir, layout)]);
      expect(await qrTextOf(new Uint8Array(await readFile(join(dir, `${layout}-2.png`))))).to.equal(PASS);
      expect(await qrTextOf(new Uint8Array(await readFile(join(dir, `${layout}-1.png`))))).to.equal(
        undefined,
      );
    });
  }
});
