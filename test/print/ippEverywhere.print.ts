/**
 * Labels printed to a real IPP Everywhere printer (0051): `ippeveprinter` keeps each document it
 * receives, and the test reads it back.
 * - A printer that takes PWG Raster only (the package's default): the kept raster is decoded
 *   (test/support/pwgRasterFile.ts); its pages are counted and measured against the layout, each
 *   page is saved as a PNG (test-artifacts/print/) and read by OCR (tesseract), which must find the
 *   child's name and code on the label and every code on the stub.
 * - A printer that takes PDF: poppler's pdfinfo gives the pages and their size, pdftotext the text,
 *   which must hold the names and the codes.
 * - The printer switched off: the job fails with the reason; on again, the next job prints.
 * Run with `npm run test:print`; nothing here is skipped when a tool is missing, the suite fails.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { expect } from 'chai';
import sharp from 'sharp';
import { LABEL_PAGES } from '../../src/domain/labelLayouts.js';
import {
  type DnsSd,
  type IppEverywherePrinter,
  requirePrintTools,
  startDnsSd,
  startIppEverywhere,
} from '../support/ippEverywhere.js';
import { checkInAll, createPrinter, finishedJob, printLabels } from '../support/printing.js';
import { readPwgRaster } from '../support/pwgRasterFile.js';
import { seedSmallRoster } from '../support/seed.js';
import { startTestService, type TestService } from '../support/testService.js';

const run = promisify(execFile);
const ARTIFACTS = 'test-artifacts/print';
const PT_PER_MM = 72 / 25.4;

/** The documents the printer has kept once there are `n`, read every 50 ms (a bounded loop). */
const keptDocuments = async (printer: IppEverywherePrinter, n: number): Promise<string[]> => {
  for (let i = 0; i < 200; i += 1) {
    const docs = printer.documents();
    if (docs.length >= n) return docs;
    await sleep(50);
  }
  throw new Error(`the printer kept ${printer.documents().length} documents, not ${n}`);
};

/** OCR's reading of a grey page, spaces removed (codes are read letter by letter). */
const ocr = async (png: string): Promise<string> => {
  const { stdout } = await run('tesseract', [png, 'stdout', '--psm', '6'], {
    env: { ...process.env, OMP_THREAD_LIMIT: '1' },
  });
  return stdout.replace(/\s+/g, '');
};

describe('labels on a real IPP Everywhere printer (ippeveprinter)', function () {
  this.timeout(180_000);
  let dnsSd: DnsSd | undefined;
  let svc: TestService | undefined;
  let sessionId: string;
  let studentIds: ReadonlyArray<string>;

  before(async () => {
    await requirePrintTools();
    dnsSd = await startDnsSd();
    svc = await startTestService({ env: { PRINT_GIVE_UP_SECONDS: '5' } });
    const today = new Date().toISOString().slice(0, 10);
    const roster = await seedSmallRoster(
      svc.url,
      ['Ana Beatriz', 'Bruno Souza', 'Carla Dias', 'Davi Rocha'],
      today,
    );
    sessionId = roster.sessionId;
    studentIds = roster.studentIds;
    await mkdir(ARTIFACTS, { recursive: true });
  });
  after(async () => {
    await svc?.dispose();
    await dnsSd?.stop();
  });
  const url = () => {
    if (svc === undefined) throw new Error('no service');
    return svc.url;
  };

  it('a raster-only printer receives PWG Raster: one page per label at the layout size, the name and code legible', async () => {
    const printer = await startIppEverywhere();
    try {
      const printerId = await createPrinter(url(), {
        name: 'Recepção 1',
        protocol: 'ipp',
        uri: printer.uri,
        layout: 'brother62',
      });
      const checkIns = await checkInAll(url(), sessionId, [studentIds[0] ?? '', studentIds[1] ?? '']);
      const job = await finishedJob(
        url(),
        await printLabels(
          url(),
          printerId,
          checkIns.map((c) => c.checkInId),
        ),
      );
      expect(job, JSON.stringify(job)).to.deep.include({ status: 'done' });
      const [kept] = await keptDocuments(printer, 1);
      expect(kept).to.match(/\.pwg$/);
      const pages = readPwgRaster(await readFile(kept ?? ''));
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
      const read: string[] = [];
      for (const [i, page] of pages.entries()) {
        const png = join(ARTIFACTS, `raster-brother62-${i + 1}.png`);
        await sharp(Buffer.from(page.grey), { raw: { width: page.width, height: page.height, channels: 1 } })
          .png()
          .toFile(png);
        read.push(await ocr(png));
      }
      expect(read[0]).to.contain('AnaBeatriz').and.to.contain(checkIns[0]?.code);
      expect(read[1]).to.contain('BrunoSouza').and.to.contain(checkIns[1]?.code);
      expect(read[2]).to.contain(checkIns[0]?.code).and.to.contain(checkIns[1]?.code);
    } finally {
      await printer.stop();
    }
  });

  it('a printer that takes PDF receives a PDF: pages of the layout size, the names and codes in its text', async () => {
    const printer = await startIppEverywhere({ formats: 'application/pdf,image/pwg-raster' });
    try {
      const printerId = await createPrinter(url(), {
        name: 'Recepção 2',
        protocol: 'ipp',
        uri: printer.uri,
        layout: 'label4x6',
      });
      const checkIns = await checkInAll(url(), sessionId, [studentIds[2] ?? '']);
      const job = await finishedJob(
        url(),
        await printLabels(
          url(),
          printerId,
          checkIns.map((c) => c.checkInId),
        ),
      );
      expect(job.status).to.equal('done');
      const [kept] = await keptDocuments(printer, 1);
      expect(kept).to.match(/\.pdf$/);
      const pdf = kept ?? '';
      await copyFile(pdf, join(ARTIFACTS, 'label4x6.pdf'));
      const info = (await run('pdfinfo', [pdf])).stdout;
      expect(info).to.match(/^Pages:\s+2$/m);
      expect(info).to.match(/^Page size:\s+288 x 432 pts/m);
      const pageTexts = [];
      for (const page of [1, 2]) {
        pageTexts.push((await run('pdftotext', ['-f', String(page), '-l', String(page), pdf, '-'])).stdout);
      }
      expect(pageTexts[0])
        .to.contain('Carla Dias')
        .and.to.contain(checkIns[0]?.code)
        .and.to.contain('Código');
      expect(pageTexts[1]).to.contain('Canhoto do responsável').and.to.contain(checkIns[0]?.code);
    } finally {
      await printer.stop();
    }
  });

  it('a printer switched off fails the job with the reason; switched on, the next job prints', async () => {
    const printer = await startIppEverywhere();
    try {
      const printerId = await createPrinter(url(), {
        name: 'Recepção 3',
        protocol: 'ipp',
        uri: printer.uri,
        layout: 'dymo30252',
      });
      const [c] = await checkInAll(url(), sessionId, [studentIds[3] ?? '']);
      await printer.off();
      const failed = await finishedJob(url(), await printLabels(url(), printerId, [c?.checkInId ?? '']));
      expect(failed.status).to.equal('failed');
      expect(failed.error?.code).to.equal('PRINTER_UNREACHABLE');
      expect(failed.error?.message).to.contain('could not be reached');
      await printer.on();
      const printed = await finishedJob(url(), await printLabels(url(), printerId, [c?.checkInId ?? '']));
      expect(printed.status).to.equal('done');
      const docs = await keptDocuments(printer, 1);
      expect(docs).to.have.length(1);
      const pages = readPwgRaster(await readFile(docs[0] ?? ''));
      expect(pages).to.have.length(2);
      expect(pages[0]?.width).to.equal(Math.round((LABEL_PAGES.dymo30252.widthMm / 25.4) * 300));
    } finally {
      await printer.stop();
    }
  });
});
