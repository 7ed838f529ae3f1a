/**
 * Families by phone, at the desk and in self-service mode (decision 0052), in a real Chromium against
 * the real service: a returning family of three from the last four digits of the guardian's phone to
 * three labels and one stub in at most 5 taps (counted), online at the desk and with the network cut
 * in self-service; several families sharing four digits; a deleted child never shown; a family with no
 * child in a session now, and a full room, told so with nothing recorded; the mode's boundaries, its
 * idle reset, a phone-sized screen, a volunteer leaving by signing in; axe-core on every new screen.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import * as t from 'io-ts';
import type { Locator } from 'playwright-core';
import { decodeAs } from '../support/http.js';
import {
  ADMIN,
  ARTIFACTS,
  axeViolations,
  docShot,
  eventually,
  type KioskPage,
  kioskSuite,
  signIn,
  waitForStatus,
} from './kioskHarness.js';

const Active = t.type({ checkIn: t.type({ code: t.string, status: t.string }) });
const MODE_KEY = 'chamada.kiosk.selfService';

describe('kiosk (e2e): families by phone, and self-service mode', function () {
  this.timeout(240_000);
  let kiosk: KioskPage;
  /** Child → [studentId, sessionId]. */
  const children = new Map<string, readonly [string, string]>();
  let taps = 0;
  /** How long each flow took, taps included: written beside the screenshots, never asserted (figures, not tests). */
  const timings: Array<{ readonly flow: string; readonly taps: number; readonly ms: number }> = [];
  const tap = async (target: Locator) => {
    taps += 1;
    await target.tap();
  };
  const screen = (name: string) => kiosk.page.locator(`body[data-screen="${name}"]`).waitFor();
  const noViolations = async (what: string) => {
    expect(await axeViolations(kiosk.page), what).to.deep.equal([]);
  };
  const codesShown = async (): Promise<Map<string, string>> => {
    const codes = new Map<string, string>();
    for (const label of await kiosk.page.locator('[data-test="label"]').all())
      codes.set(
        (await label.locator('.label-name').textContent()) ?? '',
        (await label.locator('[data-test="label-code"]').textContent()) ?? '',
      );
    return codes;
  };
  const serverHolds = async (codes: ReadonlyMap<string, string>) => {
    for (const [name, code] of codes) {
      const [studentId, sessionId] = children.get(name) ?? ['', ''];
      const active = await eventually(async () => {
        const r = await suite().api.get(
          `/api/v1/check-in/active?studentId=${studentId}&sessionId=${sessionId}`,
        );
        expect(r.status, `${name}: ${r.text}`).to.equal(200);
        return decodeAs(Active, r.json).checkIn;
      });
      expect({ code: active.code, status: active.status }, name).to.deep.equal({
        code,
        status: 'CHECKED_IN',
      });
    }
  };

  const suite = kioskSuite(['selfservice'], {
    prepare: async (api, ministry) => {
      const session = (classId: string) =>
        api.create(
          '/api/v1/sessions',
          { classId, date: ministry.today, title: 'Culto da manhã' },
          'sessionId',
        );
      const juniors = await api.create('/api/v1/classes', { name: 'Turma Juniores' }, 'classId');
      const juniorSession = await session(juniors);
      const babies = await api.create('/api/v1/classes', { name: 'Turma Bebês' }, 'classId');
      const full = await api.send('PATCH', `/api/v1/classes/${babies}`, { capacity: 1 });
      expect(full.status, full.text).to.equal(200);
      const babySession = await session(babies);
      // A class with no session today.
      const teens = await api.create('/api/v1/classes', { name: 'Turma Adolescentes' }, 'classId');
      const arco: readonly [string, string] = [ministry.classId, ministry.sessionId];
      const rows: ReadonlyArray<readonly [string, string, string, readonly [string, string]]> = [
        ['Lia Prado', 'Rita Prado', '+55 21 99876-0001', arco],
        ['Téo Prado', 'Rita Prado', '(21) 99876-0001', arco],
        ['Rui Prado', 'Rita Prado', '21 99876-0001', [juniors, juniorSession]],
        ['Zeca Prado', 'Rita Prado', '21 99876-0001', arco],
        // Another family whose phone ends in the same four digits.
        ['Caio Gomes', 'Sara Gomes', '31 91234-0001', arco],
        ['Nina Costa', 'Ivo Costa', '11 97777-0002', arco],
        ['Davi Costa', 'Ivo Costa', '11 97777-0002', arco],
        ['Eva Costa', 'Ivo Costa', '11 97777-0002', [juniors, juniorSession]],
        ['Dora Reis', 'Lúcia Reis', '11 95555-7777', [teens, '']],
        ['Bento Lima', 'Ana Lima', '11 93333-0003', [babies, babySession]],
        ['Clara Lima', 'Ana Lima', '11 93333-0003', [babies, babySession]],
      ];
      for (const [displayName, guardianName, number, [classId, sessionId]] of rows) {
        const studentId = await api.create(
          '/api/v1/students',
          { displayName, guardianName, phones: [{ number, qualifier: 'mãe' }], classId },
          'studentId',
        );
        children.set(displayName, [studentId, sessionId]);
      }
      const zeca = children.get('Zeca Prado')?.[0] ?? '';
      const deleted = await api.send('POST', `/api/v1/students/${zeca}/delete`, {
        justification: 'Cadastro duplicado por engano',
      });
      expect(deleted.status, deleted.text).to.equal(200);
    },
  });
  before(async () => {
    kiosk = suite().tablet('selfservice');
    await kiosk.page.setViewportSize({ width: 1024, height: 768 });
  });

  after(async () => {
    if (timings.length > 0)
      await writeFile(
        path.join(ARTIFACTS, 'selfservice-timings.json'),
        `${JSON.stringify(timings, null, 2)}\n`,
      );
  });

  it('at the desk, a volunteer finds a family of three by phone and checks them all in, in 4 taps', async () => {
    const { page } = kiosk;
    await signIn(kiosk, ADMIN.email, ADMIN.password);
    await waitForStatus(kiosk, { online: true, pending: 0 });
    taps = 0;
    const started = Date.now();
    await tap(page.getByRole('button', { name: /Turma Arco-Íris · Culto da manhã/ }));
    await screen('desk');
    await tap(page.getByRole('button', { name: 'Família pelo telefone' }));
    await screen('family-lookup');
    await page.getByLabel('Últimos 4 dígitos do telefone do responsável').fill('0001');
    const matches = page.locator('.family-match');
    // Two families share the digits; each shown by first names only, the deleted child nowhere.
    expect(await matches.allInnerTexts()).to.deep.equal([
      'Família de Rita\nLia, Rui, Téo',
      'Família de Sara\nCaio',
    ]);
    await noViolations('the lookup');
    await kiosk.shot('01-lookup');
    await tap(matches.filter({ hasText: 'Rita' }));
    await screen('family');
    const rows = page.locator('li.family-child');
    expect(await rows.locator('.child-name').allTextContents()).to.deep.equal([
      'Lia Prado',
      'Rui Prado',
      'Téo Prado',
    ]);
    for (const box of await rows.getByRole('checkbox').all()) expect(await box.isChecked()).to.equal(true);
    expect(await rows.filter({ hasText: 'Rui Prado' }).textContent()).to.contain('Turma Juniores');
    await noViolations('the family');
    await kiosk.shot('02-family');
    await tap(page.getByRole('button', { name: 'Confirmar entrada' }));
    await screen('label');
    timings.push({ flow: 'desk, online', taps, ms: Date.now() - started });
    expect(taps, 'taps from the sessions to the labels').to.be.at.most(5);
    const codes = await codesShown();
    expect([...codes.keys()].sort()).to.deep.equal(['Lia Prado', 'Rui Prado', 'Téo Prado']);
    expect(await page.locator('[data-test="stub"]').count()).to.equal(1);
    expect(await page.locator('[data-test="stub-child"]').count()).to.equal(3);
    await kiosk.shot('03-labels');
    await waitForStatus(kiosk, { online: true, pending: 0 });
    await serverHolds(codes);
    await tap(page.getByRole('button', { name: 'Concluir' }));
    await screen('desk');
  });

  it('an ADMIN turns self-service on for this tablet: only the pass or the phone, no account, no admin', async () => {
    const { page } = kiosk;
    await page.getByRole('button', { name: 'Administração' }).click();
    await screen('admin-conflicts');
    await page.getByRole('button', { name: 'Ligar o autoatendimento' }).click();
    await screen('self-service');
    const main = page.locator('.content');
    expect(await main.getByRole('button').allInnerTexts()).to.deep.equal([
      'Ler o cartão da família',
      'Digitar o telefone',
      'Sou voluntário',
    ]);
    const bar = page.locator('header.topbar');
    for (const name of [/Sair/, /Administração/, /Entrar de novo/])
      expect(await bar.getByRole('button', { name }).count(), String(name)).to.equal(0);
    await noViolations('the self-service start');
    await kiosk.shot('04-self-start');
    await docShot(kiosk, 'kiosk-self-service');
    // A typed address to the admins' view, or a reload, lands on the start again.
    await page.evaluate(() => {
      location.hash = '#/admin/attendance';
    });
    await screen('self-service');
    await page.reload();
    await screen('self-service');
    expect(await page.locator('input[type="search"]').count(), 'no name search').to.equal(0);
  });

  it('with the network cut (and the tablet restarted), a family checks itself in by phone in 3 taps: three labels, one stub, synced later', async () => {
    const { page, context } = kiosk;
    // The tablet restarts with no network: the service worker's app shell, the mode and the roster hold.
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
    await context.setOffline(true);
    await page.reload();
    await screen('self-service');
    await waitForStatus(kiosk, { online: false });
    taps = 0;
    const started = Date.now();
    await tap(page.getByRole('button', { name: 'Digitar o telefone' }));
    await screen('family-lookup');
    await page.getByLabel('Últimos 4 dígitos do telefone do responsável').fill('0002');
    await tap(page.locator('.family-match', { hasText: 'Ivo' }));
    await screen('family');
    await tap(page.getByRole('button', { name: 'Confirmar entrada' }));
    await screen('label');
    timings.push({ flow: 'self-service, network cut', taps, ms: Date.now() - started });
    expect(taps, 'taps from the start to the labels').to.be.at.most(5);
    const codes = await codesShown();
    expect([...codes.keys()].sort()).to.deep.equal(['Davi Costa', 'Eva Costa', 'Nina Costa']);
    expect(await page.locator('[data-test="stub-child"]').count()).to.equal(3);
    expect(await page.locator('select[name="labelLayout"]').isVisible(), 'no printer setting').to.equal(
      false,
    );
    await kiosk.shot('05-self-labels-offline');
    await docShot(kiosk, 'kiosk-self-service-labels');
    await waitForStatus(kiosk, { online: false, pending: 3 });
    await tap(page.getByRole('button', { name: 'Concluir' }));
    await screen('self-service');
    await context.setOffline(false);
    await waitForStatus(kiosk, { online: true, pending: 0 });
    await serverHolds(codes);
  });

  it('a family with no child in a session now is told so, and nothing is recorded', async () => {
    const { page } = kiosk;
    await page.getByRole('button', { name: 'Digitar o telefone' }).tap();
    await page.getByLabel('Últimos 4 dígitos do telefone do responsável').fill('7777');
    await page.locator('.family-match', { hasText: 'Lúcia' }).tap();
    await screen('family');
    const row = page.locator('li.family-child', { hasText: 'Dora Reis' });
    expect(await row.locator('.child-status').textContent()).to.equal('sem sessão da turma agora');
    expect(await row.getByRole('checkbox').isChecked()).to.equal(false);
    expect(await page.locator('[data-test="family-nobody"]').textContent()).to.contain('Nada foi registrado');
    expect(await page.getByRole('button', { name: 'Confirmar entrada' }).isVisible()).to.equal(false);
    await noViolations('a family with nobody to check in');
    await page.getByRole('button', { name: 'Voltar' }).tap();
    await screen('self-service');
    await waitForStatus(kiosk, { pending: 0 });
  });

  it("the room's rules apply as at the desk: a full room says why, offers no override, records nothing", async () => {
    const { page } = kiosk;
    await page.getByRole('button', { name: 'Digitar o telefone' }).tap();
    await page.getByLabel('Últimos 4 dígitos do telefone do responsável').fill('0003');
    await page.locator('.family-match', { hasText: 'Ana' }).tap();
    await screen('family');
    await page.getByRole('button', { name: 'Confirmar entrada' }).tap();
    const refusal = page.locator('[data-test="refusal"]');
    await refusal.waitFor();
    expect(await refusal.textContent()).to.contain('Peça ajuda a um voluntário');
    expect(await page.locator('[data-test="override"]').count(), 'no override for a family').to.equal(0);
    expect(await page.locator('body').getAttribute('data-screen')).to.equal('family');
    await noViolations('a refusal');
    await waitForStatus(kiosk, { pending: 0 });
  });

  it('goes back to the start after the idle time, whatever screen a family left', async () => {
    const { page } = kiosk;
    // This tablet's setting, shortened: the mode reads it at every tick.
    await page.evaluate((key) => localStorage.setItem(key, JSON.stringify({ idleSeconds: 2 })), MODE_KEY);
    await page.locator('body[data-screen="family"]').waitFor({ state: 'detached', timeout: 10_000 });
    await screen('self-service');
    await page.getByRole('button', { name: 'Digitar o telefone' }).tap();
    await page.getByLabel('Últimos 4 dígitos do telefone do responsável').fill('0001');
    await screen('self-service');
    expect(await page.locator('.family-match').count(), 'nothing of the family left').to.equal(0);
    await page.evaluate((key) => localStorage.setItem(key, JSON.stringify({ idleSeconds: 30 })), MODE_KEY);
  });

  it('fits a phone-sized screen, by touch: nothing wider than the screen, every button reachable', async () => {
    const { page } = kiosk;
    await page.setViewportSize({ width: 375, height: 667 });
    const fits = async (what: string) => {
      const widths = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
      expect(widths[0], `${what}: page width`).to.be.at.most(widths[1] ?? 0);
      for (const button of await page.locator('.content button:visible').all()) {
        const box = await button.boundingBox();
        expect(box, what).to.not.equal(null);
        expect(
          (box?.x ?? -1) >= 0 && (box?.x ?? 0) + (box?.width ?? 0) <= 375,
          `${what}: a button off screen`,
        ).to.equal(true);
        expect(box?.height ?? 0, `${what}: a touch target`).to.be.at.least(44);
      }
    };
    await fits('the start');
    await kiosk.shot('06-phone-start');
    await page.getByRole('button', { name: 'Digitar o telefone' }).tap();
    await page.getByLabel('Últimos 4 dígitos do telefone do responsável').fill('0001');
    await fits('the lookup');
    await page.locator('.family-match', { hasText: 'Sara' }).tap();
    await screen('family');
    await fits('the family');
    await noViolations('the family on a phone');
    await kiosk.shot('07-phone-family');
    await page.getByRole('button', { name: 'Voltar' }).tap();
    await screen('self-service');
    await page.setViewportSize({ width: 1024, height: 768 });
  });

  it('answers a few lookups a minute: nobody walks every ending for the families on the tablet', async () => {
    const { page } = kiosk;
    await page.getByRole('button', { name: 'Digitar o telefone' }).tap();
    const digits = page.getByLabel('Últimos 4 dígitos do telefone do responsável');
    const wait = page.locator('.lookup-results', { hasText: 'Muitas buscas seguidas' });
    let typed = 0;
    for (const ending of ['1000', '1001', '1002', '1003', '1004', '1005', '1006', '1007', '1008']) {
      await digits.fill(ending);
      typed += 1;
      if ((await wait.count()) > 0) break;
    }
    expect(await wait.count(), 'refused within the minute').to.equal(1);
    expect(typed).to.be.at.most(9);
    await digits.fill('0001');
    expect(await page.locator('.family-match').count(), 'no family while refused').to.equal(0);
    await page.getByRole('button', { name: 'Voltar' }).tap();
    await screen('self-service');
  });

  it('a volunteer leaves the mode by signing in with their own account', async () => {
    const { page } = kiosk;
    await page.getByRole('button', { name: 'Sou voluntário' }).tap();
    await screen('self-service-exit');
    await noViolations('the volunteer sign-in');
    await page.getByLabel('E-mail').fill(suite().ministry.chamador.email);
    // Offline nothing can check the password: the tablet says so and stays in the mode.
    await kiosk.context.setOffline(true);
    await page.getByLabel('Senha').fill(suite().ministry.chamador.password);
    await page.getByRole('button', { name: 'Entrar' }).tap();
    await page.locator('.form-error', { hasText: 'Sem conexão' }).waitFor();
    await kiosk.context.setOffline(false);
    await waitForStatus(kiosk, { online: true, pending: 0 });
    await page.getByLabel('Senha').fill('not the password');
    await page.getByRole('button', { name: 'Entrar' }).tap();
    await page.locator('.form-error', { hasText: 'incorretos' }).waitFor();
    expect(await page.evaluate((key) => localStorage.getItem(key), MODE_KEY)).to.not.equal(null);
    await page.getByLabel('Senha').fill(suite().ministry.chamador.password);
    await page.getByRole('button', { name: 'Entrar' }).tap();
    await screen('sessions');
    expect(await page.evaluate((key) => localStorage.getItem(key), MODE_KEY)).to.equal(null);
    expect(await page.locator('header.topbar').textContent()).to.contain('Beatriz (porta)');
  });

  it('the accessibility check does see a violation when there is one', async () => {
    const { page } = kiosk;
    // An unlabelled field and an empty button: two WCAG failures axe-core must report.
    await page.evaluate(() => {
      const trap = document.createElement('div');
      trap.id = 'a11y-trap';
      trap.append(document.createElement('input'), document.createElement('button'));
      document.querySelector('.content')?.append(trap);
    });
    const found = (await axeViolations(page)).map((v) => v.id);
    expect(found).to.include.members(['label', 'button-name']);
    await page.evaluate(() => document.getElementById('a11y-trap')?.remove());
  });

  it('ran without a CSP violation or an uncaught error', () => {
    expect(kiosk.problems()).to.deep.equal([]);
  });
});
