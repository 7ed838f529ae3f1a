/**
 * The print agent (0054) printing to real IPP Everywhere printers (`ippeveprinter`, which keeps what it
 * receives): the service lays the labels out, the agent — a process of its own, as
 * `npm run print-agent` starts it — asks each printer what it takes and sends PDF or PWG Raster.
 * Three processes: the service (in this one), the agent, the printer. The agent is killed while the
 * printer is off and started again; the job prints once the printer is back.
 * Run with `npm run test:print`; nothing here is skipped when a tool is missing, the suite fails.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { LABEL_PAGES } from '../../src/domain/labelLayouts.js';
import {
  type DnsSd,
  type IppEverywherePrinter,
  requirePrintTools,
  startDnsSd,
  startIppEverywhere,
} from '../support/ippEverywhere.js';
import { collect } from '../support/mainProcess.js';
import { type IssuedAgent, issueAgent } from '../support/printAgents.js';
import { checkInAll, createPrinter, finishedJob, printLabels } from '../support/printing.js';
import { readPwgRaster } from '../support/pwgRasterFile.js';
import { seedSmallRoster } from '../support/seed.js';
import { startTestService, type TestService } from '../support/testService.js';

const run = promisify(execFile);

const keptDocuments = async (printer: IppEverywherePrinter, n: number): Promise<string[]> => {
  for (let i = 0; i < 400; i += 1) {
    const docs = printer.documents();
    if (docs.length >= n) return docs;
    await sleep(50);
  }
  throw new Error(`the printer kept ${printer.documents().length} documents, not ${n}`);
};

const startAgent = (server: string, agent: IssuedAgent): { child: ChildProcess; out: () => string } => {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/printAgent/main.ts', '--server', server, '--wait', '5'],
    {
      env: { PATH: process.env.PATH ?? '', PRINT_AGENT_TOKEN: agent.token },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const out = collect(child.stdout);
  const err = collect(child.stderr);
  return { child, out: () => `${out()}\n${err()}` };
};

const end = async (child: ChildProcess, signal: NodeJS.Signals): Promise<void> => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  await exited;
};

describe('the print agent on real IPP Everywhere printers (ippeveprinter)', function () {
  this.timeout(180_000);
  let dnsSd: DnsSd | undefined;
  let svc: TestService | undefined;
  let agent: IssuedAgent;
  let running: { child: ChildProcess; out: () => string } | undefined;
  let sessionId: string;
  let studentIds: ReadonlyArray<string>;

  before(async () => {
    await requirePrintTools();
    dnsSd = await startDnsSd();
    // PRINTER_HOSTS names no loopback host: the service could not print to these printers itself.
    svc = await startTestService({
      env: { PRINT_GIVE_UP_SECONDS: '60', PRINTER_HOSTS: 'printers.example.org' },
    });
    const roster = await seedSmallRoster(
      svc.url,
      ['Ana Beatriz', 'Bruno Souza', 'Carla Dias'],
      new Date().toISOString().slice(0, 10),
    );
    sessionId = roster.sessionId;
    studentIds = roster.studentIds;
    agent = await issueAgent(svc.url, 'Sala dos fundos');
    running = startAgent(svc.url, agent);
  });
  after(async () => {
    if (running !== undefined) await end(running.child, 'SIGKILL');
    await svc?.dispose();
    await dnsSd?.stop();
  });
  const url = () => {
    if (svc === undefined) throw new Error('no service');
    return svc.url;
  };

  it('a printer that takes PDF gets a PDF with the names and codes; a raster-only one gets PWG Raster', async () => {
    const pdfPrinter = await startIppEverywhere({ formats: 'application/pdf,image/pwg-raster' });
    const rasterPrinter = await startIppEverywhere();
    try {
      const pdfId = await createPrinter(url(), {
        name: 'Porta PDF',
        protocol: 'ipp',
        uri: pdfPrinter.uri,
        layout: 'label4x6',
        agentId: agent.agentId,
      });
      const rasterId = await createPrinter(url(), {
        name: 'Porta raster',
        protocol: 'ipp',
        uri: rasterPrinter.uri,
        layout: 'dymo30252',
        agentId: agent.agentId,
      });
      const [first, second] = await checkInAll(url(), sessionId, [studentIds[0] ?? '', studentIds[1] ?? '']);
      const pdfJob = await printLabels(url(), pdfId, [first?.checkInId ?? '']);
      const rasterJob = await printLabels(url(), rasterId, [second?.checkInId ?? '']);
      expect(await finishedJob(url(), pdfJob), running?.out()).to.deep.include({ status: 'done' });
      expect(await finishedJob(url(), rasterJob), running?.out()).to.deep.include({ status: 'done' });

      const [pdf] = await keptDocuments(pdfPrinter, 1);
      expect(pdf).to.match(/\.pdf$/);
      const text = (await run('pdftotext', [pdf ?? '', '-'])).stdout.replace(/\s+/g, '');
      expect(text).to.contain('AnaBeatriz').and.to.contain(first?.code);
      expect((await run('pdfinfo', [pdf ?? ''])).stdout).to.match(/^Page size:\s+288 x 432 pts/m);

      const [raster] = await keptDocuments(rasterPrinter, 1);
      const pages = readPwgRaster(await readFile(raster ?? ''));
      expect(pages, 'the label and the stub').to.have.length(2);
      expect(pages[0]?.width).to.equal(Math.round((LABEL_PAGES.dymo30252.widthMm / 25.4) * 300));
      expect(pdfPrinter.documents()).to.have.length(1);
      expect(rasterPrinter.documents()).to.have.length(1);
    } finally {
      await pdfPrinter.stop();
      await rasterPrinter.stop();
    }
  });

  it('the printer off and the agent killed meanwhile: started again, it prints the job once the printer is back', async () => {
    const printer = await startIppEverywhere({ formats: 'application/pdf' });
    try {
      const printerId = await createPrinter(url(), {
        name: 'Porta desligada',
        protocol: 'ipp',
        uri: printer.uri,
        layout: 'brother62',
        agentId: agent.agentId,
      });
      await printer.off();
      const [c] = await checkInAll(url(), sessionId, [studentIds[2] ?? '']);
      const jobId = await printLabels(url(), printerId, [c?.checkInId ?? '']);
      // Long enough for an attempt or two to fail against the printer that is off.
      await sleep(3_000);
      if (running !== undefined) await end(running.child, 'SIGKILL');
      await printer.on();
      running = startAgent(url(), agent);
      const job = await finishedJob(url(), jobId);
      expect(job, running.out()).to.deep.include({ status: 'done' });
      expect(job.attempts).to.be.greaterThan(1);
      await keptDocuments(printer, 1);
      await sleep(1_000);
      expect(printer.documents()).to.have.length(1);
    } finally {
      await printer.stop();
    }
  });
});
