/**
 * Two tablets, two browser profiles (two device ids), offline on the same child: the ADMIN's tablet
 * records an emergency check-out, then the CHAMADOR's, later, a check-out with the code. Both changed
 * the child's check-in from the same version, so they conflict; the later one would win between
 * equals, but ADMIN precedence makes the ADMIN's stand. After both sync, both tablets show the
 * emergency check-out, and the admins' view lists the pair (also as CSV), for the ADMIN and for a
 * RELATORIOS account.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import * as t from 'io-ts';
import type { Browser, Page } from 'playwright-core';
import { decodeAs } from '../support/http.js';
import {
  ADMIN,
  type Api,
  ARTIFACTS,
  eventually,
  type KioskPage,
  kioskSuite,
  type Ministry,
  openKiosk,
  PASSWORD,
  signIn,
  tabletDate,
  waitForStatus,
} from './kioskHarness.js';

const CHILD = 'Luíza Gonçalves';
const SESSION_BUTTON = /Turma Arco-Íris · Culto da manhã/;
const EMERGENCY_PERSON = 'Avó Helena';
const JUSTIFICATION = 'A mãe ligou: a avó vem buscar e a etiqueta ficou em casa.';

const RosterCheckinDoc = t.type({
  version: t.union([t.string, t.null]),
  checkins: t.array(t.type({ checkInId: t.string, status: t.string, emergency: t.boolean })),
});
const ActiveCheckin = t.type({
  checkIn: t.type({ status: t.string, pickupPerson: t.union([t.string, t.null]) }),
});
const Side = t.type({
  eventId: t.string,
  role: t.string,
  deviceId: t.union([t.string, t.null]),
  clientTimestamp: t.string,
  change: t.type({ type: t.string }),
});
const Conflicts = t.type({
  items: t.array(t.type({ policy: t.string, subjectId: t.string, winner: Side, loser: Side })),
});

describe('kiosk (e2e): two tablets offline on the same child, an ADMIN and a CHAMADOR', function () {
  this.timeout(240_000);
  let url = '';
  let browser: Browser;
  let api: Api;
  let ministry: Ministry;
  let office: KioskPage;
  let door: KioskPage;
  let reports: KioskPage | undefined;
  let officeDevice = '';
  let doorDevice = '';
  let code = '';

  const childOf = (m: Ministry): string => {
    const id = m.students.get(CHILD);
    if (id === undefined) throw new Error(`no child named ${CHILD}`);
    return id;
  };
  const childId = (): string => childOf(ministry);
  const row = (page: Page) => page.locator(`li.child[data-student-id="${childId()}"]`);
  const deviceIdOf = async (k: KioskPage): Promise<string> =>
    String(await k.page.evaluate('localStorage.getItem("chamada.kiosk.deviceId")'));
  const openDesk = async (k: KioskPage) => {
    await k.page.getByRole('button', { name: SESSION_BUTTON }).click();
    await k.page.locator('body[data-screen="desk"]').waitFor();
    await k.page.getByRole('searchbox').fill('luiza');
  };
  const rosterCheckin = async () =>
    api.get(`/api/v1/replication/roster/${encodeURIComponent(`checkin:${ministry.sessionId}:${childId()}`)}`);
  const downloadCsv = async (k: KioskPage, name: string): Promise<string> => {
    const [download] = await Promise.all([
      k.page.waitForEvent('download'),
      k.page.getByRole('button', { name: 'Baixar CSV' }).click(),
    ]);
    const saved = path.join(ARTIFACTS, name);
    await download.saveAs(saved);
    expect(download.suggestedFilename()).to.match(/^chamada-(conflicts|attendance)-\d{4}-\d\d-\d\d\.csv$/);
    return readFile(saved, 'utf8');
  };

  const suite = kioskSuite(['conflict-admin', 'conflict-chamador'], {
    prepare: async (api, ministry) => {
      await api.create(
        '/api/v1/users',
        {
          email: 'relatorios@chamada.local',
          password: PASSWORD,
          displayName: 'Carlos (relatórios)',
          roles: ['RELATORIOS'],
        },
        'userId',
      );
      // A photo with an image consent: the roster then carries its thumbnail.
      const consent = await api.send('POST', '/api/v1/image-consents', {
        subject_type: 'STUDENT',
        subject_id: childOf(ministry),
        term_version: 'v1',
        purpose: 'reconhecimento na saída',
        term_text: 'Autorizo a foto para conferência na saída.',
        granted_by_name: 'Marta Gonçalves',
        relationship: 'mãe',
        verification_method: 'VERIFIED_GUARDIAN_PRESENT',
      });
      expect(consent.status, consent.text).to.equal(201);
      await api.uploadPhoto(childOf(ministry));
    },
  });
  before(() => {
    ({ url, api, ministry, browser } = suite());
    office = suite().tablet('conflict-admin');
    door = suite().tablet('conflict-chamador');
  });

  it('signs in the ADMIN on one tablet and the CHAMADOR on another, each with its own device id', async () => {
    await signIn(office, ADMIN.email, ADMIN.password);
    await signIn(door, ministry.chamador.email, ministry.chamador.password);
    officeDevice = await deviceIdOf(office);
    doorDevice = await deviceIdOf(door);
    expect(officeDevice).to.match(/^[0-9a-f-]{36}$/);
    expect(doorDevice).to.match(/^[0-9a-f-]{36}$/);
    expect(officeDevice).not.to.equal(doorDevice);
    // Only the ADMIN is offered the admins' view.
    expect(await office.page.getByRole('button', { name: 'Administração' }).count()).to.equal(1);
    expect(await door.page.getByRole('button', { name: 'Administração' }).count()).to.equal(0);
    await waitForStatus(office, { online: true, pending: 0 });
    await waitForStatus(door, { online: true, pending: 0 });
  });

  it('checks the child in at the door, online, and both tablets see it', async () => {
    await openDesk(door);
    await row(door.page).getByRole('button', { name: 'Entrada' }).click();
    await door.page.locator('body[data-screen="label"]').waitFor();
    code = (await door.page.locator('[data-test="label"] [data-test="label-code"]').textContent()) ?? '';
    expect(code).to.match(/^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{6}$/);
    await door.shot('01-label');
    await door.page.getByRole('button', { name: 'Concluir' }).click();
    await door.page.locator('body[data-screen="desk"]').waitFor();
    await waitForStatus(door, { online: true, pending: 0 });
    await eventually(async () => expect((await rosterCheckin()).status).to.equal(200));

    await openDesk(office);
    // The office tablet pulls it on its next pass: the child is here, confirmed by the server.
    await row(office.page)
      .getByText(/^Presente desde \d\d:\d\d$/)
      .waitFor({ timeout: 40_000 });
    await row(door.page)
      .getByText(/^Presente desde \d\d:\d\d$/)
      .waitFor({ timeout: 40_000 });
    await office.shot('01-desk-before');
  });

  it('offline, the ADMIN records an emergency check-out; the admins’ view says it needs the network', async () => {
    for (const k of [office, door]) {
      await k.context.setOffline(true);
      await waitForStatus(k, { online: false });
    }
    const { page } = office;
    await row(page).getByRole('button', { name: 'Saída' }).click();
    await page.locator('body[data-screen="checkout"]').waitFor();
    await page.getByRole('button', { name: 'Saída de emergência', exact: true }).click();
    await page.locator('body[data-screen="emergency"]').waitFor();
    await page.getByLabel('Quem está retirando').fill(EMERGENCY_PERSON);
    await page.getByLabel('Justificativa').fill('curta');
    await page.getByRole('button', { name: 'Confirmar saída de emergência' }).click();
    await page.getByText('Escreva uma justificativa de 10 a 500 caracteres.').waitFor();
    await page.getByLabel('Justificativa').fill(JUSTIFICATION);
    await office.shot('02-emergency');
    await page.getByRole('button', { name: 'Confirmar saída de emergência' }).click();
    await page.locator('body[data-screen="desk"]').waitFor();
    await row(page)
      .getByText(/^Saída de emergência às \d\d:\d\d \(aguardando o servidor\)$/)
      .waitFor();
    await waitForStatus(office, { online: false, pending: 1 });

    await page.getByRole('button', { name: 'Administração' }).click();
    await page.locator('body[data-screen="admin-conflicts"]').waitFor();
    await page.locator('[data-test="admin-status"][data-state="offline"]').waitFor();
    expect(await page.locator('[data-test="admin-status"]').textContent()).to.contain('Sem conexão');
    expect(await page.getByRole('button', { name: 'Baixar CSV' }).isDisabled()).to.equal(true);
    await office.shot('03-admin-offline');
    await page.getByRole('button', { name: 'Quiosque' }).click();
    await openDesk(office);
  });

  it('offline, later, the CHAMADOR checks the same child out with the code', async () => {
    const { page } = door;
    await row(page).getByRole('button', { name: 'Saída' }).click();
    await page.locator('body[data-screen="checkout"]').waitFor();
    // The photo (consented) and who may collect, to check the adult against.
    const drawn = page.locator('[data-test="child-photo"][data-loaded="true"]');
    await drawn.waitFor({ timeout: 10_000 });
    expect(await drawn.getAttribute('aria-label')).to.equal(`Foto de ${CHILD}`);
    expect(await page.locator('[data-test="may-collect"]').textContent()).to.contain(
      'Marta Gonçalves (Responsável)',
    );
    await page.getByRole('button', { name: /Marta Gonçalves/ }).click();
    await page.getByLabel('Código da etiqueta').fill(code);
    await door.shot('02-checkout');
    await page.getByRole('button', { name: 'Confirmar saída' }).click();
    await page.locator('body[data-screen="desk"]').waitFor();
    await row(page)
      .getByText(/^Saiu às \d\d:\d\d \(aguardando o servidor\)$/)
      .waitFor();
    await waitForStatus(door, { online: false, pending: 1 });
    // Neither decision has reached the server.
    const doc = decodeAs(RosterCheckinDoc, (await rosterCheckin()).json);
    expect(doc.checkins.map((c) => c.status)).to.deep.equal(['CHECKED_IN']);
  });

  it('once both are back online and synced, both tablets show the ADMIN outcome', async () => {
    await door.context.setOffline(false);
    await office.context.setOffline(false);
    await waitForStatus(door, { online: true, pending: 0 });
    await waitForStatus(office, { online: true, pending: 0 });
    for (const k of [office, door]) {
      await row(k.page)
        .getByText(/^Saída de emergência às \d\d:\d\d$/)
        .waitFor({ timeout: 45_000 });
    }
    await door.shot('03-desk-after-sync');
    await office.shot('04-desk-after-sync');

    const doc = decodeAs(RosterCheckinDoc, (await rosterCheckin()).json);
    expect(doc.checkins).to.have.length(1);
    expect(doc.checkins[0]).to.include({ status: 'CHECKED_OUT', emergency: true });
    const active = await api.get(`/api/v1/check-in/active?checkInId=${doc.checkins[0]?.checkInId ?? ''}`);
    expect(active.status, active.text).to.equal(200);
    expect(decodeAs(ActiveCheckin, active.json).checkIn).to.deep.include({
      status: 'CHECKED_OUT',
      pickupPerson: EMERGENCY_PERSON,
    });

    const report = await eventually(async () => {
      const r = await api.get(`/api/v1/reports/conflicts?subjectId=${childId()}`);
      expect(r.status, r.text).to.equal(200);
      const items = decodeAs(Conflicts, r.json).items;
      expect(items).to.have.length(1);
      return items;
    });
    const [pair] = report;
    expect(pair?.policy).to.equal('ADMIN_PRECEDENCE');
    expect(pair?.winner).to.deep.include({ role: 'ADMIN', deviceId: officeDevice });
    expect(pair?.winner.change.type).to.equal('EMERGENCY_CHECKOUT');
    expect(pair?.loser).to.deep.include({ role: 'CHAMADOR', deviceId: doorDevice });
    expect(pair?.loser.change.type).to.equal('CHECK_OUT');
    // The CHAMADOR's decision was the later one: only ADMIN precedence let the ADMIN's stand.
    expect(Date.parse(pair?.winner.clientTimestamp ?? '')).to.be.lessThan(
      Date.parse(pair?.loser.clientTimestamp ?? ''),
    );
  });

  it("lists the pair in the admins' view, with who, role, device, when, what won and why, and as CSV", async () => {
    const { page } = office;
    await page.getByRole('button', { name: 'Administração' }).click();
    await page.locator('body[data-screen="admin-conflicts"]').waitFor();
    expect(new URL(page.url()).hash).to.equal('#/admin/conflicts');
    const card = page.locator('[data-test="conflict"]');
    await card.first().waitFor();
    expect(await card.count()).to.equal(1);
    expect(await card.getAttribute('data-policy')).to.equal('ADMIN_PRECEDENCE');
    const winner = card.locator('[data-test="conflict-winner"]');
    const loser = card.locator('[data-test="conflict-loser"]');
    expect(await winner.getAttribute('data-role')).to.equal('ADMIN');
    expect(await winner.getAttribute('data-device-id')).to.equal(officeDevice);
    expect(await loser.getAttribute('data-role')).to.equal('CHAMADOR');
    expect(await loser.getAttribute('data-device-id')).to.equal(doorDevice);
    const text = (await card.textContent()) ?? '';
    for (const shown of [CHILD, 'ADMIN_PRECEDENCE', 'Prevaleceu a decisão do administrador']) {
      expect(text).to.contain(shown);
    }
    const winnerText = (await winner.textContent()) ?? '';
    expect(winnerText).to.contain('Saída de emergência');
    expect(winnerText).to.contain('Administrador');
    expect(winnerText).to.contain(`${officeDevice.slice(0, 8)} (este tablet)`);
    const loserText = (await loser.textContent()) ?? '';
    expect(loserText).to.contain('Saída com código');
    expect(loserText).to.contain('Beatriz (porta) · Chamador');
    expect(loserText).to.contain(doorDevice.slice(0, 8));
    await office.shot('05-admin-conflicts');

    const csv = await downloadCsv(office, 'conflict-admin-conflicts.csv');
    const lines = csv
      .replace(/^\ufeff/, '')
      .trimEnd()
      .split('\r\n');
    expect(lines).to.have.length(2);
    expect(lines[0]).to.match(/^"detectedAt","studentId","child","kind","aspect","policy",/);
    for (const cell of [
      CHILD,
      'ADMIN_PRECEDENCE',
      officeDevice,
      doorDevice,
      'EMERGENCY_CHECKOUT',
      'CHECK_OUT',
    ]) {
      expect(lines[1]).to.contain(`"${cell}"`);
    }
  });

  it("shows the day's attendance in the admins' view, and as CSV", async () => {
    const { page } = office;
    await page.getByRole('button', { name: 'Presença do dia' }).click();
    await page.locator('body[data-screen="admin-attendance"]').waitFor();
    expect(new URL(page.url()).hash).to.equal('#/admin/attendance');
    const line = page.locator(`table.attendance tr[data-student-id="${childId()}"]`);
    await line.waitFor();
    expect(await line.getAttribute('data-present')).to.equal('true');
    expect(await line.locator('[data-test="checked-in"]').textContent()).to.match(/^\d\d:\d\d$/);
    expect(await line.locator('[data-test="checked-out"]').textContent()).to.match(/^\d\d:\d\d$/);
    expect(await page.locator('table.attendance tbody tr').count()).to.equal(1);
    expect(await page.locator('[data-test="attendance-totals"]').textContent()).to.equal(
      '1 criança(s) · 1 presente(s) · 0 ausente(s)',
    );
    await office.shot('06-admin-attendance');

    const csv = await downloadCsv(office, 'conflict-admin-attendance.csv');
    const lines = csv
      .replace(/^\ufeff/, '')
      .trimEnd()
      .split('\r\n');
    expect(lines).to.have.length(2);
    expect(lines[1]).to.contain(`"${childId()}","${CHILD}","true"`);
    expect(lines[1]).to.contain('"Turma Arco-Íris","Culto da manhã"');

    // The day is a dd/mm/aaaa field, as in the office (0043), not the browser's date picker.
    const day = page.getByRole('textbox', { name: 'Dia' });
    const ddmmyyyy = (isoDay: string) => isoDay.split('-').reverse().join('/');
    const today = tabletDate();
    expect(await day.inputValue()).to.equal(ddmmyyyy(today));
    const weekAgo = tabletDate(new Date(Date.now() - 7 * 86_400_000));
    await day.fill(ddmmyyyy(weekAgo));
    await page.getByText('Nenhuma presença registrada neste dia.').waitFor();
    expect(await page.locator('table.attendance').count()).to.equal(0);
    // Not on the calendar: refused by the field, and the day shown stays.
    await day.fill('31/02/2026');
    expect(await day.evaluate((el: HTMLInputElement) => el.validity.customError)).to.equal(true);
    await day.fill(ddmmyyyy(today));
    await line.waitFor();
  });

  it('opens the admins’ view straight away for a RELATORIOS account, which has no desk', async () => {
    reports = await openKiosk(browser, url, 'conflict-relatorios');
    await signIn(reports, 'relatorios@chamada.local', PASSWORD, 'admin-conflicts');
    const { page } = reports;
    const card = page.locator('[data-test="conflict"]');
    await card.first().waitFor();
    expect(await card.count()).to.equal(1);
    // No user list for RELATORIOS: the child is named, the users by id and role.
    const text = (await card.textContent()) ?? '';
    expect(text).to.contain(CHILD);
    expect(text).to.contain('Administrador');
    expect(await page.getByRole('button', { name: 'Quiosque' }).count()).to.equal(0);
    await reports.shot('01-admin-conflicts');
  });

  it('ran without a CSP violation or an uncaught error', () => {
    expect(office.problems()).to.deep.equal([]);
    expect(door.problems()).to.deep.equal([]);
    expect(reports?.problems() ?? []).to.deep.equal([]);
  });
});
