/**
 * Labels on label printers: siblings checked in together give a label each and one stub; for each
 * layout the tablet offers (Brother QL 62 mm, Dymo 30252, 4 × 6 in) Chromium prints them to PDF with
 * the page size of the CSS `@page`: one label per page, each page the label's size, and nothing on a
 * label runs past its edge. The layout is kept per tablet.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import {
  ARTIFACTS,
  type KioskPage,
  kioskSuite,
  type Ministry,
  openKiosk,
  signIn,
  waitForStatus,
} from './kioskHarness.js';

/** PostScript points per unit: the PDF's page boxes are in points. */
const PT_PER_MM = 72 / 25.4;
const LAYOUTS = [
  {
    layout: 'brother62',
    option: 'Brother QL, rolo contínuo 62 mm',
    width: 62 * PT_PER_MM,
    height: 100 * PT_PER_MM,
  },
  { layout: 'dymo30252', option: 'Dymo 30252 (2,25 × 1,25 pol.)', width: 2.25 * 72, height: 1.25 * 72 },
  { layout: 'label4x6', option: 'Etiqueta 4 × 6 pol. (Zebra e similares)', width: 4 * 72, height: 6 * 72 },
] as const;

/** Every page's MediaBox in a PDF as Chromium writes it (page dictionaries are not compressed). */
const pageSizes = (pdf: Buffer): Array<{ width: number; height: number }> =>
  [
    ...pdf.toString('latin1').matchAll(/\/MediaBox\s*\[\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*\]/g),
  ].map((m) => ({ width: Number(m[3]) - Number(m[1]), height: Number(m[4]) - Number(m[2]) }));

describe('kiosk (e2e): labels on label printers, printed to PDF', function () {
  this.timeout(180_000);
  let ministry: Ministry;
  let kiosk: KioskPage;
  let url: string;
  let browser: Browser;

  const suite = kioskSuite(['labels']);
  before(async () => {
    ({ url, ministry, browser } = suite());
    kiosk = suite().tablet('labels');
    await mkdir(ARTIFACTS, { recursive: true });
  });

  it('checks three siblings in and shows their labels and one stub', async () => {
    const { page } = kiosk;
    await signIn(kiosk, ministry.chamador.email, ministry.chamador.password);
    await waitForStatus(kiosk, { online: true, pending: 0 });
    await page.getByRole('button', { name: /Turma Arco-Íris · Culto da manhã/ }).click();
    await page.locator('body[data-screen="desk"]').waitFor();
    // The seeded children share their mother's phone: five siblings; three go in.
    await page.getByRole('searchbox').fill('joao');
    await page
      .locator('li.child', { hasText: 'João Pedro Araújo' })
      .getByRole('button', { name: /Irmãos/ })
      .click();
    await page.locator('body[data-screen="siblings"]').waitFor();
    for (const name of ['Luíza Gonçalves', 'Pedro Henrique Lima'])
      await page.locator('li.sibling', { hasText: name }).getByRole('checkbox').uncheck();
    await page.getByRole('button', { name: 'Dar entrada às marcadas' }).click();
    await page.locator('body[data-screen="label"]').waitFor();
    expect(await page.locator('[data-test="label"]').count()).to.equal(3);
    // Online, the stub carries the family pass (0049), drawn inline: the layouts below measure it too.
    await page.locator('[data-test="stub"] [data-test="stub-pass"] svg[role="img"]').waitFor();
  });

  for (const { layout, option, width, height } of LAYOUTS)
    it(`${layout}: a page per label, each ${Math.round(width)} × ${Math.round(height)} pt, nothing cut`, async () => {
      const { page } = kiosk;
      await page.emulateMedia({ media: 'screen' });
      await page.getByLabel('Impressora de etiquetas deste tablet').selectOption({ label: option });
      expect(await page.evaluate(() => document.body.dataset.labelLayout)).to.equal(layout);
      await page.emulateMedia({ media: 'print' });
      // Every label box is the page's size, and what it holds stays inside it.
      const boxes = await page.locator('.print-area > .label').evaluateAll((labels) =>
        labels.map((el) => {
          const outer = el.getBoundingClientRect();
          const inside = [...el.querySelectorAll('*')].every((child) => {
            const r = child.getBoundingClientRect();
            return r.width === 0 || (r.right <= outer.right + 0.5 && r.bottom <= outer.bottom + 0.5);
          });
          return {
            width: outer.width,
            height: outer.height,
            fits: el.scrollHeight <= el.clientHeight + 1 && el.scrollWidth <= el.clientWidth + 1 && inside,
          };
        }),
      );
      expect(boxes, JSON.stringify(boxes)).to.have.length(4);
      // CSS pixels: 96 per inch.
      for (const b of boxes) {
        expect(b.fits, JSON.stringify(b)).to.equal(true);
        expect(b.width, JSON.stringify(boxes)).to.be.closeTo((width / 72) * 96, 1);
        expect(b.height).to.be.closeTo((height / 72) * 96, 1);
      }
      await page.locator('.print-area').screenshot({ path: path.join(ARTIFACTS, `labels-${layout}.png`) });
      const pdf = await page.pdf({ preferCSSPageSize: true, printBackground: true });
      await writeFile(path.join(ARTIFACTS, `labels-${layout}.pdf`), new Uint8Array(pdf));
      const pages = pageSizes(pdf);
      expect(pages).to.have.length(4);
      for (const p of pages) {
        expect(p.width, layout).to.be.closeTo(width, 1);
        expect(p.height, layout).to.be.closeTo(height, 1);
      }
      await page.emulateMedia({ media: 'screen' });
    });

  it('keeps the layout per tablet: this one remembers it, a new tablet starts on the sheet', async () => {
    expect(await kiosk.page.evaluate(() => localStorage.getItem('chamada.kiosk.labelLayout'))).to.equal(
      'label4x6',
    );
    const other = await openKiosk(browser, url, 'labels-other');
    expect(await other.page.evaluate(() => localStorage.getItem('chamada.kiosk.labelLayout'))).to.equal(null);
    await other.context.close();
  });

  it('ran without a CSP violation or an uncaught error', () => {
    expect(kiosk.problems()).to.deep.equal([]);
  });
});
