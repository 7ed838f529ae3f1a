/**
 * A mother with three children, with no network: the desk finds one, shows the brothers and sisters
 * (children sharing her phone, one in another class), checks all three in with one action, and
 * prints one label per child plus one stub listing all three codes. Once synced, the server holds
 * three check-ins, each in its class's session, with the codes the stub shows.
 */
import { expect } from 'chai';
import * as t from 'io-ts';
import { decodeAs } from '../support/http.js';
import {
  type Api,
  docShot,
  eventually,
  type KioskPage,
  kioskSuite,
  type Ministry,
  signIn,
  waitForStatus,
} from './kioskHarness.js';

const Active = t.type({ checkIn: t.type({ code: t.string, status: t.string }) });

describe('kiosk (e2e): siblings checked in together, offline', function () {
  this.timeout(180_000);
  let api: Api;
  let ministry: Ministry;
  let juniorSession: string;
  let kiosk: KioskPage;
  const family = new Map<string, { studentId: string; sessionId: string }>();
  const codes = new Map<string, string>();
  const souzas = new Map<string, string>();

  const suite = kioskSuite(['siblings'], {
    prepare: async (api, ministry) => {
      const juniors = await api.create('/api/v1/classes', { name: 'Turma Juniores' }, 'classId');
      juniorSession = await api.create(
        '/api/v1/sessions',
        { classId: juniors, date: ministry.today, title: 'Culto da manhã' },
        'sessionId',
      );
      for (const [displayName, classId, sessionId, number] of [
        ['Lia Prado', ministry.classId, ministry.sessionId, '+55 21 99876-0001'],
        ['Téo Prado', ministry.classId, ministry.sessionId, '(21) 99876-0001'],
        ['Rui Prado', juniors, juniorSession, '21 99876-0001'],
      ] as const) {
        const studentId = await api.create(
          '/api/v1/students',
          { displayName, guardianName: 'Rita Prado', phones: [{ number, qualifier: 'mãe' }], classId },
          'studentId',
        );
        family.set(displayName, { studentId, sessionId });
      }
      // A second family, for the roster pull that lands while the volunteer is choosing.
      for (const displayName of ['Ana Souza', 'Bia Souza', 'Caio Souza']) {
        const studentId = await api.create(
          '/api/v1/students',
          {
            displayName,
            guardianName: 'Sara Souza',
            phones: [{ number: '21 98765-4321', qualifier: 'mãe' }],
            classId: ministry.classId,
          },
          'studentId',
        );
        souzas.set(displayName, studentId);
      }
    },
  });
  before(() => {
    ({ api, ministry } = suite());
    kiosk = suite().tablet('siblings');
  });

  it('finds one child offline and lists the brothers and sisters, one of them in another class', async () => {
    const { page, context } = kiosk;
    await signIn(kiosk, ministry.chamador.email, ministry.chamador.password);
    await waitForStatus(kiosk, { online: true, pending: 0 });
    await page.getByRole('button', { name: /Turma Arco-Íris · Culto da manhã/ }).click();
    await page.locator('body[data-screen="desk"]').waitFor();
    await context.setOffline(true);
    await waitForStatus(kiosk, { online: false });
    await page.getByRole('searchbox').fill('lia');
    await page
      .locator('li.child', { hasText: 'Lia Prado' })
      .getByRole('button', { name: 'Irmãos (2)' })
      .click();
    await page.locator('body[data-screen="siblings"]').waitFor();
    const rows = page.locator('li.sibling');
    expect(await rows.locator('.child-name').allTextContents()).to.deep.equal([
      'Lia Prado',
      'Rui Prado',
      'Téo Prado',
    ]);
    expect(await rows.filter({ hasText: 'Rui Prado' }).textContent()).to.contain('Turma Juniores');
    for (const box of await rows.getByRole('checkbox').all()) expect(await box.isChecked()).to.equal(true);
    await kiosk.shot('01-siblings');
  });

  it('checks all three in with one action: a label each and one stub with every code', async () => {
    const { page } = kiosk;
    await page.getByRole('button', { name: 'Dar entrada às marcadas' }).click();
    await page.locator('body[data-screen="label"]').waitFor();
    const labels = page.locator('[data-test="label"]');
    expect(await labels.count()).to.equal(3);
    for (const label of await labels.all()) {
      const name = (await label.locator('.label-name').textContent()) ?? '';
      codes.set(name, (await label.locator('[data-test="label-code"]').textContent()) ?? '');
    }
    expect([...codes.keys()].sort()).to.deep.equal(['Lia Prado', 'Rui Prado', 'Téo Prado']);
    const stub = page.locator('[data-test="stub"] [data-test="stub-child"]');
    expect(await stub.count()).to.equal(3);
    for (const line of await stub.all()) {
      const name = (await line.locator('.label-name').textContent()) ?? '';
      expect(await line.locator('.code').textContent(), name).to.equal(codes.get(name));
    }
    await kiosk.shot('02-labels');
    await docShot(kiosk, 'kiosk-siblings-labels');
    await page.getByRole('button', { name: 'Concluir' }).click();
    await page.locator('body[data-screen="desk"]').waitFor();
    await waitForStatus(kiosk, { online: false, pending: 3 });
    expect(await page.locator('[data-test="headcount"]').getAttribute('data-checked-in')).to.equal('2');
  });

  it('once synced, the server holds one check-in per child in their own session, with the codes printed', async () => {
    await kiosk.context.setOffline(false);
    await waitForStatus(kiosk, { online: true, pending: 0 });
    for (const [name, { studentId, sessionId }] of family) {
      const active = await eventually(async () => {
        const r = await api.get(`/api/v1/check-in/active?studentId=${studentId}&sessionId=${sessionId}`);
        expect(r.status, r.text).to.equal(200);
        return decodeAs(Active, r.json).checkIn;
      });
      expect(active, name).to.deep.equal({ ...active, code: codes.get(name), status: 'CHECKED_IN' });
    }
  });

  it('keeps the ticks when a roster pull lands meanwhile, unticking only a child checked in elsewhere', async () => {
    const { page } = kiosk;
    await page.getByRole('searchbox').fill('ana souza');
    await page
      .locator('li.child', { hasText: 'Ana Souza' })
      .getByRole('button', { name: 'Irmãos (2)' })
      .click();
    await page.locator('body[data-screen="siblings"]').waitFor();
    const row = (name: string) => page.locator('li.sibling', { hasText: name });
    await row('Caio Souza').getByRole('checkbox').uncheck();
    // Another door checks Bia in; the tablet hears of it through its roster.
    const bia = await api.send('POST', '/api/v1/check-in', {
      studentId: souzas.get('Bia Souza'),
      sessionId: ministry.sessionId,
    });
    expect(bia.status, bia.text).to.equal(201);
    await row('Bia Souza')
      .locator('.child-status', { hasText: 'já está na sala' })
      // The tablet hears of it at its next roster pull, which a loaded machine may take a while to make.
      .waitFor({ timeout: 60_000 });
    expect(await row('Bia Souza').getByRole('checkbox').isDisabled()).to.equal(true);
    expect(await row('Bia Souza').getByRole('checkbox').isChecked()).to.equal(false);
    expect(await row('Caio Souza').getByRole('checkbox').isChecked(), 'the volunteer unticked Caio').to.equal(
      false,
    );
    expect(await row('Ana Souza').getByRole('checkbox').isChecked()).to.equal(true);
    await page.getByRole('button', { name: 'Voltar' }).click();
    await page.locator('body[data-screen="desk"]').waitFor();
  });

  it('ran without a CSP violation or an uncaught error', () => {
    expect(kiosk.problems()).to.deep.equal([]);
  });
});
