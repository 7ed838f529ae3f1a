/**
 * The office's administration pages in a real Chromium against the real service (JWT mode): an
 * ADMIN opens a child's page (history, pickup list, audit trail, the LGPD export), gives a temporary
 * pickup grant, soft-deletes another child with a justification, creates a user with a role and a
 * custom role, and reads the weekly attendance chart, its CSV and the first-time visitors. No CSP
 * violation. Screenshots of each page go to test-artifacts/e2e/.
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
  browserSuite,
  type Ministry,
  openOffice,
  seedMinistry,
  signInToOffice,
} from './kioskHarness.js';

const Grants = t.type({
  items: t.array(
    t.type({ adultName: t.string, active: t.boolean, valid_from: t.string, valid_until: t.string }),
  ),
});
const StudentStatus = t.type({ status: t.string, deleted_justification: t.union([t.string, t.null]) });
const Users = t.type({ items: t.array(t.type({ email: t.string, roles: t.array(t.string) })) });
const Roles = t.type({ items: t.array(t.type({ name: t.string, permissions: t.array(t.string) })) });

describe('office (e2e): child page, pickup grant, soft delete, users and roles, reports', function () {
  this.timeout(180_000);
  let browser: Browser;
  let api: Api;
  let ministry: Ministry;
  let page: Page;
  const problems: string[] = [];
  const shot = (name: string) =>
    page.screenshot({ path: path.join(ARTIFACTS, `office-${name}.png`), fullPage: true });
  const idOf = (name: string) => ministry.students.get(name) ?? '';

  const suite = browserSuite({
    prepare: async (api) => {
      ministry = await seedMinistry(api);
      // One child checked in today (the history and the chart) and a walk-in visitor (the visitors list).
      const checkIn = await api.send('POST', '/api/v1/check-in', {
        sessionId: ministry.sessionId,
        studentId: idOf('Maria Antônia Souza'),
      });
      expect(checkIn.status, checkIn.text).to.equal(201);
      const walkIn = await api.send('POST', '/api/v1/check-in', {
        sessionId: ministry.sessionId,
        visitor: { displayName: 'Heitor Visitante', guardianName: 'Sônia', phone: '+55 11 91234-0000' },
      });
      expect(walkIn.status, walkIn.text).to.equal(201);
    },
  });
  before(async () => {
    ({ api, browser } = suite());
    page = await openOffice(browser, api.url, problems, { timezoneId: 'UTC', acceptDownloads: true });
    await signInToOffice(page, ADMIN);
  });
  const addUser = async (email: string, displayName: string, role: string, password: string) => {
    const created = await api.send('POST', '/api/v1/users', { email, displayName, roles: [role], password });
    expect(created.status, created.text).to.equal(201);
  };
  /** Signs another user in, in a browser context of their own, and runs `use` on their page. */
  const asAnother = async (email: string, password: string, use: (p: Page) => Promise<void>) => {
    const context = await browser.newContext({ locale: 'pt-BR', timezoneId: 'UTC' });
    try {
      const other = await context.newPage();
      other.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      await other.goto(`${api.url}/office/`);
      await other.getByLabel('E-mail').fill(email);
      await other.getByLabel('Senha').fill(password);
      await other.getByRole('button', { name: 'Entrar' }).click();
      await use(other);
    } finally {
      await context.close();
    }
  };

  it("a child's page shows the record, today's check-in, the pickup list and the audit trail, and exports", async () => {
    await page.getByLabel('Buscar pelo nome').fill('maria antonia');
    await page.getByRole('link', { name: 'Maria Antônia Souza' }).click();
    await page.locator('body[data-page="child"]').waitFor();
    await page.getByRole('heading', { name: 'Maria Antônia Souza', level: 1 }).waitFor();
    await page.locator('[data-test="child-history"] td', { hasText: 'presente' }).waitFor();
    await page.locator('[data-test="pickup-list"] td', { hasText: 'Carla Souza' }).waitFor();
    // The page's own reads are audited, so the trail names the child at least once.
    await page.locator('[data-test="child-audit"] tbody tr').first().waitFor();
    expect(await page.locator('[data-test="child-audit"]').textContent()).to.contain('/api/v1/students');
    const [file] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Baixar tudo o que guardamos (LGPD)' }).click(),
    ]);
    expect(file.suggestedFilename()).to.equal(`chamada-${idOf('Maria Antônia Souza')}.json`);
    const saved = await file.path();
    expect(await readFile(saved, 'utf8')).to.contain('Maria Antônia Souza');
    await shot('child-page');
  });

  it("a child's page shows the family pass, downloads it, and an ADMIN replaces a lost card (0049)", async () => {
    const card = page.locator('[data-test="child-family-pass"] canvas[data-loaded="true"]');
    await card.waitFor();
    expect(await card.getAttribute('aria-label')).to.contain('Cartão da família');
    const svgText = async () => {
      const [file] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Baixar (SVG)' }).click(),
      ]);
      expect(file.suggestedFilename()).to.equal('cartao-familia.svg');
      return readFile(await file.path(), 'utf8');
    };
    const before = await svgText();
    expect(before).to.contain('Maria').and.contain('Cartão da família');
    expect(before).not.to.contain('Souza');
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Cartão perdido: emitir outro' }).click();
    await page.getByText('Novo cartão emitido; o anterior deixa de valer.').waitFor();
    await card.waitFor();
    // The new card's QR code is another: the drawing of its modules differs.
    const after = await svgText();
    expect(after.match(/ d="[^"]+"/)?.[0]).not.to.equal(before.match(/ d="[^"]+"/)?.[0]);
    await page
      .locator('[data-test="child-family-pass"]')
      .screenshot({ path: path.join(ARTIFACTS, 'office-family-pass.png') });
  });

  it('edits the fields the list does not show (address, membership) and returns to the page', async () => {
    await page.getByRole('link', { name: 'Editar dados' }).click();
    // The form is inert and busy until it holds the record. The edit page's own (`#/children/<id>`):
    // until the route changes, the child page's three forms match `main form` too.
    await page.locator('body[data-page="children"] main form:not([aria-busy])').waitFor();
    await page.getByLabel('Bairro').fill('Vila Mariana');
    await page.getByLabel('Cidade').fill('São Paulo');
    await page.getByLabel('Situação da família na igreja').fill('membros');
    // Dates are typed dd/mm/aaaa whatever the browser's locale; one not on the calendar is refused here.
    const birth = page.getByLabel('Data de nascimento');
    expect(await birth.getAttribute('inputmode')).to.equal('numeric');
    await birth.fill('31/02/2019');
    await page.getByRole('button', { name: 'Salvar' }).click();
    await page.locator('.field-error', { hasText: 'Data inválida: escreva dd/mm/aaaa' }).waitFor();
    expect(await birth.getAttribute('aria-invalid')).to.equal('true');
    await birth.fill('15/03/2019');
    await page.getByRole('button', { name: 'Salvar' }).click();
    await page.locator('body[data-page="child"] dd', { hasText: 'Vila Mariana, São Paulo' }).waitFor();
    await page.locator('body[data-page="child"] dd', { hasText: '15/03/2019' }).waitFor();
    const stored = decodeAs(
      t.type({
        address: t.unknown,
        familyMembershipStatus: t.unknown,
        phones: t.unknown,
        birthDate: t.unknown,
      }),
      (await api.get(`/api/v1/students/${idOf('Maria Antônia Souza')}`)).json,
    );
    expect({ ...stored }).to.deep.include({
      address: { neighborhood: 'Vila Mariana', city: 'São Paulo' },
      familyMembershipStatus: 'membros',
      birthDate: '2019-03-15',
      // The phone's qualifier is the family's word, kept through the edit.
      phones: [{ number: '+55 11 98765-4321', qualifier: 'mãe' }],
    });
  });

  it('gives a temporary pickup grant in the name of a guardian', async () => {
    const form = page.locator('[data-test="grant-form"]');
    await form.getByLabel('Autorizado por').selectOption({ label: 'Carla Souza (N1)' });
    await form.getByLabel('Adulto autorizado').fill('Roberto Tio');
    await form.getByLabel('Parentesco').fill('tio');
    // Today, the whole day (no times: from its start to its end), typed as the office writes dates.
    const today = new Date().toISOString().slice(0, 10);
    const [y, m, d] = today.split('-');
    await form.getByLabel('Válida de').fill(`${d}/${m}/${y}`);
    await form.getByLabel('Válida até').fill(`${d}/${m}/${y}`);
    await form.getByRole('button', { name: 'Autorizar' }).click();
    await page.locator('[data-test="pickup-grants"] td', { hasText: 'Roberto Tio' }).waitFor();
    expect(await page.locator('[data-test="pickup-grants"]').textContent()).to.contain('valendo');
    await shot('child-pickup-grant');
    const grants = decodeAs(
      Grants,
      (await api.get(`/api/v1/students/${idOf('Maria Antônia Souza')}/pickup-authorizations`)).json,
    );
    expect(grants.items).to.deep.equal([
      {
        ...grants.items[0],
        adultName: 'Roberto Tio',
        active: true,
        valid_from: `${today}T00:00:00.000Z`,
        valid_until: `${today}T23:59:59.999Z`,
      },
    ]);
  });

  it('soft-deletes a child with a justification; the child is then listed among the deleted', async () => {
    await page.goto(`${api.url}/office/#/child/${idOf('Pedro Henrique Lima')}`);
    await page.getByRole('heading', { name: 'Pedro Henrique Lima', level: 1 }).waitFor();
    await page.getByLabel('Justificativa').fill('Curto');
    await page.getByRole('button', { name: 'Excluir' }).click();
    // The browser refuses a justification under 10 characters before anything is sent.
    expect(await page.getByLabel('Justificativa').evaluate((el) => el.matches(':invalid'))).to.equal(true);
    await page.getByLabel('Justificativa').fill('A família mudou-se para outra cidade');
    await page.getByRole('button', { name: 'Excluir' }).click();
    await page
      .locator('[data-test="child-status"]', {
        hasText: 'Excluída. Justificativa: A família mudou-se para outra cidade',
      })
      .waitFor();
    await shot('child-deleted');
    const stored = decodeAs(
      StudentStatus,
      (await api.get(`/api/v1/students/${idOf('Pedro Henrique Lima')}`)).json,
    );
    expect(stored).to.deep.include({
      status: 'DELETED',
      deleted_justification: 'A família mudou-se para outra cidade',
    });
    await page.getByRole('link', { name: 'Crianças' }).click();
    await page.getByLabel('Situação').selectOption('DELETED');
    await page.getByRole('link', { name: 'Pedro Henrique Lima' }).waitFor();
  });

  it('creates a custom role and a user holding it and CHAMADOR', async () => {
    await page.getByRole('link', { name: 'Usuários' }).click();
    await page.locator('body[data-page="users"]').waitFor();
    const roleForm = page.locator('[data-test="role-form"]');
    await roleForm.getByLabel('Código (MAIÚSCULAS, ex.: PROFESSOR)').fill('PROFESSOR');
    await roleForm.getByLabel('Nome do papel').fill('Professor');
    await roleForm.getByLabel('Fazer chamada e check-in').check();
    await roleForm.getByLabel('Ver relatórios').check();
    await roleForm.getByRole('button', { name: 'Criar papel' }).click();
    await page.locator('[data-test="roles-table"] td', { hasText: 'Professor (PROFESSOR)' }).waitFor();
    const userForm = page.locator('[data-test="user-form"]');
    await userForm.getByLabel('E-mail').fill('lucas@igreja.org');
    await userForm.getByLabel('Nome').fill('Lucas Professor');
    await userForm.getByLabel('Senha inicial (12 caracteres ou mais)').fill('uma-senha-longa-2026');
    await userForm.getByLabel('Professor').check();
    await userForm.getByLabel('Chamador').check();
    await userForm.getByRole('button', { name: 'Criar usuário' }).click();
    await page.locator('tr[data-user="lucas@igreja.org"]').waitFor();
    await shot('users');
    const users = decodeAs(Users, (await api.get('/api/v1/users')).json);
    expect(users.items.find((u) => u.email === 'lucas@igreja.org')?.roles).to.have.members([
      'PROFESSOR',
      'CHAMADOR',
    ]);
    const roles = decodeAs(Roles, (await api.get('/api/v1/roles')).json);
    expect(roles.items.find((r) => r.name === 'PROFESSOR')?.permissions).to.have.members([
      'attendance',
      'reports',
    ]);
  });

  it('reports: the weekly chart and table, the CSV download, the visitors', async () => {
    await page.getByRole('link', { name: 'Relatórios' }).click();
    await page.locator('body[data-page="reports"]').waitFor();
    await page.locator('[data-test="attendance-chart"] rect.bar').first().waitFor();
    expect(await page.locator('[data-test="attendance-table"]').textContent()).to.contain('Turma Arco-Íris');
    await page.locator('[data-test="visitors"] a', { hasText: 'Heitor Visitante' }).waitFor();
    const [file] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Baixar CSV (uma linha por criança e sessão)' }).click(),
    ]);
    const csv = await readFile(await file.path(), 'utf8');
    expect(csv.split('\r\n')[0]).to.equal(
      'date,sessionId,classId,studentId,displayName,mark,present,markedBy,markedAt,checkedInAt,checkedOutAt',
    );
    expect(csv).to.contain('Maria Antônia Souza').and.contain('Heitor Visitante');
    await shot('reports');
  });

  it('classes: a nucleus, a class moved into it with a capacity, and a one-off session', async () => {
    await page.getByRole('link', { name: 'Turmas' }).click();
    await page.locator('body[data-page="classes"]').waitFor();
    await page.locator('[data-test="nucleus-form"]').getByLabel('Nome').fill('Núcleo Norte');
    await page.locator('[data-test="nucleus-form"]').getByRole('button', { name: 'Criar' }).click();
    // The tables are drawn again with the new nucleus among the choices.
    await page.locator('[data-test="nuclei"] input[value="Núcleo Norte"]').waitFor();
    await page
      .locator('[data-test="classes"] option', { hasText: 'Núcleo Norte' })
      .first()
      .waitFor({ state: 'attached' });
    const row = page.locator('[data-test="classes"] tr', {
      has: page.locator('input[value="Turma Arco-Íris"]'),
    });
    await row.getByLabel('Núcleo').selectOption({ label: 'Núcleo Norte' });
    await row.getByLabel('Capacidade').fill('20');
    await row.getByRole('button', { name: 'Salvar' }).click();
    await page.locator('.message', { hasText: 'Salvo.' }).waitFor();
    const classes = decodeAs(
      t.type({
        items: t.array(
          t.type({ name: t.string, nucleusId: t.union([t.string, t.null]), capacity: t.unknown }),
        ),
      }),
      (await api.get('/api/v1/classes')).json,
    );
    const moved = classes.items.find((c) => c.name === 'Turma Arco-Íris');
    expect(moved?.capacity, JSON.stringify(classes.items)).to.equal(20);
    const nuclei = decodeAs(
      t.type({ items: t.array(t.type({ nucleusId: t.string, name: t.string })) }),
      (await api.get('/api/v1/nuclei')).json,
    );
    const norte = nuclei.items.filter((x) => x.name === 'Núcleo Norte');
    expect(norte).to.have.length(1);
    expect(moved?.nucleusId).to.equal(norte[0]?.nucleusId);
    await page.getByLabel('Sessões da turma').selectOption({ label: 'Turma Arco-Íris' });
    await page.locator(`[data-test="sessions"][data-class-id="${ministry.classId}"]`).waitFor();
    const form = page.locator('[data-test="session-form"]');
    await form.getByLabel('Data').fill('24/12/2026');
    await form.getByLabel('Título').fill('Culto de Natal');
    await form.getByRole('button', { name: 'Criar' }).click();
    await page.locator('.message', { hasText: /Criado\.|recusou|conexão|permissão/ }).waitFor();
    expect(await page.locator('.message').textContent()).to.equal('Criado.');
    await page.locator('[data-test="sessions-table"] input[value="Culto de Natal"]').waitFor();
    await shot('classes');
    // Deactivated (0047), the session leaves the list; listed with the deactivated ones, it shows its
    // state and is reactivated.
    const christmas = page.locator('[data-test="sessions-table"] tr', {
      has: page.locator('input[value="Culto de Natal"]'),
    });
    page.once('dialog', (d) => void d.accept());
    await christmas.getByRole('button', { name: /^Desativar/ }).click();
    await page.locator('.message', { hasText: 'Desativado.' }).waitFor();
    await christmas.waitFor({ state: 'detached' });
    const showInactive = page.getByLabel('Mostrar também os desativados');
    await showInactive.check();
    await christmas.locator('[data-test="status"]', { hasText: 'Desativado' }).waitFor();
    await christmas.getByRole('button', { name: /^Reativar/ }).click();
    await page.locator('.message', { hasText: 'Reativado.' }).waitFor();
    await christmas.locator('[data-test="status"]', { hasText: 'Ativo' }).waitFor();
    await showInactive.uncheck();
    const sessions = decodeAs(
      t.type({ items: t.array(t.type({ date: t.string, title: t.union([t.string, t.null]) })) }),
      (await api.get(`/api/v1/sessions?classId=${ministry.classId}`)).json,
    );
    expect(sessions.items).to.deep.include({
      ...sessions.items.find((s) => s.date === '2026-12-24'),
      title: 'Culto de Natal',
    });
  });

  it('offers a coordinator (CADASTRO) no users or reports page, which the server would refuse them', async () => {
    await addUser('ana@igreja.org', 'Ana Secretaria', 'CADASTRO', 'outra-senha-longa-2026');
    await asAnother('ana@igreja.org', 'outra-senha-longa-2026', async (coordinator) => {
      await coordinator.locator('body[data-page="children"]').waitFor();
      const nav = coordinator.getByRole('navigation');
      const links = await nav.getByRole('link').allTextContents();
      expect(links).to.include.members(['Crianças', 'Turmas']);
      expect(links).to.not.include('Usuários');
      expect(links).to.not.include('Relatórios');
      // The administrator's navigation still offers both (the tests above follow them).
      const adminLinks = await page.getByRole('navigation').getByRole('link').allTextContents();
      expect(adminLinks).to.include.members(['Usuários', 'Relatórios']);
    });
  });

  it('lets in a custom role that grants students.add, offering the reports it grants, and turns away one that does not', async () => {
    const role = await api.send('POST', '/api/v1/roles', {
      name: 'SECRETARIA',
      display_name: 'Secretaria',
      permissions: ['students.search', 'students.add', 'reports'],
    });
    expect(role.status, role.text).to.equal(201);
    await addUser('bia@igreja.org', 'Bia Secretaria', 'SECRETARIA', 'mais-uma-senha-longa-2026');
    await asAnother('bia@igreja.org', 'mais-uma-senha-longa-2026', async (secretary) => {
      await secretary.locator('body[data-page="children"]').waitFor();
      const links = await secretary.getByRole('navigation').getByRole('link').allTextContents();
      expect(links).to.include.members(['Crianças', 'Importar planilha', 'Relatórios']);
      expect(links).to.not.include('Usuários');
      await secretary.getByRole('link', { name: 'Relatórios' }).click();
      await secretary.locator('body[data-page="reports"]').waitFor();
    });
    // PROFESSOR (attendance, reports) and CHAMADOR: no role of Lucas's may register a child.
    await asAnother('lucas@igreja.org', 'uma-senha-longa-2026', async (teacher) => {
      await teacher.getByRole('alert').waitFor();
      expect(await teacher.getByRole('alert').textContent()).to.contain('não tem acesso à secretaria');
      expect(await teacher.locator('body').getAttribute('data-page')).to.equal('sign-in');
    });
  });

  it('switches to English and meets no CSP violation or page error', async () => {
    await page.getByRole('button', { name: 'English' }).click();
    await page.getByRole('heading', { name: 'Classes, nuclei and sessions' }).waitFor();
    await shot('classes-en');
    expect(problems).to.deep.equal([]);
  });
});
