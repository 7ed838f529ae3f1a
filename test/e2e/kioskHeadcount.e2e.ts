/**
 * The room's headcount and the admission rule at the door: a class of capacity 2, two children per
 * volunteer and two volunteers in the room; the door tablet (a CHAMADOR), offline, counts its own
 * check-ins, and at capacity is refused a third child with the reason and no way past it; the office
 * tablet (an ADMIN) follows the count from the roster once the door syncs, then, offline, checks the
 * child in all the same with a justification. The event syncs, the server's headcount agrees, and the
 * stored event keeps the override.
 */
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import { EventDoc } from '../../src/domain/event.js';
import { openStore } from '../../src/store/store.js';
import type { ServiceProcess } from '../support/mainProcess.js';
import {
  ADMIN,
  type Api,
  docShot,
  eventually,
  type KioskPage,
  type Ministry,
  signIn,
  twoTabletSuite,
  waitForStatus,
} from './kioskHarness.js';

const JUSTIFICATION = 'A mãe fica na sala com a criança durante o culto.';

describe('kiosk (e2e): the headcount and the admission rule at the door', function () {
  this.timeout(180_000);
  let service: ServiceProcess;
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

  const suite = twoTabletSuite('headcount', 'office', async (api, ministry) => {
    const patched = await api.send('PATCH', `/api/v1/classes/${ministry.classId}`, {
      capacity: 2,
      childrenPerVolunteer: 2,
    });
    expect(patched.status, patched.text).to.equal(200);
    // Two volunteers: the ratio allows four children, so the capacity is what stops the third.
    for (const name of ['Seu Jorge', 'Dona Cida']) {
      const added = await api.send('POST', `/api/v1/sessions/${ministry.sessionId}/volunteers`, { name });
      expect(added.status, added.text).to.equal(201);
    }
  });
  before(() => {
    ({ service, api, ministry, door, other: office } = suite());
  });

  it('both desks show the empty room with its capacity, and the volunteers in it beside those its ratio asks for', async () => {
    await signIn(door, ministry.chamador.email, ministry.chamador.password);
    await signIn(office, ADMIN.email, ADMIN.password);
    for (const k of [door, office]) {
      await waitForStatus(k, { online: true, pending: 0 });
      await openDesk(k);
      expect(await headcountText(k)).to.equal('Na sala: 0 / 2 · saíram: 0 · voluntários: 2 de 1');
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
    expect(await headcountText(door)).to.equal('Na sala: 2 / 2 · saíram: 0 · voluntários: 2 de 1');
    expect(await page.locator('[data-test="headcount"]').getAttribute('data-full')).to.equal('true');
    await tapCheckIn(door, 'ana lu', 'Ana Lúcia Ferreira');
    await page.getByText('Sala cheia (2/2). Só um administrador pode dar entrada mesmo assim.').waitFor();
    // A CHAMADOR is offered no way past it.
    expect(await page.locator('[data-test="override"]').count()).to.equal(0);
    expect(await page.locator('textarea[name="overrideJustification"]').count()).to.equal(0);
    expect(await page.locator('body').getAttribute('data-screen')).to.equal('desk');
    await waitForStatus(door, { online: false, pending: 2 });
    await door.shot('01-full');
    await docShot(door, 'kiosk-room-full');
  });

  it('once the door syncs, the office desk follows the count from the roster', async () => {
    await door.context.setOffline(false);
    await waitForStatus(door, { online: true, pending: 0 });
    await office.page.locator('[data-test="headcount"][data-checked-in="2"]').waitFor({ timeout: 60_000 });
    expect(await headcountText(office)).to.equal('Na sala: 2 / 2 · saíram: 0 · voluntários: 2 de 1');
  });

  it('an ADMIN, offline, checks the child in all the same with a justification; the event syncs and the server keeps it', async () => {
    const { page, context } = office;
    await context.setOffline(true);
    await waitForStatus(office, { online: false });
    await tapCheckIn(office, 'ana lu', 'Ana Lúcia Ferreira');
    await page.getByText('Sala cheia (2/2).', { exact: true }).waitFor();
    const justification = page.getByLabel('Justificativa para dar entrada mesmo assim');
    const override = page.getByRole('button', { name: 'Dar entrada mesmo assim' });
    // Nothing is recorded without a justification long enough for the server.
    expect(await override.isDisabled()).to.equal(true);
    await justification.fill('curta');
    expect(await override.isDisabled()).to.equal(true);
    await justification.fill(JUSTIFICATION);
    expect(await override.isEnabled()).to.equal(true);
    await office.shot('02-override');
    await docShot(office, 'kiosk-admission-override');
    await override.click();
    await page.locator('body[data-screen="label"]').waitFor();
    await page.getByRole('button', { name: 'Concluir' }).click();
    await page.locator('body[data-screen="desk"]').waitFor();
    expect(await headcountText(office)).to.equal('Na sala: 3 / 2 · saíram: 0 · voluntários: 2 de 2');
    await waitForStatus(office, { online: false, pending: 1 });
    await context.setOffline(false);
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
      volunteers: 2,
      volunteersNeeded: 2,
    });
  });

  it('ran without a CSP violation or an uncaught error', () => {
    expect([...door.problems(), ...office.problems()]).to.deep.equal([]);
  });

  it("the server's stored event keeps the ADMIN's override with its justification", async () => {
    // Read from the service's store once it has stopped: an embedded store is one process's.
    await service.stop();
    const store = await openStore({ kind: 'embedded', dataDir: service.dataDir, prefix: 'chamada_' });
    try {
      const ana = ministry.students.get('Ana Lúcia Ferreira');
      const stored = (await store.db.events.allDocs({ include_docs: true })).rows.flatMap((r) => {
        const decoded = EventDoc.decode(r.doc);
        return E.isRight(decoded) && decoded.right.type === 'CHECK_IN' && decoded.right.subjectId === ana
          ? [decoded.right]
          : [];
      });
      expect(stored).to.have.length(1);
      expect(stored[0]?.actor.role).to.equal('ADMIN');
      expect(stored[0]?.payload).to.deep.include({
        sessionId: ministry.sessionId,
        // The server judged it again on arrival: the room was full, and the override waived that.
        override: { justification: JUSTIFICATION, waived: ['ROOM_FULL'] },
      });
    } finally {
      await store.close();
    }
  });
});
