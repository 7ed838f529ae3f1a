/**
 * What the kiosk's end-to-end tests share: the real service as a child process (JWT mode, as
 * deployed), a small ministry seeded through the API, Debian's Chromium driven by playwright-core, and
 * the screenshots a reviewer looks at (test-artifacts/, not committed).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { expect } from 'chai';
import * as t from 'io-ts';
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type Page,
} from 'playwright-core';
import { localDate } from '../../src/rules/schedules.js';
import { call, decodeAs } from '../support/http.js';
import { type ServiceProcess, serviceProcess } from '../support/mainProcess.js';
import { uploadTestPhoto } from '../support/photo.js';

export const ARTIFACTS = path.join('test-artifacts', 'e2e');
/** Debian's package; CHROMIUM_PATH points elsewhere on other systems. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
export const PASSWORD = 'kiosk-e2e-password-0123';
/** The development seed's ADMIN (`POST /api/v1/_seed`). */
export const ADMIN = { email: 'admin@chamada.local', password: 'chamada-dev-password' };
const API_DEVICE = randomUUID();

/**
 * A fixed-offset zone (`Etc/GMT…`, whose sign is reversed) where it is about midday at `now`: the
 * local date there is `now`'s UTC date, and the tablets' midnight is some eleven hours away.
 */
export const middayZone = (now: Date): string => {
  const east = 12 - now.getUTCHours();
  return east === 0 ? 'Etc/UTC' : east > 0 ? `Etc/GMT-${east}` : `Etc/GMT+${-east}`;
};

/**
 * The tablets' time zone in these tests, chosen when the run starts. A session belongs to its date and
 * the harness dates it "today"; in UTC, a file that set up before midnight and ran after found no
 * session (a CI run at 23:53 UTC). Here no file of a run reaches the tablets' midnight.
 */
export const TABLET_ZONE = middayZone(new Date());

/** The tablets' calendar date at `at` (`YYYY-MM-DD`). */
export const tabletDate = (at: Date = new Date()): string => localDate(at, TABLET_ZONE);

/** `env` adds to the service's environment (a notifier's webhook, say). */
export const startKioskService = async (
  env: Readonly<Record<string, string>> = {},
): Promise<{ service: ServiceProcess; url: string }> => {
  const service = await serviceProcess('kiosk-e2e', { AUTH_MODE: 'jwt', NODE_ENV: 'development', ...env });
  return { service, url: await service.start() };
};

/** `extraArgs`: switches of one suite's own (a fake camera's video file, say). */
export const launchChromium = (extraArgs: ReadonlyArray<string> = []): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, ...extraArgs], headless: true });

const Tokens = t.type({ accessToken: t.string });
const Created = (key: string) => t.type({ [key]: t.string });

export interface Api {
  readonly url: string;
  get(p: string): Promise<{ status: number; json: unknown; text: string }>;
  create(p: string, body: unknown, key: string): Promise<string>;
  /** Any mutation (with an Idempotency-Key); the answer as it came. */
  send(method: string, p: string, body: unknown): Promise<{ status: number; json: unknown; text: string }>;
  /** A GET whose answer is bytes (a PNG card, say), with its media type. */
  bytes(p: string): Promise<{ status: number; type: string | null; body: Uint8Array }>;
  /** Stores a test photo for a child with an active image consent; answers its key. */
  uploadPhoto(studentId: string): Promise<string>;
}

/** The REST API as an ADMIN who signed in with a password, as a person would. */
export const adminApi = async (url: string): Promise<Api> => {
  const seeded = await call(`${url}/api/v1/_seed`, { method: 'POST' });
  // 200 with the demo roster (development), 409 when a user exists already.
  expect([200, 201, 409], seeded.text).to.include(seeded.status);
  const login = await call(`${url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(ADMIN),
  });
  expect(login.status, login.text).to.equal(200);
  const headers = {
    Authorization: `Bearer ${decodeAs(Tokens, login.json).accessToken}`,
    'X-Device-Id': API_DEVICE,
  };
  const send: Api['send'] = (method, p, body) =>
    call(`${url}${p}`, {
      method,
      headers: { ...headers, 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() },
      body: JSON.stringify(body),
    });
  return {
    url,
    get: (p) => call(`${url}${p}`, { headers }),
    async bytes(p) {
      const res = await fetch(`${url}${p}`, { headers });
      return {
        status: res.status,
        type: res.headers.get('content-type'),
        body: new Uint8Array(await res.arrayBuffer()),
      };
    },
    send,
    uploadPhoto: (studentId) => uploadTestPhoto(url, studentId, headers),
    async create(p, body, key) {
      const r = await send('POST', p, body);
      expect(r.status, r.text).to.equal(201);
      const id = decodeAs(Created(key), r.json)[key];
      if (id === undefined) throw new Error(`no ${key} in ${r.text}`);
      return id;
    },
  };
};

export interface Ministry {
  readonly classId: string;
  readonly sessionId: string;
  readonly today: string;
  /** By display name. */
  readonly students: ReadonlyMap<string, string>;
  readonly chamador: { readonly email: string; readonly password: string };
}

export const CHILDREN = [
  { displayName: 'João Pedro Araújo', guardianName: 'Rosa Araújo', allergies: 'Amendoim' },
  { displayName: 'Maria Antônia Souza', guardianName: 'Carla Souza', allergies: null },
  { displayName: 'Ana Lúcia Ferreira', guardianName: 'Paulo Ferreira', allergies: 'Lactose' },
  { displayName: 'Luíza Gonçalves', guardianName: 'Marta Gonçalves', allergies: null },
  { displayName: 'Pedro Henrique Lima', guardianName: 'Jorge Lima', allergies: null },
] as const;

/** One class with a session today (the tablets' today, `TABLET_ZONE`), five children and a CHAMADOR. */
export const seedMinistry = async (api: Api): Promise<Ministry> => {
  const today = tabletDate();
  const classId = await api.create('/api/v1/classes', { name: 'Turma Arco-Íris' }, 'classId');
  const sessionId = await api.create(
    '/api/v1/sessions',
    { classId, date: today, title: 'Culto da manhã' },
    'sessionId',
  );
  const students = new Map<string, string>();
  for (const c of CHILDREN) {
    const id = await api.create(
      '/api/v1/students',
      { ...c, phones: [{ number: '+55 11 98765-4321', qualifier: 'mãe' }], classId },
      'studentId',
    );
    students.set(c.displayName, id);
  }
  const chamador = { email: 'chamador@chamada.local', password: PASSWORD };
  await api.create(
    '/api/v1/users',
    { ...chamador, displayName: 'Beatriz (porta)', roles: ['CHAMADOR'] },
    'userId',
  );
  return { classId, sessionId, today, students, chamador };
};

export interface KioskPage {
  readonly context: BrowserContext;
  readonly page: Page;
  /** CSP violations and uncaught page errors seen so far. */
  readonly problems: () => ReadonlyArray<string>;
  shot(name: string): Promise<void>;
}

/** A tablet: its own browser profile (storage, service worker), 10-inch landscape, pt-BR, `TABLET_ZONE`. */
export const openKiosk = async (browser: Browser, url: string, label: string): Promise<KioskPage> => {
  const context = await browser.newContext({
    locale: 'pt-BR',
    timezoneId: TABLET_ZONE,
    viewport: { width: 1280, height: 800 },
    hasTouch: true,
    serviceWorkers: 'allow',
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) problems.push(`csp: ${m.text()}`);
  });
  await page.goto(`${url}/kiosk/`);
  await mkdir(ARTIFACTS, { recursive: true });
  return {
    context,
    page,
    problems: () => problems,
    shot: async (name) => {
      await page.screenshot({ path: path.join(ARTIFACTS, `${label}-${name}.png`), fullPage: true });
    },
  };
};

/**
 * The office in a browser context of its own (pt-BR, a wide screen unless `options` say otherwise),
 * its uncaught page errors and CSP violations pushed to `problems` for the test to assert on.
 */
export const openOffice = async (
  browser: Browser,
  url: string,
  problems: string[],
  options: BrowserContextOptions = {},
): Promise<Page> => {
  const context = await browser.newContext({
    locale: 'pt-BR',
    viewport: { width: 1366, height: 900 },
    ...options,
  });
  const page = await context.newPage();
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) problems.push(`csp: ${m.text()}`);
  });
  await page.goto(`${url}/office/`);
  return page;
};

/** Signs in to the office and waits for its first page. */
export const signInToOffice = async (
  page: Page,
  user: { readonly email: string; readonly password: string },
  landing = 'children',
): Promise<void> => {
  await page.getByLabel('E-mail').fill(user.email);
  await page.getByLabel('Senha').fill(user.password);
  await page.getByRole('button', { name: 'Entrar' }).click();
  await page.locator(`body[data-page="${landing}"]`).waitFor();
};

/** Signs in and waits for the first screen: the sessions, or the admins' view for a reports account. */
export const signIn = async (
  k: KioskPage,
  email: string,
  password: string,
  landing = 'sessions',
): Promise<void> => {
  await k.page.getByLabel('E-mail').fill(email);
  await k.page.getByLabel('Senha').fill(password);
  await k.page.getByRole('button', { name: 'Entrar' }).click();
  await k.page.locator(`body[data-screen="${landing}"]`).waitFor();
};

/** Signs in to a ministry's tablet, waits for the first sync, and opens the desk of its session today. */
export const openMinistryDesk = async (
  k: KioskPage,
  user: { readonly email: string; readonly password: string },
): Promise<void> => {
  await signIn(k, user.email, user.password);
  await waitForStatus(k, { online: true, pending: 0 });
  await k.page.getByRole('button', { name: /Turma Arco-Íris · Culto da manhã/ }).click();
  await k.page.locator('body[data-screen="desk"]').waitFor();
};

/** Waits for the status bar to say so (its data attributes mirror what it shows). */
export const waitForStatus = async (
  k: KioskPage,
  want: { readonly online?: boolean; readonly pending?: number },
  timeout = 30_000,
): Promise<void> => {
  const sel = [
    '[data-test="sync-status"]',
    want.online === undefined ? '' : `[data-online="${want.online}"]`,
    want.pending === undefined ? '' : `[data-pending="${want.pending}"]`,
    '[data-syncing="false"]',
  ].join('');
  await k.page.locator(sel).waitFor({ timeout });
};

const AxeViolations = t.array(t.type({ id: t.string, impact: t.union([t.string, t.null]), nodes: t.number }));
const AXE_SOURCE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/**
 * What axe-core finds against WCAG 2.1 A and AA on the page (or within `selector`): each rule broken,
 * its impact and how many elements break it. Evaluated through the DevTools protocol, which the
 * page's CSP does not govern.
 */
export const axeViolations = async (
  page: Page,
  selector?: string,
): Promise<ReadonlyArray<t.TypeOf<typeof AxeViolations>[number]>> => {
  await page.evaluate(await readFile(AXE_SOURCE, 'utf8'));
  const context = selector === undefined ? 'document' : `document.querySelector(${JSON.stringify(selector)})`;
  return decodeAs(
    AxeViolations,
    await page.evaluate(`axe
      .run(${context}, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })
      .then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact ?? null, nodes: v.nodes.length })))`),
  );
};

/** Polls until `check` stops throwing (the event pipeline applies pushed events a moment later). */
export const eventually = async <A>(check: () => Promise<A>, timeoutMs = 20_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
};

/** The README's screenshots, kept in the repository: written only when asked, so a run leaves the tree clean. */
const DOCS_SHOTS = 'docs/screenshots';

/** Saves the page as `docs/screenshots/<name>.png` when `KIOSK_DOC_SHOTS=1` (the README's pictures). */
export const docShot = async (k: KioskPage, name: string): Promise<void> => {
  if (process.env.KIOSK_DOC_SHOTS !== '1') return;
  await mkdir(DOCS_SHOTS, { recursive: true });
  await k.page.screenshot({ path: path.join(DOCS_SHOTS, `${name}.png`) });
};

/** What a browser suite gets: the service as a process, its URL, the API as an ADMIN, one Chromium. */
export interface BrowserSuite {
  readonly service: ServiceProcess;
  readonly url: string;
  readonly api: Api;
  readonly browser: Browser;
}

export interface BrowserSuiteOptions {
  /** Added to the service's environment, read when the suite starts (after the describe's earlier hooks). */
  readonly env?: () => Readonly<Record<string, string>> | Promise<Readonly<Record<string, string>>>;
  /** Run through the API once the service is up, before Chromium starts. */
  readonly prepare?: (api: Api) => Promise<void>;
}

const started = <A>(ready: A | undefined): A => {
  if (ready === undefined) throw new Error('the suite has not started');
  return ready;
};

/**
 * The one set-up of an end-to-end file, within its `describe`: the service as a process (JWT mode, as
 * deployed), the API as the seed's ADMIN, `prepare` run on it, then Chromium; all closed after the
 * suite. The returned function gives them once its `before` ran.
 */
export const browserSuite = (options: BrowserSuiteOptions = {}): (() => BrowserSuite) => {
  let ready: BrowserSuite | undefined;
  let service: ServiceProcess | undefined;
  let browser: Browser | undefined;
  before(async () => {
    const kiosk = await startKioskService((await options.env?.()) ?? {});
    service = kiosk.service;
    const api = await adminApi(kiosk.url);
    await options.prepare?.(api);
    browser = await launchChromium();
    ready = { service: kiosk.service, url: kiosk.url, api, browser };
  });
  after(async () => {
    await browser?.close();
    await service?.dispose();
  });
  return () => started(ready);
};

/** What a kiosk suite gets: a browser suite, the seeded ministry, and its tablets. */
export interface KioskSuite<L extends string> extends BrowserSuite {
  readonly ministry: Ministry;
  /** The tablet of a label; one per label, opened in the order named (the label also names its screenshots). */
  readonly tablet: (label: L) => KioskPage;
}

export interface KioskSuiteOptions extends Omit<BrowserSuiteOptions, 'prepare'> {
  /** Run through the API after the seed and before Chromium opens the tablets. */
  readonly prepare?: (api: Api, ministry: Ministry) => Promise<void>;
}

/**
 * A browser suite with the seeded ministry, `prepare` run on it, and one tablet (a browser profile of
 * its own) per label.
 */
export const kioskSuite = <L extends string>(
  labels: ReadonlyArray<L>,
  options: KioskSuiteOptions = {},
): (() => KioskSuite<L>) => {
  let ministry: Ministry | undefined;
  let ready: KioskSuite<L> | undefined;
  const base = browserSuite({
    ...(options.env === undefined ? {} : { env: options.env }),
    prepare: async (api) => {
      ministry = await seedMinistry(api);
      await options.prepare?.(api, ministry);
    },
  });
  before(async () => {
    const suite = base();
    const tablets = new Map<L, KioskPage>();
    for (const label of labels) tablets.set(label, await openKiosk(suite.browser, suite.url, label));
    ready = {
      ...suite,
      ministry: started(ministry),
      tablet: (label) => {
        const k = tablets.get(label);
        if (k === undefined) throw new Error(`no tablet labelled ${label}`);
        return k;
      },
    };
  });
  return () => started(ready);
};

/** What a suite of two tablets at one door gets: the service, the API as an ADMIN, the seed, the tablets. */
export interface TwoTablets {
  readonly service: ServiceProcess;
  readonly api: Api;
  readonly ministry: Ministry;
  readonly door: KioskPage;
  readonly other: KioskPage;
}

/**
 * Within a `describe`: one service with the seeded ministry, `prepare` run on it through the API (a
 * class's limits, volunteers), and two tablets in one Chromium (`<label>-door` and `<label>-<second>`
 * in the screenshots), closed after the suite. The returned function gives them once its `before` ran.
 */
export const twoTabletSuite = (
  label: string,
  second: string,
  prepare?: (api: Api, ministry: Ministry) => Promise<void>,
): (() => TwoTablets) => {
  const door = `${label}-door`;
  const other = `${label}-${second}`;
  const suite = kioskSuite([door, other], prepare === undefined ? {} : { prepare });
  return () => {
    const { service, api, ministry, tablet } = suite();
    return { service, api, ministry, door: tablet(door), other: tablet(other) };
  };
};
