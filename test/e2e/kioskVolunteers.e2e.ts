/**
 * Volunteers at the door and the admission rule's exceptions in the admins' view: a class with two
 * children per volunteer and nobody in the room refuses a CHAMADOR's first child; one tap on "Estou
 * nesta sala" in the refusal checks her in to the room on the server, and the check-in then passes.
 * She adds a helper by name, sees the controls say they need the network while offline, and leaves the
 * room. An ADMIN tablet's admins' view lists an offline check-in that arrived into a full room: the
 * child, the reason in words, who made it, on which device and when.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { decodeAs } from '../support/http.js';
import {
  ADMIN,
  type Api,
  eventually,
  type KioskPage,
  type Ministry,
  openMinistryDesk,
  signIn,
  twoTabletSuite,
  waitForStatus,
} from './kioskHarness.js';

const VolunteerList = t.type({
  items: t.array(
    t.type({
      userId: t.union([t.string, t.null]),
      name: t.string,
      checkedOutAt: t.union([t.string, t.null]),
    }),
  ),
});

describe('kiosk (e2e): volunteers in the room, and the exceptions in the admins’ view', function () {
  this.timeout(180_000);
  let api: Api;
  let ministry: Ministry;
  let door: KioskPage;
  let office: KioskPage;

  const headcountText = (k: KioskPage) => k.page.locator('[data-test="headcount"]').textContent();
  const volunteersOnServer = async () => {
    const r = await api.get(`/api/v1/sessions/${ministry.sessionId}/volunteers`);
    expect(r.status, r.text).to.equal(200);
    return decodeAs(VolunteerList, r.json).items;
  };

  const suite = twoTabletSuite('volunteers', 'office', async (api, ministry) => {
    const patched = await api.send('PATCH', `/api/v1/classes/${ministry.classId}`, {
      childrenPerVolunteer: 2,
    });
    expect(patched.status, patched.text).to.equal(200);
  });
  before(() => {
    ({ api, ministry, door, other: office } = suite());
  });

  it('refuses the first child of a room with a ratio and nobody in it, offering "Estou nesta sala" there', async () => {
    const { page } = door;
    await openMinistryDesk(door, ministry.chamador);
    expect(await headcountText(door)).to.equal('Na sala: 0 · saíram: 0 · voluntários: 0 de 1');
    const controls = page.getByRole('group', { name: 'Voluntários na sala' });
    expect(await controls.getByRole('button', { name: 'Estou nesta sala' }).isEnabled()).to.equal(true);
    expect(await controls.getByText(/precisa de internet/).count()).to.equal(1);

    await page.getByRole('searchbox').fill('joao');
    await page
      .locator('li.child', { hasText: 'João Pedro Araújo' })
      .getByRole('button', { name: 'Entrada' })
      .click();
    const refusal = page.locator('[data-test="refusal"]');
    await refusal
      .getByText(
        'Faltam voluntários na sala: 0 criança(s) para 0 voluntário(s), até 2 por voluntário. Registre a entrada de um voluntário primeiro. Só um administrador pode dar entrada mesmo assim.',
      )
      .waitFor();
    const meIn = refusal.getByRole('button', { name: 'Estou nesta sala' });
    // Offered first, with the focus: one tap from the refusal.
    await eventually(async () =>
      expect(await meIn.evaluate((b) => b === document.activeElement)).to.equal(true),
    );
    expect(await page.locator('[data-test="override"]').count()).to.equal(0);
    await door.shot('01-ratio-refused');
    expect(await volunteersOnServer()).to.deep.equal([]);
  });

  it('one tap checks her in to the room on the server, the count follows at once, and the check-in then passes', async () => {
    const { page } = door;
    const refusal = page.locator('[data-test="refusal"]');
    await refusal.getByRole('button', { name: 'Estou nesta sala' }).click();
    await refusal.getByText('Você está na sala (1 voluntário(s)). Tente a entrada de novo.').waitFor();
    expect(await headcountText(door)).to.equal('Na sala: 0 · saíram: 0 · voluntários: 1 de 1');
    // The desk's own control now offers the way out.
    const controls = page.getByRole('group', { name: 'Voluntários na sala' });
    await controls.getByRole('button', { name: 'Sair da sala' }).waitFor();
    const [me] = await volunteersOnServer();
    expect(me).to.deep.include({ name: 'Beatriz (porta)', checkedOutAt: null });
    expect(me?.userId).to.be.a('string');
    await door.shot('02-in-the-room');

    await refusal.getByRole('button', { name: 'Tentar a entrada de novo' }).click();
    await page.locator('body[data-screen="label"]').waitFor();
    await page.getByRole('button', { name: 'Concluir' }).click();
    await page.locator('body[data-screen="desk"]').waitFor();
    expect(await headcountText(door)).to.equal('Na sala: 1 · saíram: 0 · voluntários: 1 de 1');
    await waitForStatus(door, { online: true, pending: 0 });
    await eventually(async () => {
      const r = await api.get(`/api/v1/sessions/${ministry.sessionId}/headcount`);
      expect(r.json).to.deep.include({ checkedIn: 1, volunteers: 1 });
    });
  });

  it('adds a helper without an account by name, which the server keeps and the form does not', async () => {
    const { page } = door;
    const controls = page.getByRole('group', { name: 'Voluntários na sala' });
    await controls.getByText('Registrar ajudante sem conta').click();
    const name = controls.getByLabel('Nome do ajudante');
    await name.fill('Dona Cida');
    await controls.getByRole('button', { name: 'Registrar na sala' }).click();
    await controls.getByText('Ajudante registrado na sala.').waitFor();
    expect(await name.inputValue()).to.equal('');
    expect(await headcountText(door)).to.equal('Na sala: 1 · saíram: 0 · voluntários: 2 de 1');
    expect((await volunteersOnServer()).map((v) => [v.name, v.userId === null])).to.deep.equal([
      ['Beatriz (porta)', false],
      ['Dona Cida', true],
    ]);
    await door.shot('03-helper');
  });

  it('offline, the controls are disabled and say that volunteers need the network', async () => {
    const { page, context } = door;
    await context.setOffline(true);
    await waitForStatus(door, { online: false });
    const controls = page.getByRole('group', { name: 'Voluntários na sala' });
    await page.locator('[data-test="volunteers-hint"][data-online="false"]').waitFor();
    expect(await controls.getByRole('button', { name: 'Sair da sala' }).isDisabled()).to.equal(true);
    expect(await controls.getByRole('button', { name: 'Registrar na sala' }).isDisabled()).to.equal(true);
    expect(await controls.getByText(/Sem conexão: não dá para registrar voluntários agora/).count()).to.equal(
      1,
    );
    await door.shot('04-offline');
    await context.setOffline(false);
    await waitForStatus(door, { online: true });
    await page.locator('[data-test="volunteers-hint"][data-online="true"]').waitFor();
  });

  it('"Sair da sala" checks her out: the server keeps the stay, closed, and the desk counts one less', async () => {
    const { page } = door;
    const controls = page.getByRole('group', { name: 'Voluntários na sala' });
    await controls.getByRole('button', { name: 'Sair da sala' }).click();
    await controls.getByRole('button', { name: 'Estou nesta sala' }).waitFor();
    expect(await headcountText(door)).to.equal('Na sala: 1 · saíram: 0 · voluntários: 1 de 1');
    const [me, helper] = await volunteersOnServer();
    expect(me?.checkedOutAt).to.be.a('string');
    expect(helper?.checkedOutAt).to.equal(null);
  });

  it("lists an offline check-in that arrived into a full room in the admins' view, with why, who, device and when", async () => {
    // Another room, of one place, and a tablet's two offline check-ins arriving into it.
    const classId = await api.create('/api/v1/classes', { name: 'Turma Girassol', capacity: 1 }, 'classId');
    const sessionId = await api.create('/api/v1/sessions', { classId, date: ministry.today }, 'sessionId');
    const children: string[] = [];
    for (const displayName of ['Clara Nunes', 'Davi Rocha']) {
      children.push(
        await api.create(
          '/api/v1/students',
          {
            displayName,
            guardianName: 'Responsável',
            phones: [{ number: '+55 11 98765-4321', qualifier: 'mãe' }],
            classId,
          },
          'studentId',
        ),
      );
    }
    const at = Date.now() - 60_000;
    const synced = await api.send('POST', '/api/v1/sync/events', {
      events: children.map((studentId, i) => ({
        eventId: randomUUID(),
        type: 'CHECK_IN',
        studentId,
        sessionId,
        checkInId: randomUUID(),
        clientTimestamp: new Date(at + i * 1000).toISOString(),
      })),
    });
    expect(synced.status, synced.text).to.equal(200);

    const { page } = office;
    await signIn(office, ADMIN.email, ADMIN.password);
    await page.getByRole('button', { name: 'Administração' }).click();
    await page.locator('body[data-screen="admin-conflicts"]').waitFor();
    const section = page.getByRole('region', { name: 'Entradas fora da regra de admissão' });
    const card = section.locator('[data-test="admission-exception"]');
    await card.first().waitFor();
    expect(await card.count()).to.equal(1);
    expect(await card.getAttribute('data-reason')).to.equal('ROOM_FULL');
    expect(await card.getAttribute('data-role')).to.equal('ADMIN');
    const text = (await card.textContent()) ?? '';
    for (const shown of [
      'Davi Rocha',
      'Sala cheia (1/1).',
      'Entrada',
      'Administrador',
      'no aparelho',
      'no servidor',
    ])
      expect(text).to.contain(shown);
    expect(await section.locator('[data-test="exception-count"]').textContent()).to.contain('1 entrada(s)');
    // Its device is the API client's, not this tablet.
    expect(await card.locator('[data-test="device"]').textContent()).not.to.contain('este tablet');
    await office.shot('05-admin-exceptions');
  });

  it('ran without a CSP violation or an uncaught error', () => {
    expect([...door.problems(), ...office.problems()]).to.deep.equal([]);
  });
});
