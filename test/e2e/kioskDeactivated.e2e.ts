/**
 * A session deactivated while a child is in its room (0047): the door tablet learns it from its
 * roster, offers the session for check-outs only, refuses a check-in with the reason, checks the
 * child out with the label's code, then stops offering the session; reactivated, it is offered again.
 */
import { expect } from 'chai';
import {
  type Api,
  eventually,
  type KioskPage,
  type Ministry,
  openMinistryDesk,
  twoTabletSuite,
  waitForStatus,
} from './kioskHarness.js';

describe('kiosk (e2e): a deactivated session is offered for check-outs only', function () {
  this.timeout(180_000);
  let api: Api;
  let ministry: Ministry;
  let door: KioskPage;
  let code = '';

  const suite = twoTabletSuite('deactivated', 'spare');
  before(() => {
    ({ api, ministry, door } = suite());
  });
  const sessionButton = () => door.page.getByRole('button', { name: /Turma Arco-Íris · Culto da manhã/ });
  const toSessions = async () => {
    await door.page.getByRole('button', { name: 'Trocar sessão' }).click();
    await door.page.locator('body[data-screen="sessions"]').waitFor();
  };

  it('checks a child in while the session is open', async () => {
    const { page } = door;
    await openMinistryDesk(door, ministry.chamador);
    await page.getByRole('searchbox').fill('joao');
    await page
      .locator('li.child', { hasText: 'João Pedro Araújo' })
      .getByRole('button', { name: 'Entrada' })
      .click();
    await page.locator('body[data-screen="label"]').waitFor();
    code = (await page.locator('[data-test="label"] [data-test="label-code"]').textContent()) ?? '';
    expect(code).to.match(/^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{6}$/);
    await page.getByRole('button', { name: 'Concluir' }).click();
    await page.locator('body[data-screen="desk"]').waitFor();
    await waitForStatus(door, { online: true, pending: 0 });
  });

  it('once deactivated, the session is offered as check-out only, and a check-in there is refused with why', async () => {
    const { page } = door;
    const off = await api.send('POST', `/api/v1/sessions/${ministry.sessionId}/deactivate`, undefined);
    expect(off.status, off.text).to.equal(200);
    await toSessions();
    // The roster brings the deactivation on the tablet's next pull.
    await sessionButton().getByText('Desativada: só saídas').waitFor({ timeout: 60_000 });
    await sessionButton().click();
    await page.locator('body[data-screen="desk"]').waitFor();
    await page.locator('[data-test="session-closed"]').waitFor();
    await page.getByRole('searchbox').fill('maria');
    await page
      .locator('li.child', { hasText: 'Maria Antônia Souza' })
      .getByRole('button', { name: 'Entrada' })
      .click();
    await page
      .getByText(
        'Maria Antônia Souza não pode dar entrada: esta sessão foi desativada. A saída continua possível.',
      )
      .waitFor();
    expect(await page.locator('body').getAttribute('data-screen')).to.equal('desk');
    await door.shot('01-closed');
  });

  it('the child in the room is checked out with the code; then the session is no longer offered', async () => {
    const { page } = door;
    await page.getByRole('searchbox').fill('joao');
    await page
      .locator('li.child', { hasText: 'João Pedro Araújo' })
      .getByRole('button', { name: 'Saída' })
      .click();
    await page.locator('body[data-screen="checkout"]').waitFor();
    await page.getByRole('button', { name: /Rosa Araújo/ }).click();
    await page.getByLabel('Código da etiqueta').fill(code.toLowerCase());
    await page.getByRole('button', { name: 'Confirmar saída' }).click();
    await page.locator('body[data-screen="desk"]').waitFor();
    await waitForStatus(door, { online: true, pending: 0 });
    const served = await eventually(async () => {
      const r = await api.get(`/api/v1/sessions/${ministry.sessionId}/headcount`);
      expect(r.json).to.deep.include({ checkedIn: 0, checkedOut: 1 });
      return r.json;
    });
    expect(served).to.deep.include({ sessionId: ministry.sessionId });
    await toSessions();
    // The demo's sessions of today are still offered; this one is not, with nobody left in its room.
    await page.locator('[data-session-id]').first().waitFor();
    expect(await page.locator(`[data-session-id="${ministry.sessionId}"]`).count()).to.equal(0);
  });

  it('reactivated, the session is offered again for check-ins', async () => {
    const on = await api.send('POST', `/api/v1/sessions/${ministry.sessionId}/reactivate`, undefined);
    expect(on.status, on.text).to.equal(200);
    await sessionButton().waitFor({ timeout: 60_000 });
    expect(await sessionButton().getByText('Desativada: só saídas').count()).to.equal(0);
  });

  it('ran without a CSP violation or an uncaught error', () => {
    expect(door.problems()).to.deep.equal([]);
  });
});
