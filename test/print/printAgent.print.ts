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
  type IppEverywherePrinter,
  keptDocuments,
  printersPerTest,
  printSuite,
} from '../support/ippEverywhere.js';
import { collect } from '../support/mainProcess.js';
import { type IssuedAgent, issueAgent } from '../support/printAgents.js';
import { checkInAll, createPrinter, finishedJob, printLabels } from '../support/printing.js';
import { readPwgRaster } from '../support/pwgRasterFile.js';

const run = promisify(execFile);

/** 20 s of reads: the document reaches the printer through the agent's process, not the service's. */
const kept = (printer: IppEverywherePrinter, n: number): Promise<string[]> => keptDocuments(printer, n, 400);

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
  let agent: IssuedAgent;
  let running: { child: ChildProcess; out: () => string } | undefined;
  let sessionId: string;
  let studentIds: ReadonlyArray<string>;
  // PRINTER_HOSTS names no loopback host: the service could not print to these printers itself.
  const suite = printSuite(
    { PRINT_GIVE_UP_SECONDS: '60', PRINTER_HOSTS: 'printers.example.org' },
    ['Ana Beatriz', 'Bruno Souza', 'Carla Dias'],
    async () => {
      if (running !== undefined) await end(running.child, 'SIGKILL');
    },
  );
  const { url } = suite;
  const newPrinter = printersPerTest();

  before(async () => {
    ({ sessionId, studentIds } = suite.roster());
    agent = await issueAgent(url(), 'Sala dos fundos');
    running = startAgent(url(), agent);
  });

  it('a printer that takes PDF gets a PDF with the names and codes; a raster-only one gets PWG Raster', async () => {
    const pdfPrinter = await newPrinter({ formats: 'application/pdf,image/pwg-raster' });
    const rasterPrinter = await newPrinter();
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

    const [pdf] = await kept(pdfPrinter, 1);
    expect(pdf).to.match(/\.pdf$/);
    const text = (await run('pdftotext', [pdf ?? '', '-'])).stdout.replace(/\s+/g, '');
    expect(text).to.contain('AnaBeatriz').and.to.contain(first?.code);
    expect((await run('pdfinfo', [pdf ?? ''])).stdout).to.match(/^Page size:\s+288 x 432 pts/m);

    const [raster] = await kept(rasterPrinter, 1);
    const pages = readPwgRaster(await readFile(raster ?? ''));
    expect(pages, 'the label and the stub').to.have.length(2);
    expect(pages[0]?.width).to.equal(Math.round((LABEL_PAGES.dymo30252.widthMm / 25.4) * 300));
    expect(pdfPrinter.documents()).to.have.length(1);
    expect(rasterPrinter.documents()).to.have.length(1);
  });

  it('the printer off and the agent killed meanwhile: started again, it prints the job once the printer is back', async () => {
    const printer = await newPrinter({ formats: 'application/pdf' });
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
    await kept(printer, 1);
    await sleep(1_000);
    expect(printer.documents()).to.have.length(1);
  });
});
