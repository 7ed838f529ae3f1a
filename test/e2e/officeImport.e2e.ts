/**
 * The office in a real Chromium against the real service (JWT mode): an ADMIN signs in, imports a
 * spreadsheet of forty children with three bad rows (dry run: every error with its row and column;
 * nothing stored), applies it (the good rows stored, the bad reported), finds a child in the list
 * and schedules the class weekly. Screenshots of each page go to test-artifacts/e2e/.
 */
import path from 'node:path';
import { expect } from 'chai';
import * as t from 'io-ts';
import type { Browser, Page } from 'playwright-core';
import { DEFAULT_TIME_ZONE } from '../../src/domain/schedules.js';
import { decodeAs } from '../support/http.js';
import { ADMIN, type Api, ARTIFACTS, browserSuite, openOffice, signInToOffice } from './kioskHarness.js';

const GOOD = 40;
const csv = (): string => {
  const rows = Array.from(
    { length: GOOD },
    (_, i) =>
      `Criança ${String(i).padStart(2, '0')} Teste;${String((i % 28) + 1).padStart(2, '0')}/05/2019;Responsável ${i};(11) 9${String(87_650_000 + i)};Turma Sol`,
  );
  // Rows 6, 13 and 42: an impossible date, a phone without area code, a class that does not exist.
  rows[4] = 'Bia Errada;31/02/2019;Carla;(11) 98765-0000;Turma Sol';
  rows[11] = 'Caio Errado;01/01/2019;Rita;98765-4321;Turma Sol';
  rows.push('Davi Errado;01/01/2019;Lia;(21) 99876-5432;Turma Lua');
  return ['Nome;Data de nascimento;Responsável;Telefone;Turma', ...rows].join('\r\n');
};

const Page_ = t.type({
  items: t.array(t.type({ displayName: t.string })),
  nextCursor: t.union([t.string, t.null]),
});

describe('office (e2e): import a spreadsheet with bad rows, apply, schedule', function () {
  this.timeout(180_000);
  let browser: Browser;
  let api: Api;
  let page: Page;
  const problems: string[] = [];
  const shot = (name: string) =>
    page.screenshot({ path: path.join(ARTIFACTS, `office-${name}.png`), fullPage: true });

  const suite = browserSuite({
    prepare: async (api) => {
      await api.create('/api/v1/classes', { name: 'Turma Sol' }, 'classId');
    },
  });
  before(async () => {
    ({ api, browser } = suite());
    // In the church's time zone, as its office is: the schedule form's first day is the browser's
    // today, and the service makes a schedule's sessions from today in the schedule's zone. In UTC, a
    // Sunday evening there (past 21:00) put the form on Monday, and the class had one Sunday less.
    page = await openOffice(browser, api.url, problems, { timezoneId: DEFAULT_TIME_ZONE });
  });

  it('signs in in Portuguese', async () => {
    await shot('sign-in');
    await signInToOffice(page, ADMIN);
    await shot('children-empty');
  });

  it('a dry run shows every bad row with its column and stores nothing', async () => {
    await page.getByRole('link', { name: 'Importar planilha' }).click();
    await page.locator('body[data-page="import"]').waitFor();
    await page
      .getByLabel('Arquivo CSV')
      .setInputFiles({ name: 'turma.csv', mimeType: 'text/csv', buffer: Buffer.from(csv()) });
    await page.getByRole('button', { name: 'Conferir' }).click();
    const summary = page.locator('[data-test="import-summary"]');
    await summary.waitFor();
    expect(await summary.textContent())
      .to.contain('41 linhas: 38 seriam novas')
      .and.contain('3 com erro');
    for (const [row, column] of [
      [6, 'Data de nascimento'],
      [13, 'Telefone'],
      [42, 'Turma'],
    ] as const) {
      const line = page.locator(`tr[data-row="${row}"]`);
      expect(await line.getAttribute('class')).to.equal('error');
      expect(await line.textContent()).to.contain(column);
    }
    await shot('import-dry-run');
    const listed = decodeAs(Page_, (await api.get('/api/v1/students?limit=200')).json);
    // The seed's demo roster is there already; none of the file's children is.
    expect(listed.items.filter((s) => s.displayName.includes('Teste'))).to.deep.equal([]);
  });

  it('applying stores the good rows and reports the bad ones', async () => {
    await page.getByRole('button', { name: 'Aplicar' }).click();
    const summary = page.locator('[data-test="import-summary"]');
    await page.waitForFunction(
      () =>
        document
          .querySelector('[data-test="import-summary"]')
          ?.textContent?.startsWith('41 linhas: 38 novas') === true,
    );
    expect(await summary.textContent()).to.contain('3 com erro');
    await shot('import-applied');
    const listed = decodeAs(Page_, (await api.get('/api/v1/students?q=teste&limit=200')).json);
    expect(listed.items).to.have.length(38);
  });

  it('finds an imported child by a name typed without accents and by class, and schedules the class', async () => {
    await page.getByRole('link', { name: 'Crianças' }).click();
    await page.getByLabel('Buscar pelo nome').fill('crianca 07');
    await page.getByRole('link', { name: 'Criança 07 Teste' }).waitFor();
    await page.getByLabel('Turma', { exact: true }).selectOption({ label: 'Turma Sol' });
    await page.getByRole('link', { name: 'Criança 07 Teste' }).waitFor();
    await shot('children-search');
    await page.getByRole('link', { name: 'Horários' }).click();
    await page.locator('body[data-page="schedules"]').waitFor();
    // The class list arrives after the page is drawn, and the form refuses to send without a class:
    // choosing one waits for it (a click before it came met the browser's required-field check).
    await page.getByLabel('Turma', { exact: true }).selectOption({ label: 'Turma Sol' });
    await page.getByLabel('Dom').check();
    await page.getByLabel('Título').fill('Culto infantil');
    await page.getByRole('button', { name: 'Criar horário' }).click();
    await page.getByRole('cell', { name: 'Culto infantil' }).waitFor();
    await shot('schedules');
    const sessions = t.type({ items: t.array(t.type({ title: t.union([t.string, t.null]) })) });
    const made = decodeAs(sessions, (await api.get('/api/v1/sessions')).json).items.filter(
      (s) => s.title === 'Culto infantil',
    );
    expect(made.length).to.be.within(4, 5);
  });

  it('switches to English and meets no CSP violation or page error', async () => {
    await page.getByRole('button', { name: 'English' }).click();
    await page.getByRole('heading', { name: 'Weekly schedules' }).waitFor();
    await page.getByRole('cell', { name: 'Sun', exact: true }).waitFor();
    await shot('schedules-en');
    expect(problems).to.deep.equal([]);
  });
});
