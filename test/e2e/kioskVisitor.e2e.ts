/**
 * A family's first visit, with no network: on one tablet the volunteer registers the child from the
 * desk ("new child"), the form refusing what the API would refuse; the child is checked in with a
 * label whose code the tablet computed. Once the tablet syncs, the server holds the visitor with the
 * tablet's id and the same code, and a second tablet finds the child, checked in, after its own sync.
 */
import { expect } from 'chai';
import * as t from 'io-ts';
import { decodeAs } from '../support/http.js';
import {
  type Api,
  docShot,
  eventually,
  type KioskPage,
  type Ministry,
  signIn,
  twoTabletSuite,
  waitForStatus,
} from './kioskHarness.js';

const Students = t.type({ items: t.array(t.type({ studentId: t.string, displayName: t.string })) });
const Student = t.type({ studentId: t.string, displayName: t.string, visitor: t.boolean });
const Active = t.type({ checkIn: t.type({ code: t.string, status: t.string }) });

describe('kiosk (e2e): a first-time visitor registered offline reaches the server and the other tablet', function () {
  this.timeout(180_000);
  let api: Api;
  let ministry: Ministry;
  let door: KioskPage;
  let other: KioskPage;
  let code = '';

  const openDesk = async (k: KioskPage) => {
    await k.page.getByRole('button', { name: /Turma Arco-Íris · Culto da manhã/ }).click();
    await k.page.locator('body[data-screen="desk"]').waitFor();
  };

  const suite = twoTabletSuite('visitor', 'other');
  before(() => {
    ({ api, ministry, door, other } = suite());
  });

  it('both tablets sign in online; the door tablet then loses the network', async () => {
    for (const k of [door, other]) {
      await signIn(k, ministry.chamador.email, ministry.chamador.password);
      await waitForStatus(k, { online: true, pending: 0 });
      await openDesk(k);
    }
    await door.context.setOffline(true);
    await waitForStatus(door, { online: false });
  });

  it('the new-child form refuses what the API refuses, then registers and checks the child in offline', async () => {
    const { page } = door;
    await page.getByRole('searchbox').fill('helena prado');
    await page.getByText('Nenhuma criança encontrada.').waitFor();
    await page.getByRole('button', { name: 'Nova criança' }).click();
    await page.locator('body[data-screen="new-child"]').waitFor();
    await page.getByLabel('Nome da criança').fill('Helena Prado');
    await page.getByLabel('Responsável', { exact: true }).fill('Rita Prado');
    // Three characters: the API's phone codec wants 4 to 30.
    await page.getByLabel('Telefone do responsável').fill('123');
    await page.getByRole('button', { name: 'Registrar e dar entrada' }).click();
    await page.getByText(/Confira os campos marcados/).waitFor();
    expect(await page.getByLabel('Telefone do responsável').getAttribute('aria-invalid')).to.equal('');
    expect(await page.getByLabel('Nome da criança').getAttribute('aria-invalid')).to.equal(null);
    await page.getByLabel('Telefone do responsável').fill('+55 11 91234-5678');
    await page.getByLabel('Alergias (opcional)').fill('Lactose');
    expect(await page.getByLabel('Telefone do responsável').getAttribute('aria-invalid')).to.equal(null);
    await page.evaluate('window.scrollTo(0, 0)');
    await door.shot('01-new-child');
    await docShot(door, 'kiosk-new-child');
    await page.getByRole('button', { name: 'Registrar e dar entrada' }).click();
    await page.locator('body[data-screen="label"]').waitFor();
    const label = page.locator('[data-test="label"]');
    expect(await label.textContent()).to.contain('Helena Prado');
    expect(await label.textContent()).to.contain('ALERGIA: Lactose');
    code = (await label.locator('[data-test="label-code"]').textContent()) ?? '';
    expect(code).to.match(/^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{6}$/);
    await door.shot('02-label');
    await docShot(door, 'kiosk-visitor-label');
    await page.getByRole('button', { name: 'Concluir' }).click();
    await page.locator('body[data-screen="desk"]').waitFor();
    await page.getByRole('searchbox').fill('helena');
    const row = page.locator('li.child', { hasText: 'Helena Prado' });
    await row.getByText('Visitante').waitFor();
    await row.getByText(/Presente desde .* \(aguardando o servidor\)/).waitFor();
    // The registration and the check-in wait in the outbox.
    await waitForStatus(door, { online: false, pending: 2 });
    await door.shot('03-desk-offline');
    const found = await api.get('/api/v1/students?q=Helena');
    expect(decodeAs(Students, found.json).items).to.deep.equal([]);
  });

  it('once the door tablet syncs, the server holds the visitor with the code the label printed', async () => {
    await door.context.setOffline(false);
    await waitForStatus(door, { online: true, pending: 0 });
    const visitor = await eventually(async () => {
      const r = await api.get('/api/v1/students?q=Helena');
      const [only, ...rest] = decodeAs(Students, r.json).items;
      expect(rest).to.deep.equal([]);
      if (only === undefined) throw new Error('no visitor yet');
      const full = await api.get(`/api/v1/students/${only.studentId}`);
      const student = decodeAs(Student, full.json);
      expect(student).to.deep.include({ displayName: 'Helena Prado', visitor: true });
      return student;
    });
    const active = await eventually(async () => {
      const r = await api.get(
        `/api/v1/check-in/active?studentId=${visitor.studentId}&sessionId=${ministry.sessionId}`,
      );
      expect(r.status, r.text).to.equal(200);
      return decodeAs(Active, r.json).checkIn;
    });
    expect(active).to.deep.equal({ ...active, code, status: 'CHECKED_IN' });
  });

  it('the other tablet finds the visitor, checked in, after its own sync', async () => {
    const { page } = other;
    await page.getByRole('searchbox').fill('helena');
    const row = page.locator('li.child', { hasText: 'Helena Prado' });
    await row.getByText(/^Presente desde \d\d:\d\d$/).waitFor({ timeout: 60_000 });
    await row.getByText('Visitante').waitFor();
    await other.shot('04-other-tablet');
  });

  it('keeps what a guardian dictated on the new-child form when a roster pull lands meanwhile', async () => {
    const { page } = other;
    await page.getByRole('searchbox').fill('joana prado');
    await page.getByRole('button', { name: 'Nova criança' }).click();
    await page.locator('body[data-screen="new-child"]').waitFor();
    await page.getByLabel('Nome da criança').fill('Joana Prado');
    await page.getByLabel('Alergias (opcional)').fill('Amendoim');
    const pulls = async () => Number((await page.evaluate('document.body.dataset.rosterPulls')) ?? 0);
    const before = await pulls();
    await api.create(
      '/api/v1/students',
      {
        displayName: 'Outra Criança',
        guardianName: 'Outro Responsável',
        phones: [{ number: '21 97777-0000', qualifier: 'pai' }],
        classId: ministry.classId,
      },
      'studentId',
    );
    await eventually(async () => expect(await pulls()).to.be.greaterThan(before));
    expect(await page.getByLabel('Nome da criança').inputValue()).to.equal('Joana Prado');
    expect(await page.getByLabel('Alergias (opcional)').inputValue()).to.equal('Amendoim');
    await page.getByRole('button', { name: 'Voltar' }).click();
    await page.locator('body[data-screen="desk"]').waitFor();
  });

  it('ran without a CSP violation or an uncaught error', () => {
    expect([...door.problems(), ...other.problems()]).to.deep.equal([]);
  });
});
