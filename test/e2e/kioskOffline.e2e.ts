/**
 * The kiosk in a real Chromium against the real service: signed in once online, it works offline
 * (reloaded from its service worker), checks three children in and one out with codes computed on the
 * tablet, and once back online the server holds exactly those four events, with the same codes.
 */
import { expect } from 'chai';
import * as t from 'io-ts';
import { decodeAs } from '../support/http.js';
import { eventually, type KioskPage, kioskSuite, signIn, waitForStatus } from './kioskHarness.js';

const RosterCheckinDoc = t.type({
  version: t.union([t.string, t.null]),
  checkins: t.array(t.type({ checkInId: t.string, status: t.string })),
});
const ActiveCheckin = t.type({
  checkIn: t.type({ code: t.string, status: t.string, pickupPerson: t.union([t.string, t.null]) }),
});
const Report = t.type({
  rows: t.array(
    t.type({
      studentId: t.string,
      checkedInAt: t.union([t.string, t.null]),
      checkedOutAt: t.union([t.string, t.null]),
    }),
  ),
});
const Audit = t.type({
  items: t.array(t.type({ details: t.UnknownRecord, actor_role: t.union([t.string, t.null]) })),
});

describe('kiosk (e2e): offline check-in and check-out, then sync', function () {
  this.timeout(180_000);
  let kiosk: KioskPage;
  const codes = new Map<string, string>();

  const id = (name: string): string => {
    const found = suite().ministry.students.get(name);
    if (found === undefined) throw new Error(`no child named ${name}`);
    return found;
  };
  const rosterCheckin = async (name: string) =>
    suite().api.get(
      `/api/v1/replication/roster/${encodeURIComponent(`checkin:${suite().ministry.sessionId}:${id(name)}`)}`,
    );

  const suite = kioskSuite(['offline']);
  before(() => {
    kiosk = suite().tablet('offline');
  });

  it('signs in online and installs the app shell for offline use', async () => {
    const { page } = kiosk;
    await page.locator('body[data-screen="sign-in"]').waitFor();
    await kiosk.shot('01-sign-in');
    await signIn(kiosk, suite().ministry.chamador.email, suite().ministry.chamador.password);
    await page.getByRole('button', { name: /Turma Arco-Íris · Culto da manhã/ }).waitFor();
    await waitForStatus(kiosk, { online: true, pending: 0 });
    expect(await page.evaluate('navigator.serviceWorker.ready.then(() => true)')).to.equal(true);
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
    await kiosk.shot('02-sessions');
  });

  it('opens again with no network, from the service worker and the local roster', async () => {
    const { page, context } = kiosk;
    await context.setOffline(true);
    await waitForStatus(kiosk, { online: false });
    await page.reload();
    await page.getByRole('button', { name: /Turma Arco-Íris · Culto da manhã/ }).click();
    await page.locator('body[data-screen="desk"]').waitFor();
    await waitForStatus(kiosk, { online: false, pending: 0 });
  });

  it('finds children accent-insensitively and checks three in, printing the daily code', async () => {
    const { page } = kiosk;
    const search = page.getByRole('searchbox');
    for (const [typed, name] of [
      ['joao pe', 'João Pedro Araújo'],
      ['maria antonia', 'Maria Antônia Souza'],
      ['ANA LU', 'Ana Lúcia Ferreira'],
    ] as const) {
      await search.fill(typed);
      const row = page.locator('li.child', { hasText: name });
      await expect(await page.locator('li.child').count()).to.equal(1);
      await row.getByRole('button', { name: 'Entrada' }).click();
      await page.locator('body[data-screen="label"]').waitFor();
      const code = (await page.locator('[data-test="label"] [data-test="label-code"]').textContent()) ?? '';
      expect(code).to.match(/^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{6}$/);
      expect(await page.locator('[data-test="stub"] .code').textContent()).to.equal(code);
      codes.set(name, code);
      if (name === 'João Pedro Araújo') {
        expect(await page.locator('[data-test="label"]').textContent()).to.contain('ALERGIA: Amendoim');
        await kiosk.shot('03-label');
      }
      await page.getByRole('button', { name: 'Concluir' }).click();
      await page.locator('body[data-screen="desk"]').waitFor();
    }
    await waitForStatus(kiosk, { online: false, pending: 3 });
    await search.fill('');
    await kiosk.shot('04-desk-offline');
  });

  it('checks one out by the code on the label, counting a wrong code first', async () => {
    const { page } = kiosk;
    const name = 'João Pedro Araújo';
    const code = codes.get(name) ?? '';
    await page.getByRole('searchbox').fill('joao pedro');
    await page.locator('li.child', { hasText: name }).getByRole('button', { name: 'Saída' }).click();
    await page.locator('body[data-screen="checkout"]').waitFor();
    await page.getByRole('button', { name: /Rosa Araújo/ }).click();
    await page.getByLabel('Código da etiqueta').fill(code === 'ZZZZZZ' ? 'YYYYYY' : 'ZZZZZZ');
    await page.getByRole('button', { name: 'Confirmar saída' }).click();
    await page.getByText('Código incorreto. Restam 4 tentativa(s).').waitFor();
    await kiosk.shot('05-checkout-wrong-code');
    await page.getByLabel('Código da etiqueta').fill(code.toLowerCase());
    await page.getByRole('button', { name: 'Confirmar saída' }).click();
    await page.locator('body[data-screen="desk"]').waitFor();
    await page
      .locator('li.child', { hasText: name })
      .getByText(/Saiu às .* \(aguardando o servidor\)/)
      .waitFor();
    await waitForStatus(kiosk, { online: false, pending: 4 });
    // Really offline: the server has seen none of it.
    for (const child of ['João Pedro Araújo', 'Maria Antônia Souza', 'Ana Lúcia Ferreira']) {
      expect((await rosterCheckin(child)).status, child).to.equal(404);
    }
  });

  it('sends everything when the network returns, and the server holds exactly those events', async () => {
    const { page, context } = kiosk;
    await context.setOffline(false);
    await waitForStatus(kiosk, { online: true, pending: 0 });
    await kiosk.shot('06-synced');

    const stored = await suite().api.get(
      `/api/v1/audit-logs?endpoint=${encodeURIComponent('POST /api/v1/replication/events/_bulk_docs')}`,
    );
    expect(stored.status, stored.text).to.equal(200);
    const pushes = decodeAs(Audit, stored.json).items;
    expect(pushes.map((p) => p.actor_role)).to.satisfy((roles: unknown[]) =>
      roles.every((r) => r === 'CHAMADOR'),
    );
    expect(pushes.reduce((n, p) => n + Number(p.details.stored ?? 0), 0)).to.equal(4);
    expect(pushes.reduce((n, p) => n + Number(p.details.refused ?? 0), 0)).to.equal(0);

    const report = await eventually(async () => {
      const r = await suite().api.get(
        `/api/v1/reports/attendance?from=${suite().ministry.today}&sessionId=${suite().ministry.sessionId}`,
      );
      expect(r.status, r.text).to.equal(200);
      const rows = decodeAs(Report, r.json).rows;
      expect(rows.filter((row) => row.checkedOutAt !== null)).to.have.length(1);
      return rows;
    });
    const byId = new Map(report.map((r) => [r.studentId, r]));
    expect([...byId.keys()].sort()).to.deep.equal(
      ['João Pedro Araújo', 'Maria Antônia Souza', 'Ana Lúcia Ferreira'].map(id).sort(),
    );
    expect(byId.get(id('João Pedro Araújo'))?.checkedOutAt).to.be.a('string');
    expect(byId.get(id('Maria Antônia Souza'))?.checkedOutAt).to.equal(null);
    expect(byId.get(id('Ana Lúcia Ferreira'))?.checkedOutAt).to.equal(null);

    for (const [name, code] of codes) {
      const doc = await eventually(async () => {
        const r = await rosterCheckin(name);
        expect(r.status, r.text).to.equal(200);
        return decodeAs(RosterCheckinDoc, r.json);
      });
      expect(doc.checkins, name).to.have.length(1);
      const only = doc.checkins[0];
      if (only === undefined) throw new Error('no check-in');
      const active = await suite().api.get(`/api/v1/check-in/active?checkInId=${only.checkInId}`);
      expect(active.status, active.text).to.equal(200);
      const { checkIn } = decodeAs(ActiveCheckin, active.json);
      // The label printed offline carries the server's own code for the child and day.
      expect(checkIn.code, name).to.equal(code);
      if (name === 'João Pedro Araújo') {
        expect(checkIn.status).to.equal('CHECKED_OUT');
        expect(checkIn.pickupPerson).to.equal('Rosa Araújo');
      } else {
        expect(checkIn.status).to.equal('CHECKED_IN');
      }
    }
    for (const untouched of ['Luíza Gonçalves', 'Pedro Henrique Lima']) {
      expect((await rosterCheckin(untouched)).status, untouched).to.equal(404);
    }
    // The desk now shows the server's word, no longer "awaiting the server".
    await page.getByRole('searchbox').fill('joao');
    await page
      .locator('li.child', { hasText: 'João Pedro Araújo' })
      .getByText(/^Saiu às \d\d:\d\d$/)
      .waitFor();
  });

  it('ran without a CSP violation or an uncaught error', () => {
    expect(kiosk.problems()).to.deep.equal([]);
  });
});
