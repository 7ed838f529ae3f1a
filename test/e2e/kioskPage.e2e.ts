/**
 * Calling a guardian from the door: the service's notifier is the webhook one, pointed at a fake SMS
 * gateway in this process on 127.0.0.1. Online, the door pages João's guardian and the gateway gets
 * the number while the tablet shows only how many phones were reached; offline, Maria's page waits on
 * the tablet, which says so, and goes out once when the network returns; the admins' view lists both.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import * as t from 'io-ts';
import { decodeAs } from '../support/http.js';
import {
  ADMIN,
  docShot,
  eventually,
  type KioskPage,
  kioskSuite,
  signIn,
  waitForStatus,
} from './kioskHarness.js';

const Received = t.type({ to: t.string, message: t.string, purpose: t.string });
const Pages = t.type({
  items: t.array(
    t.type({ studentId: t.string, message: t.union([t.string, t.null]), phonesPaged: t.number }),
  ),
});
const PHONE = '+55 11 98765-4321';

describe('kiosk (e2e): calling a guardian from the door, online and offline', function () {
  this.timeout(180_000);
  const received: Array<t.TypeOf<typeof Received>> = [];
  let gateway: Server;
  let door: KioskPage;
  let office: KioskPage;

  const id = (name: string): string => {
    const found = suite().ministry.students.get(name);
    if (found === undefined) throw new Error(`no child named ${name}`);
    return found;
  };
  const row = (k: KioskPage, name: string) => k.page.locator('li.child', { hasText: name });
  const checkIn = async (typed: string, name: string) => {
    const { page } = door;
    await page.getByRole('searchbox').fill(typed);
    await row(door, name).getByRole('button', { name: 'Entrada' }).click();
    await page.locator('body[data-screen="label"]').waitFor();
    await page.getByRole('button', { name: 'Concluir' }).click();
    await page.locator('body[data-screen="desk"]').waitFor();
  };
  const callGuardian = async (name: string, message: string) => {
    const { page } = door;
    await row(door, name).getByRole('button', { name: 'Saída' }).click();
    await page.locator('body[data-screen="checkout"]').waitFor();
    await page.getByRole('button', { name: 'Chamar responsável' }).click();
    await page.locator('body[data-screen="page-guardian"]').waitFor();
    await page.getByLabel('Recado (opcional)').fill(message);
    await page.getByRole('button', { name: 'Chamar', exact: true }).click();
  };
  const backToDesk = async () => {
    await door.page.getByRole('button', { name: 'Voltar' }).click();
    await door.page.locator('body[data-screen="checkout"]').waitFor();
    await door.page.getByRole('button', { name: 'Voltar' }).click();
    await door.page.locator('body[data-screen="desk"]').waitFor();
  };
  const pagesWaiting = (n: number, timeout = 60_000) =>
    door.page.locator(`[data-test="sync-status"][data-pages-waiting="${n}"]`).waitFor({ timeout });

  /** The fake SMS gateway, listening before the service starts with its URL. */
  const startGateway = async (): Promise<string> => {
    gateway = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString('utf8');
      });
      req.on('end', () => {
        received.push(decodeAs(Received, JSON.parse(body)));
        res.end();
      });
    });
    await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
    const address: AddressInfo | string | null = gateway.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    return `http://127.0.0.1:${address.port}/sms`;
  };
  const suite = kioskSuite(['page-door', 'page-office'], {
    env: async () => ({ NOTIFY_WEBHOOK_URL: await startGateway() }),
  });
  before(() => {
    door = suite().tablet('page-door');
    office = suite().tablet('page-office');
  });
  // After the suite's own: the service stops before its gateway.
  after(async () => {
    await new Promise<void>((r) => (gateway === undefined ? r() : gateway.close(() => r())));
  });

  it('online, the door calls João’s guardian: the gateway gets the number, the tablet only a count', async () => {
    await signIn(door, suite().ministry.chamador.email, suite().ministry.chamador.password);
    await waitForStatus(door, { online: true, pending: 0 });
    await door.page.getByRole('button', { name: /Turma Arco-Íris · Culto da manhã/ }).click();
    await door.page.locator('body[data-screen="desk"]').waitFor();
    await checkIn('joao', 'João Pedro Araújo');
    // Once the server has the check-in (the roster no longer says "awaiting the server").
    await row(door, 'João Pedro Araújo')
      .locator('.child-status', { hasText: /^Presente desde \d\d:\d\d$/ })
      .waitFor({ timeout: 60_000 });
    await callGuardian('João Pedro Araújo', 'Venha à sala 3, por favor.');
    const result = door.page.locator('[data-test="page-result"][data-outcome="sent"]');
    await result.waitFor();
    expect(await result.textContent()).to.equal('Responsável chamado (1 telefone(s)).');
    expect(received).to.deep.equal([
      {
        to: PHONE,
        message: 'Chamada: João Pedro Araújo — Venha à sala 3, por favor.',
        purpose: 'guardian-page',
      },
    ]);
    expect(await door.page.content()).to.not.include('98765');
    await door.shot('01-called');
  });

  it('offline, the call waits on the tablet and says so; back online it is sent once', async () => {
    const { page, context } = door;
    await backToDesk();
    await context.setOffline(true);
    await waitForStatus(door, { online: false });
    await checkIn('maria', 'Maria Antônia Souza');
    await callGuardian('Maria Antônia Souza', '');
    const result = page.locator('[data-test="page-result"][data-outcome="queued"]');
    await result.waitFor();
    expect(await result.textContent()).to.equal(
      'Sem conexão: o chamado ficou na fila e será enviado quando a rede voltar.',
    );
    await pagesWaiting(1);
    expect(await page.locator('[data-test="sync-status"]').textContent()).to.include('1 chamado(s) na fila');
    await door.shot('02-queued');
    await docShot(door, 'kiosk-page-queued');
    expect(received).to.have.length(1);

    await context.setOffline(false);
    await pagesWaiting(0);
    expect(received).to.have.length(2);
    expect(received[1]).to.deep.equal({
      to: PHONE,
      message: 'Chamada: Maria Antônia Souza — por favor, venha até a sala.',
      purpose: 'guardian-page',
    });
    await waitForStatus(door, { online: true, pending: 0 });
    const served = await eventually(async () => {
      const r = await suite().api.get(`/api/v1/pages?sessionId=${suite().ministry.sessionId}`);
      expect(r.status, r.text).to.equal(200);
      return decodeAs(Pages, r.json).items;
    });
    expect(served).to.deep.equal([
      {
        ...served[0],
        studentId: id('João Pedro Araújo'),
        message: 'Venha à sala 3, por favor.',
        phonesPaged: 1,
      },
      { ...served[1], studentId: id('Maria Antônia Souza'), message: null, phonesPaged: 1 },
    ]);
    // Nothing more went out meanwhile: the resend paged once.
    expect(received).to.have.length(2);
  });

  it("the admins' view lists the day's calls", async () => {
    const { page } = office;
    await signIn(office, ADMIN.email, ADMIN.password);
    await page.getByRole('button', { name: 'Administração' }).click();
    await page.locator('body[data-screen="admin-conflicts"]').waitFor();
    await page.getByRole('button', { name: 'Chamados' }).click();
    await page.locator('body[data-screen="admin-pages"]').waitFor();
    await page.locator('[data-test="page-count"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('[data-test="page-count"]').textContent()).to.equal('2 chamado(s) neste dia.');
    const rows = page.locator('tr[data-test="page"]');
    expect(await rows.count()).to.equal(2);
    expect(await rows.nth(0).textContent())
      .to.include('João Pedro Araújo')
      .and.include('Venha à sala 3');
    expect(await rows.nth(1).textContent())
      .to.include('Maria Antônia Souza')
      .and.include('(pedido para vir até a sala)')
      .and.include('Beatriz (porta)');
    expect(await page.content()).to.not.include('98765');
    await office.shot('03-admin-pages');
    await docShot(office, 'kiosk-admin-pages');
  });

  it('ran without a CSP violation or an uncaught error', () => {
    expect([...door.problems(), ...office.problems()]).to.deep.equal([]);
  });
});
