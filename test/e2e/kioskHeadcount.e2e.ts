/**
 * The room's headcount at the door: a class of capacity 2; the door tablet, offline, counts its own
 * check-ins, and at capacity refuses a third child with a warning; the office tablet (an ADMIN),
 * online, follows the count from the roster once the door syncs, and may check a child in beyond the
 * capacity. The server's headcount agrees.
 */
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import type { ServiceProcess } from '../support/mainProcess.js';
import {
  ADMIN,
  type Api,
  adminApi,
  docShot,
  eventually,
  type KioskPage,
  launchChromium,
  type Ministry,
  openKiosk,
  seedMinistry,
  signIn,
  startKioskService,
  waitForStatus,
} from './kioskHarness.js';

describe('kiosk (e2e): the headcount and the room capacity', function () {
  this.timeout(180_000);
  let service: ServiceProcess;
  let browser: Browser;
  let api: Api;
  let ministry: Ministry;
  let door: KioskPage;
  let office: KioskPage;

  const openDesk = async (k: KioskPage) => {
    await k.page.getByRole('button', { name: /Turma Arco-Íris · Culto da manhã/ }).click();
    await k.page.locator('body[data-screen="desk"]').waitFor();
  };
  const headcountText = (k: KioskPage) => k.page.locator('[data-test="headcount"]').textContent();
  const tapCheckIn = async (k: KioskPage, typed: string, name: string) => {
    await k.page.getByRole('searchbox').fill(typed);
    await k.page.locator('li.child', { hasText: name }).getByRole('button', { name: 'Entrada' }).click();
  };

  before(async () => {
    const started = await startKioskService();
    service = started.service;
    api = await adminApi(started.url);
    ministry = await seedMinistry(api);
    const patched = await api.send('PATCH', `/api/v1/classes/${ministry.classId}`, {
      capacity: 2,
      childrenPerVolunteer: 2,
    });
    expect(patched.status, patched.text).to.equal(200);
    browser = await launchChromium();
    door = await openKiosk(browser, started.url, 'headcount-door');
    office = await openKiosk(browser, started.url, 'headcount-office');
  });

  after(async () => {
    await browser?.close();
    await service?.dispose();
  });

  it('both desks show the empty room with its capacity and the volunteers its ratio asks for', async () => {
    await signIn(door, ministry.chamador.email, ministry.chamador.password);
    await signIn(office, ADMIN.email, ADMIN.password);
    for (const k of [door, office]) {
      await waitForStatus(k, { online: true, pending: 0 });
      await openDesk(k);
      expect(await headcountText(k)).to.equal('Na sala: 0 / 2 · saíram: 0 · voluntários necessários: 0');
    }
  });

  it('offline, the door counts its own check-ins and refuses a third child at capacity', async () => {
    const { page, context } = door;
    await context.setOffline(true);
    await waitForStatus(door, { online: false });
    for (const [typed, name] of [
      ['joao', 'João Pedro Araújo'],
      ['maria', 'Maria Antônia Souza'],
    ] as const) {
      await tapCheckIn(door, typed, name);
      await page.locator('body[data-screen="label"]').waitFor();
      await page.getByRole('button', { name: 'Concluir' }).click();
      await page.locator('body[data-screen="desk"]').waitFor();
    }
    expect(await headcountText(door)).to.equal('Na sala: 2 / 2 · saíram: 0 · voluntários necessários: 1');
    expect(await page.locator('[data-test="headcount"]').getAttribute('data-full')).to.equal('true');
    await tapCheckIn(door, 'ana lu', 'Ana Lúcia Ferreira');
    await page
      .getByText('Sala cheia (2/2). Só um administrador pode dar entrada além da capacidade.')
      .waitFor();
    expect(await page.locator('body').getAttribute('data-screen')).to.equal('desk');
    await waitForStatus(door, { online: false, pending: 2 });
    await door.shot('01-full');
    await docShot(door, 'kiosk-room-full');
  });

  it('once the door syncs, the office desk follows the count from the roster', async () => {
    await door.context.setOffline(false);
    await waitForStatus(door, { online: true, pending: 0 });
    await office.page.locator('[data-test="headcount"][data-checked-in="2"]').waitFor({ timeout: 60_000 });
    expect(await headcountText(office)).to.equal('Na sala: 2 / 2 · saíram: 0 · voluntários necessários: 1');
  });

  it('an ADMIN is warned too, and may check the child in beyond the capacity', async () => {
    const { page } = office;
    await tapCheckIn(office, 'ana lu', 'Ana Lúcia Ferreira');
    await page.getByText('Sala cheia (2/2).').waitFor();
    await office.shot('02-override');
    await page.getByRole('button', { name: 'Dar entrada a Ana Lúcia Ferreira mesmo assim' }).click();
    await page.locator('body[data-screen="label"]').waitFor();
    await page.getByRole('button', { name: 'Concluir' }).click();
    await page.locator('body[data-screen="desk"]').waitFor();
    expect(await headcountText(office)).to.equal('Na sala: 3 / 2 · saíram: 0 · voluntários necessários: 2');
    await waitForStatus(office, { online: true, pending: 0 });
    const served = await eventually(async () => {
      const r = await api.get(`/api/v1/sessions/${ministry.sessionId}/headcount`);
      expect(r.status, r.text).to.equal(200);
      expect(r.json).to.deep.include({ checkedIn: 3 });
      return r.json;
    });
    expect(served).to.deep.equal({
      sessionId: ministry.sessionId,
      checkedIn: 3,
      checkedOut: 0,
      capacity: 2,
      childrenPerVolunteer: 2,
      volunteersNeeded: 2,
    });
  });

  it('ran without a CSP violation or an uncaught error', () => {
    expect([...door.problems(), ...office.problems()]).to.deep.equal([]);
  });
});
