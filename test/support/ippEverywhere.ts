/**
 * A real IPP Everywhere printer for the tests (0051): Debian's `ippeveprinter` (package
 * cups-ipp-utils), started with `-k` so it keeps every document it receives in its spool folder.
 * It announces itself over DNS-SD, so it needs a system D-Bus and avahi-daemon: `startDnsSd` starts
 * each one that is not running already, and stops only what it started.
 *
 * Nothing is skipped: without the tools, `requirePrintTools` fails with what to install. These
 * suites run under `npm run test:print` (the packages are not on a fresh clone; `.ci/run` installs
 * them).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { encodeIpp, IPP_OPERATION, IPP_TAG } from '../../src/printing/ippCodec.js';
import { type SmallRoster, seedSmallRoster } from './seed.js';
import { makeTempDir, removeDir } from './tempDir.js';
import { startTestService, type TestService } from './testService.js';

const run = promisify(execFile);

const TOOLS: ReadonlyArray<[string, string]> = [
  ['ippeveprinter', 'cups-ipp-utils'],
  ['dbus-daemon', 'dbus'],
  ['dbus-send', 'dbus'],
  ['avahi-daemon', 'avahi-daemon'],
  ['pdfinfo', 'poppler-utils'],
  ['pdftotext', 'poppler-utils'],
  ['tesseract', 'tesseract-ocr tesseract-ocr-eng'],
];

const onPath = async (tool: string): Promise<boolean> =>
  run('sh', ['-c', `command -v ${tool}`]).then(
    () => true,
    () => false,
  );

/** Fails, naming the Debian packages, when a tool the printing suites need is missing. */
export const requirePrintTools = async (): Promise<void> => {
  const missing: Array<[string, string]> = [];
  for (const [tool, pkg] of TOOLS) if (!(await onPath(tool))) missing.push([tool, pkg]);
  if (missing.length > 0) {
    const packages = [...new Set(missing.map(([, p]) => p))].join(' ');
    throw new Error(
      `the printing tests need ${missing.map(([t]) => t).join(', ')}: ` +
        `apt-get install -y --no-install-recommends ${packages} (as .ci/run does)`,
    );
  }
};

const succeeds = (cmd: string, args: ReadonlyArray<string>): Promise<boolean> =>
  run(cmd, [...args]).then(
    () => true,
    () => false,
  );

const systemBusAnswers = () =>
  succeeds('dbus-send', [
    '--system',
    '--print-reply',
    '--dest=org.freedesktop.DBus',
    '/org/freedesktop/DBus',
    'org.freedesktop.DBus.GetId',
  ]);

const until = async (what: string, check: () => Promise<boolean>, tries = 100): Promise<void> => {
  for (let i = 0; i < tries; i += 1) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error(`${what} did not come up`);
};

export interface DnsSd {
  stop(): Promise<void>;
}

/** A system D-Bus and avahi-daemon, each started only when not running; `stop` stops those it started. */
export const startDnsSd = async (): Promise<DnsSd> => {
  let busPid: number | undefined;
  let startedAvahi = false;
  if (!(await systemBusAnswers())) {
    await mkdir('/run/dbus', { recursive: true });
    // A pid file left by a bus that is gone keeps a new one from starting.
    await rm('/run/dbus/pid', { force: true });
    const { stdout } = await run('dbus-daemon', ['--system', '--fork', '--print-pid']);
    busPid = Number(stdout.trim());
    await until('the system D-Bus', systemBusAnswers);
  }
  if (!(await succeeds('avahi-daemon', ['--check']))) {
    await run('avahi-daemon', ['--no-drop-root', '-D']);
    startedAvahi = true;
    await until('avahi-daemon', () => succeeds('avahi-daemon', ['--check']));
  }
  return {
    async stop() {
      if (startedAvahi) await succeeds('avahi-daemon', ['-k']);
      if (busPid !== undefined && Number.isInteger(busPid) && busPid > 0) {
        try {
          process.kill(busPid, 'SIGTERM');
        } catch {
          // Already gone.
        }
      }
    },
  };
};

const TRUE_COMMAND = existsSync('/usr/bin/true') ? '/usr/bin/true' : '/bin/true';

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = a !== null && typeof a === 'object' ? a.port : 0;
      s.close(() => resolve(port));
    });
  });

/** Whether something answers IPP at the URI (a Get-Printer-Attributes with status OK). */
const answersIpp = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const body = encodeIpp({
      operation: IPP_OPERATION.getPrinterAttributes,
      requestId: 1,
      groups: [
        {
          tag: IPP_TAG.operation,
          attributes: [
            { tag: IPP_TAG.charset, name: 'attributes-charset', values: ['utf-8'] },
            { tag: IPP_TAG.naturalLanguage, name: 'attributes-natural-language', values: ['en'] },
            { tag: IPP_TAG.uri, name: 'printer-uri', values: [`ipp://localhost:${port}/ipp/print`] },
          ],
        },
      ],
    });
    const req = request(
      {
        host: 'localhost',
        port,
        path: '/ipp/print',
        method: 'POST',
        headers: { 'Content-Type': 'application/ipp' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
      },
    );
    req.on('error', () => resolve(false));
    req.setTimeout(1000, () => req.destroy());
    req.end(body);
  });

export interface IppEverywherePrinter {
  readonly uri: string;
  readonly spoolDir: string;
  /** The documents it kept, oldest first (`<job-id>-<job-name>.<ext>`). */
  documents(): string[];
  /** The printer is switched off (its process ends; the port refuses connections). */
  off(): Promise<void>;
  /** On again, on the same port, keeping the same spool folder. */
  on(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * An `ippeveprinter` on a free loopback port. `formats` is its `-f` list; without it the printer
 * lists what the package does by default (PWG Raster and Apple raster, no PDF).
 */
export const startIppEverywhere = async (
  options: { readonly formats?: string } = {},
): Promise<IppEverywherePrinter> => {
  const spoolDir = await makeTempDir('ippeve');
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    // Without a print command ippeveprinter "prints" each job for 5 to 15 s and answers every other
    // Print-Job with server-error-busy meanwhile (it holds one job at a time); `true` prints at once,
    // and `-k` still keeps the document.
    const args = ['-k', '-c', TRUE_COMMAND, '-d', spoolDir, '-p', String(port), '-n', 'localhost'];
    if (options.formats !== undefined) args.push('-f', options.formats);
    args.push(`Chamada Test ${port}`);
    child = spawn('ippeveprinter', args, { stdio: 'ignore' });
    await until('ippeveprinter', () => answersIpp(port), 200);
  };
  const off = async () => {
    const c = child;
    child = undefined;
    if (c === undefined || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await exited;
  };
  await start();
  return {
    uri: `ipp://localhost:${port}/ipp/print`,
    spoolDir,
    documents: () =>
      readdirSync(spoolDir)
        // `<job>-<name>.prn` is the print command's output, not what the printer received.
        .filter((f) => /^\d+-.*\.(pwg|pdf|jpg|urf)$/.test(f) && statSync(join(spoolDir, f)).isFile())
        .sort((a, b) => Number(a.split('-')[0]) - Number(b.split('-')[0]))
        .map((f) => join(spoolDir, f)),
    off,
    on: start,
    async stop() {
      await off();
      if (existsSync(spoolDir)) await removeDir(spoolDir);
    },
  };
};

/**
 * A printer per call, inside a test; every printer a test started is stopped after it (`afterEach`),
 * whatever the test did. Call at describe level.
 */
export const printersPerTest = (): ((options?: {
  readonly formats?: string;
}) => Promise<IppEverywherePrinter>) => {
  const started: IppEverywherePrinter[] = [];
  afterEach(async () => {
    for (const printer of started.splice(0)) await printer.stop();
  });
  return async (options = {}) => {
    const printer = await startIppEverywhere(options);
    started.push(printer);
    return printer;
  };
};

/** The documents `printer` has kept once there are `n`, read every 50 ms at most `polls` times (a bounded loop). */
export const keptDocuments = async (
  printer: IppEverywherePrinter,
  n: number,
  polls = 200,
): Promise<string[]> => {
  for (let i = 0; i < polls; i += 1) {
    const docs = printer.documents();
    if (docs.length >= n) return docs;
    await sleep(50);
  }
  throw new Error(`the printer kept ${printer.documents().length} documents, not ${n}`);
};

export interface PrintSuite {
  readonly url: () => string;
  readonly roster: () => SmallRoster;
}

/**
 * The set-up of a suite that prints to `ippeveprinter`s, within its `describe`: the tools checked,
 * DNS-SD up (a system D-Bus and avahi-daemon, `startDnsSd`), the service started with `env`, and
 * `students` seeded in one class with a session today. After the suite, `beforeStop` first (a
 * process that talks to the service), then the service, then what `startDnsSd` started; each only
 * if it had started.
 */
export const printSuite = (
  env: Readonly<Record<string, string>>,
  students: ReadonlyArray<string>,
  beforeStop?: () => Promise<void>,
): PrintSuite => {
  let dnsSd: DnsSd | undefined;
  let svc: TestService | undefined;
  let roster: SmallRoster | undefined;
  before(async () => {
    await requirePrintTools();
    dnsSd = await startDnsSd();
    svc = await startTestService({ env });
    roster = await seedSmallRoster(svc.url, students, new Date().toISOString().slice(0, 10));
  });
  after(async () => {
    await beforeStop?.();
    await svc?.dispose();
    await dnsSd?.stop();
  });
  const started = <A>(value: A | undefined): A => {
    if (value === undefined) throw new Error('the print suite has not started');
    return value;
  };
  return { url: () => started(svc).url, roster: () => started(roster) };
};
