/**
 * Printers and print jobs, black-box (0051): the office sets printers up, the door queues labels,
 * and the service prints them to printers on 127.0.0.1 that the test controls: a Zebra-type
 * listener that keeps the ZPL it is sent, a port nothing listens on, an HTTP server answering
 * garbage where IPP should be, and one that takes the connection and never answers. The real IPP
 * printer is in test/print (npm run test:print).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { decodeConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/log/logger.js';
import { type RunningService, startService } from '../../src/service.js';
import { deadPrinterUri, garbageIppPrinter, silentPrinter, zplPrinter } from '../support/fakePrinters.js';
import { useService } from '../support/harness.js';
import { closedAfterEach } from '../support/hooks.js';
import { call, decodeAs, expectEnvelope, issuePaths } from '../support/http.js';
import {
  checkInAll,
  createPrinter,
  finishedJob,
  printedJob,
  printLabels,
  readJob,
} from '../support/printing.js';
import { createdId, seedSmallRoster } from '../support/seed.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';
import { DEV_TOKENS, mutationHeaders, twoInstancesOnOneCouch } from '../support/testService.js';

const PrinterC = t.type({
  printerId: t.string,
  name: t.string,
  protocol: t.string,
  uri: t.string,
  layout: t.string,
  labelLanguage: t.string,
});
const ADMIN = DEV_TOKENS.DEV_ADMIN_TOKEN;
const today = () => new Date().toISOString().slice(0, 10);

describe('printers set up in the office', function () {
  this.timeout(60_000);
  const h = useService({ env: { PRINTER_HOSTS: 'printers.example.org,127.0.0.1' } });

  const body = {
    name: 'Recepção 1',
    protocol: 'ipp',
    uri: 'ipp://printers.example.org/ipp/print',
    layout: 'brother62',
  };

  it('an ADMIN creates, lists, changes and removes a printer; each change is audited', async () => {
    const printerId = await createPrinter(h.url, { ...body, protocol: 'ipp' });
    const list = await h.get(`/api/v1/printers`, ADMIN);
    expect(list.status).to.equal(200);
    const listed = decodeAs(t.type({ items: t.array(PrinterC) }), list.json).items.find(
      (p) => p.printerId === printerId,
    );
    expect(listed).to.deep.include({ ...body, labelLanguage: 'pt-BR' });
    const patched = await h.send(
      'PATCH',
      `/api/v1/printers/${printerId}`,
      { protocol: 'zpl', uri: 'tcp://127.0.0.1:9100', labelLanguage: 'en' },
      ADMIN,
    );
    expect(patched.status, patched.text).to.equal(200);
    expect(decodeAs(PrinterC, patched.json)).to.deep.include({
      protocol: 'zpl',
      uri: 'tcp://127.0.0.1:9100',
      layout: 'brother62',
      labelLanguage: 'en',
    });
    const removed = await h.send('DELETE', `/api/v1/printers/${printerId}`, undefined, ADMIN);
    expect(removed.status, removed.text).to.equal(200);
    expectEnvelope(await h.get(`/api/v1/printers/${printerId}`, ADMIN), 404, 'NOT_FOUND');
    const audit = await h.get(`/api/v1/audit-logs?subjectId=${printerId}`, ADMIN);
    expect(audit.status, audit.text).to.equal(200);
    const endpoints = decodeAs(
      t.type({ items: t.array(t.type({ endpoint: t.string })) }),
      audit.json,
    ).items.map((e) => e.endpoint);
    expect(endpoints).to.include.members([
      'POST /api/v1/printers',
      'PATCH /api/v1/printers/{printerId}',
      'DELETE /api/v1/printers/{printerId}',
    ]);
  });

  it('a creation retried under its Idempotency-Key is the same printer', async () => {
    const key = randomUUID();
    const send = () =>
      call(`${h.url}/api/v1/printers`, {
        method: 'POST',
        headers: mutationHeaders(ADMIN, key),
        body: JSON.stringify(body),
      });
    const first = decodeAs(PrinterC, (await send()).json);
    const again = await send();
    expect(again.status).to.equal(201);
    expect(decodeAs(PrinterC, again.json).printerId).to.equal(first.printerId);
  });

  const refusals: ReadonlyArray<[string, Record<string, unknown>, string]> = [
    ['an unknown protocol', { ...body, protocol: 'lpd' }, 'body.protocol'],
    [
      'a URI that is not ipp://, ipps:// or tcp://',
      { ...body, uri: 'http://printers.example.org:631/ipp/print' },
      'body.uri',
    ],
    ['an IPP printer on a tcp:// URI', { ...body, uri: 'tcp://printers.example.org:9100' }, 'body.uri'],
    ['a ZPL printer on an ipp:// URI', { ...body, protocol: 'zpl' }, 'body.uri'],
    ['a host PRINTER_HOSTS does not list', { ...body, uri: 'ipp://10.1.2.3/ipp/print' }, 'body.uri'],
    ['a layout without a page of its own', { ...body, layout: 'sheet' }, 'body.layout'],
  ];
  for (const [what, sent, path] of refusals) {
    it(`refuses ${what} with 400 naming ${path}`, async () => {
      const r = await h.send('POST', `/api/v1/printers`, sent, ADMIN);
      expect(issuePaths(expectEnvelope(r, 400, 'VALIDATION_FAILED'))).to.include(path);
    });
  }

  it('a change that leaves the printer inconsistent is 400 and changes nothing', async () => {
    const printerId = await createPrinter(h.url, { ...body, protocol: 'ipp' });
    const r = await h.send('PATCH', `/api/v1/printers/${printerId}`, { protocol: 'zpl' }, ADMIN);
    expect(issuePaths(expectEnvelope(r, 400, 'VALIDATION_FAILED'))).to.deep.equal(['body.uri']);
    const read = await h.get(`/api/v1/printers/${printerId}`, ADMIN);
    expect(decodeAs(PrinterC, read.json).protocol).to.equal('ipp');
  });

  it('only an ADMIN sets printers up; the door may not', async () => {
    const printerId = await createPrinter(h.url, { ...body, protocol: 'ipp' });
    expectEnvelope(
      await h.send('POST', `/api/v1/printers`, body, DEV_TOKENS.DEV_CALLER_TOKEN),
      403,
      'FORBIDDEN_ROLE',
    );
    for (const method of ['PATCH', 'DELETE'] as const)
      expectEnvelope(
        await h.send(
          method,
          `/api/v1/printers/${printerId}`,
          method === 'PATCH' ? { name: 'X' } : undefined,
          DEV_TOKENS.DEV_CALLER_TOKEN,
        ),
        403,
        'FORBIDDEN_ROLE',
      );
    expectEnvelope(
      await h.send('POST', `/api/v1/printers/${printerId}/test`, undefined, DEV_TOKENS.DEV_CALLER_TOKEN),
      403,
      'FORBIDDEN_ROLE',
    );
  });

  it('the door lists printers and reads one to choose its own, without where they are reached', async () => {
    const printerId = await createPrinter(h.url, { ...body, name: 'Recepção 2', protocol: 'ipp' });
    const DoorPrinter = t.exact(
      t.type({
        printerId: t.string,
        name: t.string,
        protocol: t.string,
        layout: t.string,
        labelLanguage: t.string,
      }),
    );
    const list = await h.get(`/api/v1/printers`, DEV_TOKENS.DEV_CALLER_TOKEN);
    expect(list.status, list.text).to.equal(200);
    const items = decodeAs(t.type({ items: t.array(t.UnknownRecord) }), list.json).items;
    const mine = items.find((p) => p.printerId === printerId);
    expect(mine).to.deep.include({ name: 'Recepção 2', layout: 'brother62', protocol: 'ipp' });
    for (const p of items) expect(p, 'the door is not told a URI').to.not.have.property('uri');
    const one = await h.get(`/api/v1/printers/${printerId}`, DEV_TOKENS.DEV_CALLER_TOKEN);
    expect(one.status, one.text).to.equal(200);
    expect(decodeAs(t.UnknownRecord, one.json)).to.not.have.property('uri');
    expect(decodeAs(DoorPrinter, one.json).name).to.equal('Recepção 2');
    // The ADMIN's reading still has it.
    const admin = await h.get(`/api/v1/printers/${printerId}`, ADMIN);
    expect(decodeAs(PrinterC, admin.json).uri).to.equal(body.uri);
    // Those who do not check children in do not read printers at all.
    for (const token of [DEV_TOKENS.DEV_CADASTRO_TOKEN, DEV_TOKENS.DEV_REPORTS_TOKEN]) {
      expectEnvelope(await h.get(`/api/v1/printers`, token), 403, 'FORBIDDEN_ROLE');
      expectEnvelope(await h.get(`/api/v1/printers/${printerId}`, token), 403, 'FORBIDDEN_ROLE');
    }
  });
});

describe('print jobs on the server', function () {
  this.timeout(90_000);
  // The shortest bound the configuration allows, so failures come within seconds.
  const h = useService({ env: { PRINT_GIVE_UP_SECONDS: '5' } });
  let sessionId: string;
  let classId: string;
  let studentIds: ReadonlyArray<string>;
  /** A ZPL printer the ADMIN sets up at `uri`. */
  const closing = closedAfterEach();
  const zplPrinterAt = (name: string, uri: string, layout: string, more: { labelLanguage?: string } = {}) =>
    createPrinter(h.url, { name, protocol: 'zpl', uri, layout, ...more });
  before(async () => {
    const roster = await seedSmallRoster(
      h.url,
      [
        'Ana Beatriz',
        'Bruno Souza',
        'Caio Lima',
        'Davi Rocha',
        'Eva Reis',
        'Gael Nunes',
        'Hana Melo',
        'Ivo Paz',
        'Jade Luz',
        'Kaio Sá',
      ],
      today(),
    );
    sessionId = roster.sessionId;
    classId = roster.classId;
    studentIds = roster.studentIds;
  });

  it("the guardian's stub carries the family pass as a ZPL QR code (^BQ), and none for a child without a family", async () => {
    const printer = closing(await zplPrinter());
    const printerId = await zplPrinterAt('Zebra QR', printer.uri, 'brother62');
    const withPhone = await createdId(
      h.url,
      '/api/v1/students',
      {
        displayName: 'Iris Prado',
        guardianName: 'Rita Prado',
        phones: [{ number: '11 98888-1234', qualifier: 'mãe' }],
        classId,
      },
      'studentId',
    );
    const passRead = await h.get(
      `/api/v1/students/${withPhone}/family-pass/content`,
      DEV_TOKENS.DEV_CALLER_TOKEN,
    );
    const pass = decodeAs(t.type({ content: t.string }), passRead.json).content;
    // The child without a phone first: the stub's pass is the first family the job's children have.
    const checkIns = await checkInAll(h.url, sessionId, [studentIds[7] ?? '', withPhone]);
    const job = await printedJob(
      h.url,
      printerId,
      checkIns.map((c) => c.checkInId),
    );
    expect(job.status, JSON.stringify(job)).to.equal('done');
    const formats = (printer.jobs[0] ?? '').split('^XZ').filter((f) => f.includes('^XA'));
    expect(formats).to.have.length(3);
    const qrFields = (f: string) =>
      [...f.matchAll(/\^BQN,2,(\d+)\^FD(.*?)\^FS/g)].map((m) => [Number(m[1]), m[2]]);
    expect(qrFields(formats[0] ?? ''), "a child's label has no QR code").to.deep.equal([]);
    expect(qrFields(formats[1] ?? '')).to.deep.equal([]);
    // 28 mm at 203 dpi is 224 dots: a version-3 symbol (29 modules) and its quiet zone at 6 dots a module.
    expect(qrFields(formats[2] ?? '')).to.deep.equal([[6, `MA,${pass}`]]);

    const alone = await checkInAll(h.url, sessionId, [studentIds[8] ?? '']);
    const none = await printedJob(
      h.url,
      printerId,
      alone.map((c) => c.checkInId),
    );
    expect(none.status).to.equal('done');
    expect(printer.jobs[1] ?? '', 'no family, no pass').to.not.contain('^BQ');
  });

  it('those who do not check children in queue no print job', async () => {
    const printerId = await zplPrinterAt('Zebra fechada', 'tcp://127.0.0.1:9', 'brother62');
    const [checkIn] = await checkInAll(h.url, sessionId, [studentIds[9] ?? '']);
    for (const token of [DEV_TOKENS.DEV_CADASTRO_TOKEN, DEV_TOKENS.DEV_REPORTS_TOKEN])
      expectEnvelope(
        await h.send('POST', `/api/v1/print-jobs`, { printerId, checkInIds: [checkIn?.checkInId] }, token),
        403,
        'FORBIDDEN_ROLE',
      );
  });

  it('prints a family on a Zebra-type printer as ZPL: a label per child, the stub with each code', async () => {
    const printer = closing(await zplPrinter());
    const printerId = await zplPrinterAt('Zebra', printer.uri, 'label4x6');
    const checkIns = await checkInAll(h.url, sessionId, [studentIds[0] ?? '', studentIds[1] ?? '']);
    const jobId = await printLabels(
      h.url,
      printerId,
      checkIns.map((c) => c.checkInId),
    );
    const job = await finishedJob(h.url, jobId);
    expect(job).to.deep.include({ status: 'done', attempts: 1 });
    expect(printer.jobs).to.have.length(1);
    const zpl = printer.jobs[0] ?? '';
    const formats = zpl.split('^XZ').filter((f) => f.includes('^XA'));
    expect(formats, 'two labels and the stub').to.have.length(3);
    for (const f of formats) {
      expect(f).to.contain('^CI28');
      expect(f).to.contain('^PW812');
      expect(f).to.contain('^LL1218');
    }
    const fields = (f: string) => [...f.matchAll(/\^FD(.*?)\^FS/g)].map((m) => m[1]);
    expect(fields(formats[0] ?? '')).to.include.members(['Ana Beatriz', 'Turma', checkIns[0]?.code]);
    expect(fields(formats[1] ?? '')).to.include.members(['Bruno Souza', checkIns[1]?.code]);
    expect(fields(formats[2] ?? '')).to.include.members([
      'Ana Beatriz',
      checkIns[0]?.code,
      'Bruno Souza',
      checkIns[1]?.code,
      'Apresente este código na saída.',
    ]);
  });

  it('a job retried under its Idempotency-Key is the same job, printed once', async () => {
    const printer = closing(await zplPrinter());
    const printerId = await zplPrinterAt('Zebra', printer.uri, 'brother62');
    const [c] = await checkInAll(h.url, sessionId, [studentIds[5] ?? '']);
    const key = randomUUID();
    const send = () =>
      call(`${h.url}/api/v1/print-jobs`, {
        method: 'POST',
        headers: mutationHeaders(DEV_TOKENS.DEV_CALLER_TOKEN, key),
        body: JSON.stringify({ printerId, checkInIds: [c?.checkInId] }),
      });
    const first = decodeAs(t.type({ jobId: t.string }), (await send()).json).jobId;
    const again = await send();
    expect(again.status).to.equal(202);
    expect(decodeAs(t.type({ jobId: t.string }), again.json).jobId).to.equal(first);
    expect((await finishedJob(h.url, first)).status).to.equal('done');
    expect(printer.jobs).to.have.length(1);
  });

  it("an ADMIN's test label goes to the printer as a job of its own", async () => {
    const printer = closing(await zplPrinter());
    const printerId = await zplPrinterAt('Zebra', printer.uri, 'brother62', { labelLanguage: 'en' });
    const r = await h.send('POST', `/api/v1/printers/${printerId}/test`, undefined, ADMIN);
    expect(r.status, r.text).to.equal(202);
    const job = await finishedJob(h.url, decodeAs(t.type({ jobId: t.string }), r.json).jobId);
    expect(job.status).to.equal('done');
    expect(printer.jobs[0]).to.contain('^FDTESTE1^FS').and.to.contain("^FDGuardian's stub");
  });

  it('a job naming an unknown printer or check-in is 400 at its path', async () => {
    const r = await h.send(
      'POST',
      `/api/v1/print-jobs`,
      { printerId: randomUUID(), checkInIds: [randomUUID()] },
      DEV_TOKENS.DEV_CALLER_TOKEN,
    );
    expect(issuePaths(expectEnvelope(r, 400, 'VALIDATION_FAILED'))).to.deep.equal([
      'body.printerId',
      'body.checkInIds.0',
    ]);
    const none = await h.send(
      'POST',
      `/api/v1/print-jobs`,
      { printerId: randomUUID(), checkInIds: [] },
      DEV_TOKENS.DEV_CALLER_TOKEN,
    );
    expect(issuePaths(expectEnvelope(none, 400, 'VALIDATION_FAILED'))).to.deep.equal(['body.checkInIds']);
  });

  it('a printer that is off fails the job within the bound with a clear error; the next job prints once it is back', async () => {
    const printer = closing(await zplPrinter());
    await printer.off();
    const printerId = await zplPrinterAt('Zebra', printer.uri, 'dymo30252');
    const [first] = await checkInAll(h.url, sessionId, [studentIds[2] ?? '']);
    const failed = await printedJob(h.url, printerId, [first?.checkInId ?? '']);
    expect(failed.status).to.equal('failed');
    expect(failed.attempts).to.be.greaterThan(1);
    expect(failed.error?.code).to.equal('PRINTER_UNREACHABLE');
    expect(failed.error?.message).to.match(/could not be reached \(ECONNREFUSED\)/);
    await printer.on();
    const again = await printedJob(h.url, printerId, [first?.checkInId ?? '']);
    expect(again.status).to.equal('done');
    expect(printer.jobs).to.have.length(1);
    expect(printer.jobs[0]).to.contain(first?.code);
  });

  it('an unreachable printer and one answering garbage where IPP should be fail the job, each with its reason', async () => {
    const garbage = closing(await garbageIppPrinter());
    const [c] = await checkInAll(h.url, sessionId, [studentIds[3] ?? '']);
    const dead = await createPrinter(h.url, {
      name: 'Off',
      protocol: 'zpl',
      uri: await deadPrinterUri(),
      layout: 'brother62',
    });
    const junk = await createPrinter(h.url, {
      name: 'Junk',
      protocol: 'ipp',
      uri: garbage.uri,
      layout: 'brother62',
    });
    const [a, b] = await Promise.all([
      printLabels(h.url, dead, [c?.checkInId ?? '']).then((id) => finishedJob(h.url, id)),
      printLabels(h.url, junk, [c?.checkInId ?? '']).then((id) => finishedJob(h.url, id)),
    ]);
    expect(a.error?.code).to.equal('PRINTER_UNREACHABLE');
    expect(b).to.deep.include({ status: 'failed' });
    expect(b.error?.code).to.equal('PRINTER_BAD_ANSWER');
    expect(b.error?.message).to.contain("the printer's answer is not IPP");
    expect(garbage.requests()).to.be.greaterThan(1);
  });

  it('no request waits on a printer: the job is accepted and check-ins go on while the printer holds the connection', async () => {
    const silent = closing(await silentPrinter());
    const printerId = await zplPrinterAt('Mute', silent.uri, 'brother62');
    const [c] = await checkInAll(h.url, sessionId, [studentIds[4] ?? '']);
    const jobId = await printLabels(h.url, printerId, [c?.checkInId ?? '']);
    // The printer is holding the job's connection open and the service still answers at once.
    for (let i = 0; i < 100 && silent.connections() === 0; i += 1)
      await new Promise((r) => setTimeout(r, 20));
    expect(silent.connections()).to.equal(1);
    expect((await readJob(h.url, jobId)).status).to.equal('printing');
    const other = await h.send('POST', `/api/v1/printers/${printerId}/test`, undefined, ADMIN);
    expect(other.status).to.equal(202);
    const [next] = await checkInAll(h.url, sessionId, [studentIds[6] ?? '']);
    expect(next?.code).to.be.a('string');
    expect((await readJob(h.url, jobId)).status).to.equal('printing');
  });
});

/** A Zebra-type printer on brother62 labels, as the ADMIN sets it up on the service at `url`. */
const zebraAt = (url: string, uri: string): Promise<string> =>
  createPrinter(url, { name: 'Zebra', protocol: 'zpl', uri, layout: 'brother62' });

describe('print jobs across a restart', function () {
  this.timeout(90_000);
  it('a queued job survives a stop and prints after the next start', async () => {
    const dataDir = await makeTempDir('print-restart');
    const printer = await zplPrinter();
    await printer.off();
    const config = decodeConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      AUTH_MODE: 'dev',
      ...DEV_TOKENS,
      PRINT_GIVE_UP_SECONDS: '120',
    });
    if (config._tag === 'Left') throw new Error(config.left.join('; '));
    const start = () => startService(config.right, { logger: createLogger('silent') });
    let svc: RunningService | undefined = await start();
    try {
      const roster = await seedSmallRoster(svc.url, ['Flora Dias'], today());
      const printerId = await zebraAt(svc.url, printer.uri);
      const [c] = await checkInAll(svc.url, roster.sessionId, roster.studentIds);
      const jobId = await printLabels(svc.url, printerId, [c?.checkInId ?? '']);
      let seen = await readJob(svc.url, jobId);
      for (let i = 0; i < 200 && seen.attempts === 0; i += 1) {
        await new Promise((r) => setTimeout(r, 20));
        seen = await readJob(svc.url, jobId);
      }
      expect(seen.attempts).to.be.at.least(1);
      await svc.stop(1000);
      svc = undefined;
      await printer.on();
      svc = await start();
      const job = await finishedJob(svc.url, jobId);
      expect(job.status).to.equal('done');
      expect(printer.jobs).to.have.length(1);
      expect(printer.jobs[0]).to.contain('Flora Dias').and.to.contain(c?.code);
    } finally {
      await svc?.stop(1000);
      await printer.close();
      await removeDir(dataDir);
    }
  });
  it('a printer set up before PRINTER_HOSTS left it out is not reached: its jobs fail, refused', async () => {
    const dataDir = await makeTempDir('print-hosts');
    const printer = await zplPrinter();
    const configWith = (env: Record<string, string>) => {
      const c = decodeConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        AUTH_MODE: 'dev',
        ...DEV_TOKENS,
        ...env,
      });
      if (c._tag === 'Left') throw new Error(c.left.join('; '));
      return c.right;
    };
    let svc: RunningService | undefined = await startService(configWith({}), {
      logger: createLogger('silent'),
    });
    try {
      const roster = await seedSmallRoster(svc.url, ['Iris Pinto'], today());
      const printerId = await zebraAt(svc.url, printer.uri);
      const [c] = await checkInAll(svc.url, roster.sessionId, roster.studentIds);
      await svc.stop(1000);
      svc = await startService(configWith({ PRINTER_HOSTS: 'printers.example.org' }), {
        logger: createLogger('silent'),
      });
      const job = await printedJob(svc.url, printerId, [c?.checkInId ?? '']);
      expect(job).to.deep.include({ status: 'failed', attempts: 1 });
      expect(job.error?.code).to.equal('PRINTER_REFUSED');
      expect(printer.jobs).to.have.length(0);
    } finally {
      await svc?.stop(1000);
      await printer.close();
      await removeDir(dataDir);
    }
  });
});

describe('print jobs on two instances sharing one CouchDB-protocol server', function () {
  this.timeout(120_000);
  // Both workers sweep for open jobs; a short sweep would not change what is tested, only its pace.
  const instances = twoInstancesOnOneCouch({ PRINT_GIVE_UP_SECONDS: '60' });

  it('jobs retried while the printer is off are printed once each when it is back, whichever instance sends them', async () => {
    const { a, b } = instances();
    const printer = await zplPrinter();
    try {
      await printer.off();
      const roster = await seedSmallRoster(a.url, ['Joana Reis', 'Lia Prado', 'Mia Costa'], today());
      const printerId = await createPrinter(a.url, {
        name: 'Zebra',
        protocol: 'zpl',
        uri: printer.uri,
        layout: 'brother62',
      });
      const checkIns = await checkInAll(a.url, roster.sessionId, roster.studentIds);
      // Jobs queued through both instances; each worker retries its own and sweeps the other's.
      const jobs = await Promise.all(
        checkIns.map((c, i) => printLabels(i % 2 === 0 ? a.url : b.url, printerId, [c.checkInId])),
      );
      // Each job has met the printer off, and the sweeps of both have had their turn (5 s each).
      for (const jobId of jobs) {
        let seen = await readJob(a.url, jobId);
        for (let i = 0; i < 200 && seen.attempts < 2; i += 1) {
          await new Promise((r) => setTimeout(r, 50));
          seen = await readJob(a.url, jobId);
        }
        expect(seen.status, JSON.stringify(seen)).to.be.oneOf(['queued', 'printing']);
      }
      await new Promise((r) => setTimeout(r, 5_500));
      await printer.on();
      for (const jobId of jobs) expect((await finishedJob(b.url, jobId)).status).to.equal('done');
      // A second look, past both instances' next sweeps: nothing printed again.
      await new Promise((r) => setTimeout(r, 5_500));
      expect(printer.jobs).to.have.length(jobs.length);
      // Each child's labels reached the printer in one job, once.
      for (const c of checkIns)
        expect(printer.jobs.filter((z) => z.includes(`^FD${c.code}^FS`))).to.have.length(1);
    } finally {
      await printer.close();
    }
  });
});
