/**
 * The kiosk prints through the server's print jobs (issue #38 item 4, 0051): the tablet picks a
 * printer the office set up (a ZPL listener on 127.0.0.1 that keeps what it is sent, registered through
 * the API), and each check-in's labels go to it as a job right after the check-in, the printer's answer
 * on screen. The printer off: the failure is shown with "Reimprimir"; back on, the reprint carries the
 * same code. The network cut: the browser's print, as before. axe-core finds nothing on the screen.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { expect } from 'chai';
import * as t from 'io-ts';
import { type ZplPrinter, zplPrinter } from '../support/fakePrinters.js';
import { decodeAs } from '../support/http.js';
import {
  type Api,
  eventually,
  type KioskPage,
  kioskSuite,
  type Ministry,
  openMinistryDesk,
  waitForStatus,
} from './kioskHarness.js';

const PRINTER_NAME = 'Recepção 1';

/** The fields of a ZPL job, in order. */
const fieldsOf = (zpl: string): string[] => [...zpl.matchAll(/\^FD(.*?)\^FS/g)].map((m) => m[1] ?? '');

/** Whether a ZPL job prints `name` (wrapped over fields as the label's width asks) and `code` (one field). */
const printsChild = (zpl: string, name: string, code: string): boolean => {
  const fields = fieldsOf(zpl);
  return fields.join(' ').includes(name) && fields.includes(code);
};

const AxeResults = t.type({
  violations: t.array(t.type({ id: t.string, help: t.string, nodes: t.array(t.type({ html: t.string })) })),
});

describe('kiosk (e2e): labels printed through the server to the tablet’s printer', function () {
  this.timeout(180_000);
  let api: Api;
  let ministry: Ministry;
  let kiosk: KioskPage;
  let printer: ZplPrinter;

  const suite = kioskSuite(['print-jobs'], {
    // The shortest bound the configuration allows: a printer that is off fails its job within seconds.
    env: () => ({ PRINT_GIVE_UP_SECONDS: '5' }),
    prepare: async (admin) => {
      printer = await zplPrinter();
      await admin.create(
        '/api/v1/printers',
        { name: PRINTER_NAME, protocol: 'zpl', uri: printer.uri, layout: 'brother62' },
        'printerId',
      );
    },
  });
  before(async () => {
    ({ api, ministry } = suite());
    kiosk = suite().tablet('print-jobs');
    await openMinistryDesk(kiosk, ministry.chamador);
  });
  // After the suite's own `after` (Chromium, then the service), as before.
  after(() => printer?.close());

  /** Checks `name` in at the desk; answers the code on the screen's label. */
  const checkIn = async (typed: string, name: string): Promise<string> => {
    const { page } = kiosk;
    await page.getByRole('searchbox').fill(typed);
    await page.locator('li.child', { hasText: name }).getByRole('button', { name: 'Entrada' }).click();
    await page.locator('body[data-screen="label"]').waitFor();
    return (await page.locator('[data-test="label"] [data-test="label-code"]').textContent()) ?? '';
  };

  const status = () => kiosk.page.locator('[data-test="print-status"]');
  const waitForState = (state: string, timeout = 30_000) =>
    kiosk.page.locator(`[data-test="print-status"][data-state="${state}"]`).waitFor({ timeout });
  const done = async () => {
    await kiosk.page.getByRole('button', { name: 'Concluir' }).click();
    await kiosk.page.locator('body[data-screen="desk"]').waitFor();
  };

  it('the tablet picks the printer on the label screen, from the server’s list, and keeps it', async () => {
    const { page } = kiosk;
    const code = await checkIn('joao', 'João Pedro Araújo');
    const choice = page.getByLabel('Imprimir etiquetas por');
    // The screen asks the server for its printers as it opens; under load the answer may come after.
    await eventually(async () =>
      expect(await choice.locator('option').allTextContents()).to.deep.equal([
        'Navegador (diálogo de impressão)',
        PRINTER_NAME,
      ]),
    );
    // Nothing is sent before a printer is chosen: this check-in goes through the browser unless asked.
    expect(await status().textContent()).to.equal('');
    await choice.selectOption({ label: PRINTER_NAME });
    await page.getByRole('button', { name: `Imprimir em ${PRINTER_NAME}` }).click();
    await waitForState('done');
    expect(await status().textContent()).to.equal(`Impresso em ${PRINTER_NAME}`);
    expect(printsChild(printer.jobs.at(-1) ?? '', 'João Pedro Araújo', code), printer.jobs.at(-1)).to.equal(
      true,
    );
    await done();
  });

  it('a check-in prints its labels as a job at once: the child’s name and code reach the printer', async () => {
    const { page } = kiosk;
    const before = printer.jobs.length;
    const code = await checkIn('maria', 'Maria Antônia Souza');
    // The check-in's answer came first: the label screen is up while the job goes.
    await waitForState('done');
    expect(await status().textContent()).to.equal(`Impresso em ${PRINTER_NAME}`);
    expect(printer.jobs).to.have.length(before + 1);
    const zpl = printer.jobs.at(-1) ?? '';
    expect(printsChild(zpl, 'Maria Antônia Souza', code), zpl).to.equal(true);
    // The guardian's stub carries the family's pass as a QR code, the same the server answers.
    const student = ministry.students.get('Maria Antônia Souza') ?? '';
    const pass = decodeAs(
      t.type({ content: t.string }),
      (await api.get(`/api/v1/students/${student}/family-pass/content`)).json,
    ).content;
    expect(zpl).to.contain(`^FDMA,${pass}^FS`);
    expect(await page.getByLabel('Imprimir etiquetas por').inputValue()).to.not.equal('');
  });

  it('axe-core finds no violation on the label screen with the printer’s answer', async () => {
    const { page } = kiosk;
    const axe = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    await page.evaluate(axe);
    // `axe` is what the line above defined on the page; its results come back as JSON, decoded here.
    const results = decodeAs(
      AxeResults,
      await page.evaluate('axe.run(document).then((r) => JSON.parse(JSON.stringify(r)))'),
    );
    expect(
      results.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.html).join(', ')})`),
    ).to.deep.equal([]);
    await done();
  });

  it('the printer off: the failure is shown with Reimprimir; back on, the reprint has the same code', async () => {
    const { page } = kiosk;
    await printer.off();
    const before = printer.jobs.length;
    const code = await checkIn('ana lu', 'Ana Lúcia Ferreira');
    await waitForState('failed', 60_000);
    expect(await status().textContent()).to.match(new RegExp(`^Não imprimiu em ${PRINTER_NAME}: .+`));
    const reprint = page.getByRole('button', { name: 'Reimprimir' });
    expect(await reprint.isVisible()).to.equal(true);
    expect(printer.jobs).to.have.length(before);
    await printer.on();
    await reprint.click();
    await waitForState('done');
    expect(await reprint.isVisible()).to.equal(false);
    expect(printer.jobs).to.have.length(before + 1);
    expect(printsChild(printer.jobs.at(-1) ?? '', 'Ana Lúcia Ferreira', code), printer.jobs.at(-1)).to.equal(
      true,
    );
    await done();
  });

  it('the network cut: the labels go through the browser’s print, as before, and nothing to the printer', async () => {
    const { page, context } = kiosk;
    await context.setOffline(true);
    await waitForStatus(kiosk, { online: false });
    // Chromium's headless print dialog is counted instead of opened.
    await page.evaluate('window.printed = 0; window.print = () => { window.printed += 1; }');
    const before = printer.jobs.length;
    const code = await checkIn('luiza', 'Luíza Gonçalves');
    await waitForState('browser');
    expect(await status().textContent()).to.equal(
      'Sem conexão com o servidor: imprima pelo navegador (Imprimir).',
    );
    expect(await page.locator('[data-test="stub"] .code').textContent()).to.equal(code);
    await page.getByRole('button', { name: 'Imprimir', exact: true }).click();
    expect(decodeAs(t.number, await page.evaluate('window.printed'))).to.equal(1);
    await done();
    await context.setOffline(false);
    await waitForStatus(kiosk, { online: true, pending: 0 });
    // Back online, the offline check-in reached the server, and no job was made of it meanwhile.
    await eventually(async () => expect(printer.jobs).to.have.length(before));
    expect(kiosk.problems()).to.deep.equal([]);
  });
});
