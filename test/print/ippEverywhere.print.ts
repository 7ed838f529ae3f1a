/**
 * Labels printed to a real IPP Everywhere printer (0051): `ippeveprinter` keeps each document it
 * receives, and the test reads it back.
 * - A printer that takes PWG Raster only (the package's default): the kept raster is decoded
 *   (test/support/pwgRasterFile.ts), its pages counted and measured against the layout, and saved as
 *   PNGs (test-artifacts/print/). OCR (tesseract) must read the child's name on each page. The same
 *   family also goes to a printer that takes PDF: pdftotext must find every name and code in it,
 *   pdftoppm draws its pages (a rasteriser other than the service's), and each line of text of each
 *   raster page, the codes' included, must agree with poppler's drawing (90% of the ink of each
 *   within a pixel of the other's). OCR alone misreads DejaVu Sans Mono Bold's codes now and then
 *   (8 as S, 9 as O), so it is not what the codes are checked with.
 * - A printer that takes PDF: poppler's pdfinfo gives the pages and their size, pdftotext the text,
 *   which must hold the names and the codes.
 * - The printer switched off: the job fails with the reason; on again, the next job prints.
 * Run with `npm run test:print`; nothing here is skipped when a tool is missing, the suite fails.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import * as t from 'io-ts';
import sharp from 'sharp';
import { LABEL_PAGES } from '../../src/domain/labelLayouts.js';
import { call, decodeAs } from '../support/http.js';
import { keptDocuments, printersPerTest, printSuite } from '../support/ippEverywhere.js';
import { checkInAll, createPrinter, printedJob } from '../support/printing.js';
import { readPwgRaster } from '../support/pwgRasterFile.js';
import { qrTextOf } from '../support/qr.js';
import { createdId } from '../support/seed.js';
import { authHeaders, DEV_TOKENS } from '../support/testService.js';

const run = promisify(execFile);
const ARTIFACTS = 'test-artifacts/print';
const PT_PER_MM = 72 / 25.4;

/** OCR's reading of a page image, spaces removed. */
const ocr = async (png: string): Promise<string> => {
  const { stdout } = await run('tesseract', [png, 'stdout', '--dpi', '300', '--psm', '6'], {
    env: { ...process.env, OMP_THREAD_LIMIT: '1' },
  });
  return stdout.replace(/\s+/g, '');
};

/** Each page's text, as poppler's pdftotext reads it. */
const pdfPageTexts = async (pdf: string, pages: number): Promise<string[]> => {
  const out: string[] = [];
  for (let page = 1; page <= pages; page += 1) {
    out.push((await run('pdftotext', ['-f', String(page), '-l', String(page), pdf, '-'])).stdout);
  }
  return out;
};

interface GreyImage {
  readonly width: number;
  readonly height: number;
  readonly grey: Uint8Array;
}

/** The PDF's pages drawn by poppler (pdftoppm) at 300 dpi in grey, kept beside the artifacts. */
const popplerPages = async (pdf: string, name: string): Promise<GreyImage[]> => {
  const prefix = join(ARTIFACTS, name);
  await run('pdftoppm', ['-r', '300', '-gray', '-png', pdf, prefix]);
  const files = (await readdir(ARTIFACTS))
    .filter((f) => f.startsWith(`${name}-`) && f.endsWith('.png'))
    .sort();
  const out: GreyImage[] = [];
  for (const f of files) {
    const { data, info } = await sharp(join(ARTIFACTS, f))
      .greyscale()
      .raw()
      .toBuffer({ resolveWithObject: true });
    out.push({ width: info.width, height: info.height, grey: new Uint8Array(data) });
  }
  return out;
};

/** Lines of text agree when this share of the ink of each is within a pixel of the other's ink. */
const AGREE = 0.9;

const inked = (img: GreyImage, x: number, y: number): boolean =>
  x >= 0 && y >= 0 && x < img.width && y < img.height && (img.grey[y * img.width + x] ?? 255) < 128;

/** The share of `a`'s ink in rows `top`..`bottom` that has ink of `b` within one pixel. */
const covered = (a: GreyImage, b: GreyImage, top: number, bottom: number): number => {
  let ink = 0;
  let near = 0;
  for (let y = top; y < bottom; y += 1) {
    for (let x = 0; x < a.width; x += 1) {
      if (!inked(a, x, y)) continue;
      ink += 1;
      let found = false;
      for (let dy = -1; dy <= 1 && !found; dy += 1)
        for (let dx = -1; dx <= 1 && !found; dx += 1) found = inked(b, x + dx, y + dy);
      if (found) near += 1;
    }
  }
  return ink === 0 ? 1 : near / ink;
};

/**
 * How alike two drawings of a page are, line of text by line of text (bands of rows with ink in
 * `reference`, a pixel of margin each side): the worst line's agreement, both ways.
 */
const lineAgreement = (page: GreyImage, reference: GreyImage): { lines: number; worst: number } => {
  const bands: Array<[number, number]> = [];
  let start = -1;
  for (let y = 0; y <= reference.height; y += 1) {
    let any = false;
    for (let x = 0; x < reference.width && y < reference.height && !any; x += 1) any = inked(reference, x, y);
    if (any && start < 0) start = y;
    if (!any && start >= 0) {
      bands.push([Math.max(0, start - 1), Math.min(reference.height, y + 1)]);
      start = -1;
    }
  }
  const scores = bands.map(([top, bottom]) =>
    Math.min(covered(page, reference, top, bottom), covered(reference, page, top, bottom)),
  );
  return { lines: bands.length, worst: Math.min(...scores) };
};

describe('labels on a real IPP Everywhere printer (ippeveprinter)', function () {
  this.timeout(180_000);
  let sessionId: string;
  let classId: string;
  let studentIds: ReadonlyArray<string>;
  const suite = printSuite({ PRINT_GIVE_UP_SECONDS: '5' }, [
    'Ana Beatriz',
    'Bruno Souza',
    'Carla Dias',
    'Davi Rocha',
  ]);
  const { url } = suite;
  const newPrinter = printersPerTest();

  before(async () => {
    ({ sessionId, classId, studentIds } = suite.roster());
    await mkdir(ARTIFACTS, { recursive: true });
  });

  it('a raster-only printer receives PWG Raster: a page per label at the layout size, showing the names and codes', async () => {
    // The same family goes to a printer that takes PDF too: poppler reads that PDF's text exactly and
    // draws its pages with a rasteriser of its own, which the raster's pages must agree with.
    const raster = await newPrinter();
    const pdf = await newPrinter({ formats: 'application/pdf,image/pwg-raster' });
    const checkIns = await checkInAll(url(), sessionId, [studentIds[0] ?? '', studentIds[1] ?? '']);
    const print = async (uri: string, name: string) => {
      const printerId = await createPrinter(url(), { name, protocol: 'ipp', uri, layout: 'brother62' });
      const job = await printedJob(
        url(),
        printerId,
        checkIns.map((c) => c.checkInId),
      );
      expect(job, JSON.stringify(job)).to.deep.include({ status: 'done' });
    };
    await print(raster.uri, 'Recepção 1');
    await print(pdf.uri, 'Recepção 1 (PDF)');
    const [keptRaster] = await keptDocuments(raster, 1);
    const [keptPdf] = await keptDocuments(pdf, 1);
    expect(keptRaster).to.match(/\.pwg$/);
    expect(keptPdf).to.match(/\.pdf$/);
    const pages = readPwgRaster(await readFile(keptRaster ?? ''));
    expect(pages, 'two labels and the stub').to.have.length(3);
    const layout = LABEL_PAGES.brother62;
    for (const page of pages) {
      // The printer lists 300 and 600 dpi; the service sends 300.
      expect(page.dpi).to.equal(300);
      expect(page.width).to.equal(Math.round((layout.widthMm / 25.4) * 300));
      expect(page.height).to.be.within(
        Math.floor((layout.heightMm / 25.4) * 300),
        Math.ceil((layout.heightMm / 25.4) * 300),
      );
      expect(page.pageSizePt[0]).to.be.closeTo(layout.widthMm * PT_PER_MM, 1);
      expect(page.pageSizePt[1]).to.be.closeTo(layout.heightMm * PT_PER_MM, 1);
      expect(page.pageSizeName).to.equal('custom_brother62_62x100mm');
    }
    const [first, second] = checkIns.map((c) => c.code ?? '');
    // Spaces left out: a reader may split a letter-spaced code ("X W 2 Z E W") beside a name.
    const texts = (await pdfPageTexts(keptPdf ?? '', 3)).map((t) => t.replace(/\s+/g, ''));
    expect(texts[0]).to.contain('AnaBeatriz').and.to.contain(first);
    expect(texts[1]).to.contain('BrunoSouza').and.to.contain(second);
    expect(texts[2]).to.contain(`AnaBeatriz${first}`).and.to.contain(`BrunoSouza${second}`);
    const drawn = await popplerPages(keptPdf ?? '', 'poppler-brother62');
    expect(drawn).to.have.length(3);
    const names = ['AnaBeatriz', 'BrunoSouza', 'AnaBeatriz'];
    for (const [i, page] of pages.entries()) {
      const png = join(ARTIFACTS, `raster-brother62-${i + 1}.png`);
      await sharp(Buffer.from(page.grey), { raw: { width: page.width, height: page.height, channels: 1 } })
        .png()
        .toFile(png);
      // Read directly: OCR finds the child's name on the printed page.
      expect(await ocr(png)).to.contain(names[i]);
      // Every line of text, the codes' included, drawn alike by the two rasterisers.
      const agreement = lineAgreement(page, drawn[i] ?? page);
      expect(agreement.lines, `page ${i + 1}`).to.be.at.least(4);
      expect(agreement.worst, `page ${i + 1}: ${JSON.stringify(agreement)}`).to.be.at.least(AGREE);
    }
    // The comparison tells labels apart: the first child's page does not agree with the second's.
    const [firstPage] = pages;
    const [, secondDrawn] = drawn;
    if (firstPage === undefined || secondDrawn === undefined) throw new Error('pages are missing');
    expect(lineAgreement(firstPage, secondDrawn).worst).to.be.below(AGREE);
  });

  it('a printer that takes PDF receives a PDF: pages of the layout size, the names and codes in its text', async () => {
    const printer = await newPrinter({ formats: 'application/pdf,image/pwg-raster' });
    const printerId = await createPrinter(url(), {
      name: 'Recepção 2',
      protocol: 'ipp',
      uri: printer.uri,
      layout: 'label4x6',
    });
    const checkIns = await checkInAll(url(), sessionId, [studentIds[2] ?? '']);
    const job = await printedJob(
      url(),
      printerId,
      checkIns.map((c) => c.checkInId),
    );
    expect(job.status).to.equal('done');
    const [kept] = await keptDocuments(printer, 1);
    expect(kept).to.match(/\.pdf$/);
    const pdf = kept ?? '';
    await copyFile(pdf, join(ARTIFACTS, 'label4x6.pdf'));
    const info = (await run('pdfinfo', [pdf])).stdout;
    expect(info).to.match(/^Pages:\s+2$/m);
    expect(info).to.match(/^Page size:\s+288 x 432 pts/m);
    const pageTexts = (await pdfPageTexts(pdf, 2)).map((t) => t.replace(/\s+/g, ''));
    expect(pageTexts[0]).to.contain('CarlaDias').and.to.contain(checkIns[0]?.code).and.to.contain('Código');
    expect(pageTexts[1]).to.contain('Canhotodoresponsável').and.to.contain(`CarlaDias${checkIns[0]?.code}`);
  });

  it("the guardian's stub carries the family pass: jsQR reads it on the PWG Raster page and on poppler's drawing of the PDF", async () => {
    const raster = await newPrinter();
    const pdf = await newPrinter({ formats: 'application/pdf,image/pwg-raster' });
    const studentId = await createdId(
      url(),
      '/api/v1/students',
      {
        displayName: 'Elisa Prado',
        guardianName: 'Rita Prado',
        phones: [{ number: '11 97777-4321', qualifier: 'mãe' }],
        classId,
      },
      'studentId',
    );
    const passRead = await call(`${url()}/api/v1/students/${studentId}/family-pass/content`, {
      headers: authHeaders(DEV_TOKENS.DEV_CALLER_TOKEN),
    });
    const pass = decodeAs(t.type({ content: t.string }), passRead.json).content;
    const checkIns = await checkInAll(url(), sessionId, [studentId]);
    for (const [uri, name] of [
      [raster.uri, 'Recepção QR'],
      [pdf.uri, 'Recepção QR (PDF)'],
    ] as const) {
      const printerId = await createPrinter(url(), { name, protocol: 'ipp', uri, layout: 'brother62' });
      const job = await printedJob(url(), printerId, [checkIns[0]?.checkInId ?? '']);
      expect(job, JSON.stringify(job)).to.deep.include({ status: 'done' });
    }
    const [keptRaster] = await keptDocuments(raster, 1);
    const pages = readPwgRaster(await readFile(keptRaster ?? ''));
    expect(pages, 'the label and the stub').to.have.length(2);
    const png = async (page: { width: number; height: number; grey: Uint8Array }) =>
      new Uint8Array(
        await sharp(Buffer.from(page.grey), {
          raw: { width: page.width, height: page.height, channels: 1 },
        })
          .png()
          .toBuffer(),
      );
    const [label, stub] = pages;
    if (label === undefined || stub === undefined) throw new Error('pages are missing');
    expect(await qrTextOf(await png(stub))).to.equal(pass);
    expect(await qrTextOf(await png(label)), "a child's label has no QR code").to.equal(undefined);
    const [keptPdf] = await keptDocuments(pdf, 1);
    const drawn = await popplerPages(keptPdf ?? '', 'poppler-stub-qr');
    expect(drawn).to.have.length(2);
    expect(await qrTextOf(await png(drawn[1] ?? label))).to.equal(pass);
  });

  it('a printer switched off fails the job with the reason; switched on, the next job prints', async () => {
    const printer = await newPrinter();
    const printerId = await createPrinter(url(), {
      name: 'Recepção 3',
      protocol: 'ipp',
      uri: printer.uri,
      layout: 'dymo30252',
    });
    const [c] = await checkInAll(url(), sessionId, [studentIds[3] ?? '']);
    await printer.off();
    const failed = await printedJob(url(), printerId, [c?.checkInId ?? '']);
    expect(failed.status).to.equal('failed');
    expect(failed.error?.code).to.equal('PRINTER_UNREACHABLE');
    expect(failed.error?.message).to.contain('could not be reached');
    await printer.on();
    const printed = await printedJob(url(), printerId, [c?.checkInId ?? '']);
    expect(printed.status).to.equal('done');
    const docs = await keptDocuments(printer, 1);
    expect(docs).to.have.length(1);
    const pages = readPwgRaster(await readFile(docs[0] ?? ''));
    expect(pages).to.have.length(2);
    expect(pages[0]?.width).to.equal(Math.round((LABEL_PAGES.dymo30252.widthMm / 25.4) * 300));
  });
});
