/**
 * Issue #21's path to a first Sunday, in a real Chromium against the real service (JWT mode): an
 * ADMIN imports a spreadsheet of three hundred children with three bad rows (the dry run names each),
 * fixes them in the file, applies it, schedules the class weekly, records a guardian's image consent
 * and uploads the child's photo; a door tablet pulls its roster and shows the child and the photo at
 * check-out; the consent is revoked in the office and the photo is gone from the tablet after its next
 * pull. Screenshots of each page go to test-artifacts/e2e/ (`sunday-*`).
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import * as t from 'io-ts';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { decodeAs } from '../support/http.js';
import {
  ADMIN,
  type Api,
  ARTIFACTS,
  browserSuite,
  docShot,
  eventually,
  type KioskPage,
  openKiosk,
  openOffice,
  PASSWORD,
  signIn,
  signInToOffice,
  TABLET_ZONE,
  waitForStatus,
} from './kioskHarness.js';

const CHILDREN = 300;
const CHILD = 'Criança 007 Teste';

/** The church's spreadsheet as Excel exports it (`;`, CRLF); `broken` puts the three mistakes in. */
const spreadsheet = (broken: boolean): string => {
  const rows = Array.from(
    { length: CHILDREN },
    (_, i) =>
      `Criança ${String(i).padStart(3, '0')} Teste;${String((i % 28) + 1).padStart(2, '0')}/0${(i % 9) + 1}/2019;Responsável ${i};(11) 9${String(87_650_000 + i)};Turma Sol`,
  );
  if (broken) {
    // Rows 11, 101 and 201 of the file: an impossible date, a phone without area code, an unknown class.
    rows[9] = 'Criança 009 Teste;31/02/2019;Responsável 9;(11) 987650009;Turma Sol';
    rows[99] = 'Criança 099 Teste;01/01/2019;Responsável 99;98765-0099;Turma Sol';
    rows[199] = 'Criança 199 Teste;01/01/2019;Responsável 199;(11) 987650199;Turma Lua';
  }
  return ['Nome;Data de nascimento;Responsável;Telefone;Turma', ...rows].join('\r\n');
};

const WEEKDAY_LABELS = ['Dom', 'Seg', 'Ter', 'Qua', 'Qui', 'Sex', 'Sáb'] as const;
/** The weekday of `now` in a time zone, as the office's schedule form labels it. */
const weekdayIn = (timeZone: string, now: Date): string => {
  const name = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short' }).format(now);
  const index = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(name);
  return WEEKDAY_LABELS[index] ?? 'Dom';
};

describe('office (e2e): from a spreadsheet to a first Sunday, with a photo under consent', function () {
  this.timeout(300_000);
  let browser: Browser;
  let api: Api;
  let page: Page;
  let kiosk: KioskPage;
  let studentId: string;
  const problems: string[] = [];
  const shot = (name: string) =>
    page.screenshot({ path: path.join(ARTIFACTS, `sunday-${name}.png`), fullPage: true });
  const chamador = { email: 'porta@chamada.local', password: PASSWORD };

  const suite = browserSuite({
    prepare: async (api) => {
      await api.create('/api/v1/classes', { name: 'Turma Sol' }, 'classId');
      await api.create('/api/v1/users', { ...chamador, displayName: 'Porta', roles: ['CHAMADOR'] }, 'userId');
    },
  });
  before(async () => {
    ({ api, browser } = suite());
    page = await openOffice(browser, api.url, problems);
    await signInToOffice(page, ADMIN);
  });

  const importFile = async (text: string, button: 'Conferir' | 'Aplicar') => {
    await page
      .getByLabel('Arquivo CSV')
      .setInputFiles({ name: 'criancas.csv', mimeType: 'text/csv', buffer: Buffer.from(text) });
    await page.getByRole('button', { name: button }).click();
  };
  const summaryStartsWith = (prefix: string) =>
    page.waitForFunction(
      (p) => document.querySelector('[data-test="import-summary"]')?.textContent?.startsWith(p) === true,
      prefix,
    );

  it('a dry run of 300 children names the three bad rows; fixed, the file applies whole', async () => {
    await page.getByRole('link', { name: 'Importar planilha' }).click();
    await page.locator('body[data-page="import"]').waitFor();
    await importFile(spreadsheet(true), 'Conferir');
    await summaryStartsWith('Simulação — 300 linhas: 297 seriam novas');
    expect(await page.locator('[data-test="import-summary"]').textContent()).to.contain('3 com erro');
    for (const [row, column] of [
      [11, 'Data de nascimento'],
      [101, 'Telefone'],
      [201, 'Turma'],
    ] as const) {
      const line = page.locator(`tr[data-row="${row}"]`);
      expect(await line.getAttribute('class')).to.equal('error');
      expect(await line.textContent()).to.contain(column);
    }
    await shot('01-import-dry-run-errors');
    await importFile(spreadsheet(false), 'Conferir');
    await summaryStartsWith('Simulação — 300 linhas: 300 seriam novas');
    expect(await page.locator('[data-test="import-summary"]').textContent()).to.contain('0 com erro');
    await shot('02-import-dry-run-fixed');
    await page.getByRole('button', { name: 'Aplicar' }).click();
    await summaryStartsWith('300 linhas: 300 novas');
    await shot('03-import-applied');
    const listed = decodeAs(
      t.type({ items: t.array(t.type({ studentId: t.string, displayName: t.string })) }),
      (await api.get(`/api/v1/students?q=${encodeURIComponent(CHILD)}`)).json,
    );
    expect(listed.items.map((s) => s.displayName)).to.deep.equal([CHILD]);
    studentId = listed.items[0]?.studentId ?? '';
  });

  it('schedules the class weekly, so today has its session', async () => {
    await page.getByRole('link', { name: 'Horários' }).click();
    await page.locator('body[data-page="schedules"]').waitFor();
    // The ministry's today (São Paulo) and the tablet's (`TABLET_ZONE`) may differ: both weekly.
    await page.getByLabel('Turma', { exact: true }).selectOption({ label: 'Turma Sol' });
    const now = new Date();
    for (const day of new Set([weekdayIn('America/Sao_Paulo', now), weekdayIn(TABLET_ZONE, now)]))
      await page.getByLabel(day, { exact: true }).check();
    await page.getByLabel('Título').fill('Culto infantil');
    await page.getByRole('button', { name: 'Criar horário' }).click();
    await page.getByRole('cell', { name: 'Culto infantil' }).waitFor();
    await shot('04-schedule');
  });

  it('records the image consent and uploads the photo from the child in the list', async () => {
    await page.getByRole('link', { name: 'Crianças' }).click();
    await page.getByLabel('Buscar pelo nome').fill('crianca 007');
    const row = page.locator('tr', { hasText: CHILD });
    await row.getByRole('link', { name: CHILD }).waitFor();
    await shot('05-children');
    await row.getByRole('link', { name: 'Foto e imagem' }).click();
    await page.locator('body[data-page="children"] [data-test="consents"]').waitFor();
    await page.getByText('Nenhum consentimento ativo').waitFor();
    // No upload without a consent: the page says what to do first.
    await page.getByText('Registre um consentimento de imagem antes de enviar uma foto.').waitFor();
    await shot('06-photo-no-consent');
    await page.getByLabel('Parentesco com a criança').fill('mãe');
    await page.getByLabel('Como a pessoa foi verificada').selectOption('VERIFIED_GUARDIAN_PRESENT');
    await page.getByRole('button', { name: 'Registrar consentimento' }).click();
    await page.getByText('Consentimento ativo desde').waitFor();
    const photo = await sharp({
      create: { width: 900, height: 1200, channels: 3, background: { r: 240, g: 180, b: 60 } },
    })
      .composite([
        {
          input: await sharp({
            create: { width: 400, height: 400, channels: 3, background: { r: 30, g: 90, b: 160 } },
          })
            .png()
            .toBuffer(),
          top: 300,
          left: 250,
        },
      ])
      .jpeg()
      .toBuffer();
    await page
      .getByLabel('Foto (JPEG, PNG ou WebP, até 5 MB)')
      .setInputFiles({ name: 'foto.jpg', mimeType: 'image/jpeg', buffer: photo });
    await page.getByRole('button', { name: 'Enviar foto' }).click();
    await page.locator('[data-test="office-photo"][data-loaded="true"]').waitFor();
    await shot('07-photo-with-consent');
    // The README's picture of the page, rewritten only when asked (as the kiosk's, `docShot`).
    if (process.env.KIOSK_DOC_SHOTS === '1') {
      await mkdir('docs/screenshots', { recursive: true });
      await page.screenshot({ path: path.join('docs/screenshots', 'office-photo-consent.png') });
    }
    const student = decodeAs(
      t.type({ photoRef: t.string, photo_refs: t.array(t.string) }),
      (await api.get(`/api/v1/students/${studentId}`)).json,
    );
    expect(student.photo_refs).to.deep.equal([student.photoRef]);
  });

  it('a door tablet pulls the roster and shows the child and the photo at check-out', async () => {
    kiosk = await openKiosk(browser, api.url, 'sunday-kiosk');
    await signIn(kiosk, chamador.email, chamador.password);
    await waitForStatus(kiosk, { online: true, pending: 0 });
    const k = kiosk.page;
    await k
      .getByRole('button', { name: /Turma Sol · Culto infantil/ })
      .first()
      .click();
    await k.locator('body[data-screen="desk"]').waitFor();
    await k.getByRole('searchbox').fill('crianca 007');
    await k.locator('li.child', { hasText: CHILD }).getByRole('button', { name: 'Entrada' }).click();
    await k.locator('body[data-screen="label"]').waitFor();
    await k.getByRole('button', { name: 'Concluir' }).click();
    await k.locator('body[data-screen="desk"]').waitFor();
    await k.locator('li.child', { hasText: CHILD }).getByRole('button', { name: 'Saída' }).click();
    await k.locator('body[data-screen="checkout"]').waitFor();
    const drawn = k.locator('[data-test="child-photo"][data-loaded="true"]');
    await drawn.waitFor();
    expect(await drawn.getAttribute('aria-label')).to.equal(`Foto de ${CHILD}`);
    // The thumbnail, about 256 px on its long side, as the server made it.
    expect(
      await drawn.evaluate((c) => (c instanceof HTMLCanvasElement ? [c.width, c.height] : [])),
    ).to.deep.equal([192, 256]);
    await kiosk.shot('08-checkout-with-photo');
    await docShot(kiosk, 'kiosk-checkout-photo');
  });

  it('revoking the consent in the office takes the photo off the tablet at its next pull', async () => {
    await page.getByLabel('Motivo da revogação').fill('A mãe pediu para retirar a foto.');
    await page.getByRole('button', { name: 'Revogar consentimento' }).click();
    await page.getByText('Nenhum consentimento ativo').waitFor();
    await page.getByText('Sem foto guardada.').waitFor();
    expect(await page.locator('[data-test="consent-history"] tr.revoked').textContent()).to.contain(
      'A mãe pediu para retirar a foto.',
    );
    await shot('09-consent-revoked');
    const gone = await api.get(`/api/v1/students/${studentId}/photo`);
    expect(gone.status).to.equal(409);
    const k = kiosk.page;
    // The tablet pulls on its own within its sync tick; the check-out screen shows what it holds.
    await eventually(async () => {
      await k.getByRole('button', { name: 'Voltar' }).click();
      await k.locator('body[data-screen="desk"]').waitFor();
      await k.locator('li.child', { hasText: CHILD }).getByRole('button', { name: 'Saída' }).click();
      await k.locator('body[data-screen="checkout"]').waitFor();
      expect(await k.locator('[data-test="child-photo"]').count()).to.equal(0);
    }, 60_000);
    await k.getByRole('heading', { name: `Saída de ${CHILD}` }).waitFor();
    await kiosk.shot('10-checkout-photo-gone');
  });

  it('met no CSP violation or page error in the office or on the tablet', () => {
    expect(problems).to.deep.equal([]);
    expect(kiosk.problems()).to.deep.equal([]);
  });
});
