/**
 * The admins' view (ADMIN, RELATORIOS) at `#/admin/conflicts`, `#/admin/attendance` and `#/admin/pages`:
 * the conflict report (who, role, device, when, what won and why, and apart the check-ins the admission
 * rule would have refused on arrival), the day's attendance and the
 * guardians paged from the door (0037), each with a CSV
 * download of what it shows. Online only: the reports are the server's, and a tablet holds no users,
 * no other days and no conflict records (0020); offline it says so and loads when the network returns.
 */
import * as E from 'fp-ts/lib/Either.js';
import { dateField, dateInput } from '../../../client/dateInput.js';
import { download, h, replaceChildren } from '../../../client/dom.js';
import {
  fetchAttendance,
  fetchClassNames,
  fetchConflicts,
  fetchPages,
  fetchSessions,
  fetchStudentName,
  fetchUserNames,
  type PageItem,
} from '../adminApi.js';
import {
  type AdminTab,
  type AttendanceLine,
  addDays,
  adminHash,
  attendanceLines,
  attendanceTable,
  attendanceTotals,
  type ConflictLine,
  conflictLines,
  conflictsTable,
  csvFileName,
  type ExceptionLine,
  exceptionLines,
  localDayBounds,
  type Names,
  type PageLine,
  pageLines,
  pagesTable,
  type SideLine,
  type Table,
  unnamedStudents,
} from '../adminModel.js';
import { policyText } from '../admission.js';
import type { ApiFailure } from '../api.js';
import { toCsv } from '../csv.js';
import { formatDateTime, formatTime, isMessageKey, type MessageKey } from '../i18n.js';
import type { Kiosk, Screen } from '../kiosk.js';
import { startSelfService } from './selfService.js';
import { localDay } from './sessions.js';

/** Names looked up one by one (children the local roster does not hold); past this, ids are shown. */
const MAX_NAME_LOOKUPS = 30;

const FAILURES: Readonly<Record<ApiFailure, MessageKey>> = {
  network: 'admin.offline',
  unauthorized: 'admin.signInAgain',
  forbidden: 'admin.forbidden',
  rate_limited: 'admin.error',
  unexpected: 'admin.error',
};

interface Loaded {
  readonly view: HTMLElement;
  readonly table: Table;
}

const shortId = (id: string): string => id.slice(0, 8);

/** The label for a value the server names (a policy, a role), or the value itself when unknown. */
const labelOf = (
  kiosk: Kiosk,
  key: string,
  fallback: string,
  params: Readonly<Record<string, string>> = {},
): string => (isMessageKey(key) ? kiosk.t(key, params) : fallback);

const rosterNames = (kiosk: Kiosk): Map<string, string> =>
  new Map([...kiosk.index().students].map(([id, s]) => [id, s.displayName]));

/** What a side did, who (name and role), on which device, and when by the device and the server. */
const sideDetails = (kiosk: Kiosk, s: SideLine): HTMLElement => {
  const lang = kiosk.lang();
  const who = s.userName ?? kiosk.t('admin.unknownUser', { id: shortId(s.userId) });
  const device =
    s.deviceId === null
      ? kiosk.t('admin.unknownDevice')
      : `${shortId(s.deviceId)}${s.thisDevice ? ` (${kiosk.t('admin.thisDevice')})` : ''}`;
  return h(
    'dl',
    {},
    h('dt', {}, kiosk.t('admin.what')),
    h('dd', {}, labelOf(kiosk, `change.${s.change}`, s.change, { field: s.field ?? '' })),
    h('dt', {}, kiosk.t('admin.who')),
    h('dd', { attrs: { 'data-test': 'who' } }, `${who} · ${labelOf(kiosk, `role.${s.role}`, s.role)}`),
    h('dt', {}, kiosk.t('admin.device')),
    h('dd', { attrs: { 'data-test': 'device' } }, device),
    h('dt', {}, kiosk.t('admin.when')),
    h(
      'dd',
      {},
      kiosk.t('admin.whenValue', {
        device: formatDateTime(lang, s.clientTimestamp),
        server: formatDateTime(lang, s.serverTimestamp),
      }),
    ),
  );
};

const sideView = (kiosk: Kiosk, which: 'winner' | 'loser', s: SideLine): HTMLElement =>
  h(
    'section',
    {
      className: `side side-${which}`,
      attrs: {
        'data-test': `conflict-${which}`,
        'data-role': s.role,
        'data-device-id': s.deviceId ?? '',
        'data-event-id': s.eventId,
      },
    },
    h('h3', {}, kiosk.t(which === 'winner' ? 'admin.won' : 'admin.lost')),
    sideDetails(kiosk, s),
  );

const conflictView = (kiosk: Kiosk, c: ConflictLine): HTMLElement =>
  h(
    'li',
    {
      className: 'conflict',
      attrs: { 'data-test': 'conflict', 'data-policy': c.policy, 'data-student-id': c.studentId },
    },
    h(
      'div',
      { className: 'conflict-head' },
      h(
        'span',
        { className: 'conflict-child' },
        c.child ?? kiosk.t('admin.unknownChild', { id: shortId(c.studentId) }),
      ),
      h('span', { className: 'conflict-kind' }, labelOf(kiosk, `kind.${c.kind}`, c.kind)),
      h(
        'span',
        { className: 'conflict-when' },
        kiosk.t('admin.detectedAt', { time: formatDateTime(kiosk.lang(), c.detectedAt) }),
      ),
    ),
    h(
      'p',
      { className: 'conflict-policy' },
      h('strong', {}, c.policy),
      ` — ${labelOf(kiosk, `policy.${c.policy}`, '')}`,
    ),
    h(
      'div',
      { className: 'conflict-sides' },
      sideView(kiosk, 'winner', c.winner),
      sideView(kiosk, 'loser', c.loser),
    ),
  );

/** A check-in kept although the rule would have refused it: the child, why in words, who, where, when. */
const exceptionView = (kiosk: Kiosk, x: ExceptionLine): HTMLElement => {
  const child = x.child ?? kiosk.t('admin.unknownChild', { id: shortId(x.studentId) });
  return h(
    'li',
    {
      className: 'conflict exception',
      attrs: {
        'data-test': 'admission-exception',
        'data-reason': x.reason,
        'data-student-id': x.studentId,
        'data-role': x.checkIn.role,
        'data-device-id': x.checkIn.deviceId ?? '',
      },
    },
    h(
      'div',
      { className: 'conflict-head' },
      h('span', { className: 'conflict-child' }, child),
      h(
        'span',
        { className: 'conflict-when' },
        kiosk.t('admin.detectedAt', { time: formatDateTime(kiosk.lang(), x.detectedAt) }),
      ),
    ),
    h(
      'ul',
      { className: 'conflict-policy', attrs: { 'aria-label': kiosk.t('admin.exceptionWhy') } },
      ...x.refusals.map((r) =>
        h(
          'li',
          { attrs: { 'data-test': 'exception-reason' } },
          r.refusal === null ? r.code : policyText(kiosk.lang(), r.refusal, child),
        ),
      ),
    ),
    h('div', { className: 'side side-winner' }, sideDetails(kiosk, x.checkIn)),
  );
};

const exceptionsView = (kiosk: Kiosk, lines: ReadonlyArray<ExceptionLine>): HTMLElement => {
  const headingId = 'admission-exceptions-heading';
  return h(
    'section',
    { className: 'exceptions', attrs: { 'aria-labelledby': headingId, 'data-test': 'admission-exceptions' } },
    h('h2', { attrs: { id: headingId } }, kiosk.t('admin.exceptions')),
    h(
      'p',
      { className: 'admin-summary', attrs: { 'data-test': 'exception-count' } },
      lines.length === 0
        ? kiosk.t('admin.noExceptions')
        : kiosk.t('admin.exceptionCount', { n: lines.length }),
    ),
    h('ul', { className: 'conflicts' }, ...lines.map((x) => exceptionView(kiosk, x))),
  );
};

const loadConflicts = async (kiosk: Kiosk, day: string): Promise<E.Either<ApiFailure, Loaded>> => {
  const send = kiosk.session.fetch;
  const { from, to } = localDayBounds(day);
  const found = await fetchConflicts(send, from, to);
  if (E.isLeft(found)) return found;
  const auth = kiosk.session.current();
  // Only an ADMIN may list users; anyone else sees user ids (and their own name).
  const users =
    auth?.user.roles.includes('ADMIN') === true ? await fetchUserNames(send) : new Map<string, string>();
  if (auth !== undefined && !users.has(auth.user.userId)) users.set(auth.user.userId, auth.user.displayName);
  const students = rosterNames(kiosk);
  const { items, exceptions } = found.right;
  for (const id of unnamedStudents([...items, ...exceptions], students).slice(0, MAX_NAME_LOOKUPS)) {
    const name = await fetchStudentName(send, id);
    if (name !== undefined) students.set(id, name);
  }
  const names: Names = { students, users, classes: new Map(), sessions: new Map() };
  const lines = conflictLines(items, names, kiosk.session.deviceId);
  const kept = exceptionLines(exceptions, names, kiosk.session.deviceId);
  const view = h(
    'div',
    {},
    h(
      'p',
      { className: 'admin-summary', attrs: { 'data-test': 'conflict-count' } },
      lines.length === 0 ? kiosk.t('admin.noConflicts') : kiosk.t('admin.conflictCount', { n: lines.length }),
    ),
    found.right.more ? h('p', { className: 'notice' }, kiosk.t('admin.more')) : null,
    h('ul', { className: 'conflicts' }, ...lines.map((c) => conflictView(kiosk, c))),
    exceptionsView(kiosk, kept),
  );
  return E.right({ view, table: conflictsTable(lines, undefined, kept) });
};

const attendanceRow = (kiosk: Kiosk, l: AttendanceLine): HTMLElement => {
  const time = (iso: string | null) => (iso === null ? '—' : formatTime(kiosk.lang(), iso));
  const where = [l.className, l.sessionTitle].filter((p) => p !== null).join(' · ');
  return h(
    'tr',
    { attrs: { 'data-student-id': l.studentId, 'data-present': String(l.present) } },
    h(
      'td',
      { className: 'att-child' },
      l.child ?? kiosk.t('admin.unknownChild', { id: shortId(l.studentId) }),
    ),
    h('td', {}, where === '' ? kiosk.t('admin.noSession') : where),
    h('td', { attrs: { 'data-test': 'checked-in' } }, time(l.checkedInAt)),
    h('td', { attrs: { 'data-test': 'checked-out' } }, time(l.checkedOutAt)),
    h('td', {}, l.mark === null ? '—' : labelOf(kiosk, `admin.mark.${l.mark}`, l.mark)),
    h(
      'td',
      { className: l.present ? 'is-present' : 'is-absent' },
      kiosk.t(l.present ? 'admin.present' : 'admin.absent'),
    ),
  );
};

const loadAttendance = async (kiosk: Kiosk, day: string): Promise<E.Either<ApiFailure, Loaded>> => {
  const send = kiosk.session.fetch;
  // A session of the day has events on the UTC days either side of it (0020).
  const rows = await fetchAttendance(send, addDays(day, -1), addDays(day, 1));
  if (E.isLeft(rows)) return rows;
  const classes = new Map([...kiosk.index().classes, ...(await fetchClassNames(send))]);
  const names: Names = {
    students: rosterNames(kiosk),
    users: new Map(),
    classes,
    sessions: await fetchSessions(send, day),
  };
  const lines = attendanceLines(rows.right, day, names);
  const totals = attendanceTotals(lines);
  const columns: MessageKey[] = [
    'admin.col.child',
    'admin.col.session',
    'admin.col.in',
    'admin.col.out',
    'admin.col.mark',
    'admin.col.present',
  ];
  const view = h(
    'div',
    {},
    h(
      'p',
      { className: 'admin-summary', attrs: { 'data-test': 'attendance-totals' } },
      kiosk.t('admin.totals', totals),
    ),
    lines.length === 0
      ? h('p', { className: 'empty' }, kiosk.t('admin.noAttendance'))
      : h(
          'table',
          { className: 'attendance' },
          h(
            'thead',
            {},
            h('tr', {}, ...columns.map((c) => h('th', { attrs: { scope: 'col' } }, kiosk.t(c)))),
          ),
          h('tbody', {}, ...lines.map((l) => attendanceRow(kiosk, l))),
        ),
  );
  return E.right({ view, table: attendanceTable(day, lines) });
};

/** Sessions of a day looked at for pages, at most (a church has a handful a day). */
const MAX_PAGE_SESSIONS = 50;

const pageRow = (kiosk: Kiosk, l: PageLine): HTMLElement => {
  const where = [l.className, l.sessionTitle].filter((p) => p !== null).join(' · ');
  return h(
    'tr',
    { attrs: { 'data-test': 'page', 'data-student-id': l.studentId, 'data-phones': String(l.phonesPaged) } },
    h('td', {}, formatTime(kiosk.lang(), l.sentAt)),
    h(
      'td',
      { className: 'att-child' },
      l.child ?? kiosk.t('admin.unknownChild', { id: shortId(l.studentId) }),
    ),
    h('td', {}, where === '' ? kiosk.t('admin.noSession') : where),
    h('td', {}, l.message ?? kiosk.t('admin.defaultMessage')),
    h('td', {}, String(l.phonesPaged)),
    h('td', {}, l.sentByName ?? kiosk.t('admin.unknownUser', { id: shortId(l.sentBy) })),
  );
};

/** The pages of the day's sessions (the tablet's calendar day), oldest first. */
const loadPages = async (kiosk: Kiosk, day: string): Promise<E.Either<ApiFailure, Loaded>> => {
  const send = kiosk.session.fetch;
  const sessions = await fetchSessions(send, day);
  const items: PageItem[] = [];
  for (const sessionId of [...sessions.keys()].slice(0, MAX_PAGE_SESSIONS)) {
    const pages = await fetchPages(send, sessionId);
    if (E.isLeft(pages)) return pages;
    items.push(...pages.right);
  }
  const auth = kiosk.session.current();
  const users =
    auth?.user.roles.includes('ADMIN') === true ? await fetchUserNames(send) : new Map<string, string>();
  if (auth !== undefined && !users.has(auth.user.userId)) users.set(auth.user.userId, auth.user.displayName);
  const names: Names = {
    students: rosterNames(kiosk),
    users,
    classes: new Map([...kiosk.index().classes, ...(await fetchClassNames(send))]),
    sessions,
  };
  const lines = pageLines(items, names);
  const columns: MessageKey[] = [
    'admin.col.when',
    'admin.col.child',
    'admin.col.session',
    'admin.col.message',
    'admin.col.phones',
    'admin.col.who',
  ];
  const view = h(
    'div',
    {},
    h(
      'p',
      { className: 'admin-summary', attrs: { 'data-test': 'page-count' } },
      lines.length === 0 ? kiosk.t('admin.noPages') : kiosk.t('admin.pageCount', { n: lines.length }),
    ),
    lines.length === 0
      ? null
      : h(
          'table',
          { className: 'attendance pages' },
          h(
            'thead',
            {},
            h('tr', {}, ...columns.map((c) => h('th', { attrs: { scope: 'col' } }, kiosk.t(c)))),
          ),
          h('tbody', {}, ...lines.map((l) => pageRow(kiosk, l))),
        ),
  );
  return E.right({ view, table: pagesTable(lines) });
};

/** Self-service on this tablet (0052): an ADMIN's to turn on, kept in the tablet's own settings. */
const selfServiceControl = (kiosk: Kiosk): HTMLElement | null => {
  const roles = kiosk.session.current()?.user.roles ?? [];
  if (!roles.includes('ADMIN')) return null;
  return h(
    'section',
    { className: 'self-service-setting', attrs: { 'aria-labelledby': 'self-service-heading' } },
    h('h2', { attrs: { id: 'self-service-heading' } }, kiosk.t('admin.selfService')),
    h('p', { className: 'field-hint' }, kiosk.t('admin.selfServiceHint')),
    h(
      'button',
      {
        className: 'secondary',
        attrs: { type: 'button', 'data-test': 'self-service-on' },
        onClick: () => startSelfService(kiosk),
      },
      kiosk.t('admin.selfServiceOn'),
    ),
  );
};

export const adminScreen = (tab: AdminTab, startDay?: string): Screen => {
  let day = startDay ?? localDay(new Date());
  let generation = 0;
  return {
    name: `admin-${tab}`,
    hash: adminHash(tab),
    render(kiosk) {
      const status = h('p', {
        className: 'notice admin-status',
        attrs: { role: 'status', 'data-test': 'admin-status', 'data-state': 'loading' },
      });
      const body = h('div', { className: 'admin-body' });
      let table: Table | undefined;
      const downloadButton = h(
        'button',
        {
          className: 'secondary',
          attrs: { type: 'button', disabled: '' },
          onClick: () => {
            if (table !== undefined)
              download(csvFileName(tab, day), toCsv(table.header, table.rows), 'text/csv;charset=utf-8');
          },
        },
        kiosk.t('admin.download'),
      );
      const setState = (state: string, text: string) => {
        status.dataset.state = state;
        status.textContent = text;
      };

      const load = async () => {
        generation += 1;
        const mine = generation;
        table = undefined;
        downloadButton.disabled = true;
        replaceChildren(body);
        if (!navigator.onLine) {
          setState('offline', kiosk.t('admin.offline'));
          return;
        }
        setState('loading', kiosk.t('admin.loading'));
        const loaded = await (tab === 'conflicts'
          ? loadConflicts(kiosk, day)
          : tab === 'attendance'
            ? loadAttendance(kiosk, day)
            : loadPages(kiosk, day));
        // A later load (another day, a refresh) has replaced this one.
        if (mine !== generation || !body.isConnected) return;
        if (E.isLeft(loaded)) {
          setState(loaded.left === 'network' ? 'offline' : 'failed', kiosk.t(FAILURES[loaded.left]));
          return;
        }
        setState('ready', '');
        replaceChildren(body, loaded.right.view);
        table = loaded.right.table;
        downloadButton.disabled = false;
      };

      const onOnline = () => {
        if (!body.isConnected) window.removeEventListener('online', onOnline);
        else if (status.dataset.state === 'offline') void load();
      };
      window.addEventListener('online', onOnline);

      // dd/mm/aaaa whatever the tablet's locale, as the office takes dates (0043).
      const dayInput = dateInput(day, { class: 'day-input' });
      dayInput.input.addEventListener('input', () => {
        const typed = dayInput.iso();
        if (typed === null || typed === undefined || typed === day) return;
        day = typed;
        void load();
      });

      const tabButton = (which: AdminTab, label: MessageKey) =>
        h(
          'button',
          {
            className: which === tab ? 'tab is-current' : 'tab',
            attrs: which === tab ? { type: 'button', 'aria-current': 'page' } : { type: 'button' },
            onClick: () => {
              if (which !== tab) kiosk.show(adminScreen(which, day));
            },
          },
          kiosk.t(label),
        );

      queueMicrotask(() => void load());
      return h(
        'section',
        { className: 'admin' },
        h('h1', {}, kiosk.t('admin.title')),
        h(
          'nav',
          { className: 'tabs', attrs: { 'aria-label': kiosk.t('admin.title') } },
          tabButton('conflicts', 'admin.conflicts'),
          tabButton('attendance', 'admin.attendance'),
          tabButton('pages', 'admin.pages'),
        ),
        h(
          'div',
          { className: 'admin-controls' },
          dateField(kiosk.t('admin.day'), dayInput, 'day-field'),
          h(
            'button',
            { className: 'quiet', attrs: { type: 'button' }, onClick: () => void load() },
            kiosk.t('admin.refresh'),
          ),
          downloadButton,
        ),
        status,
        body,
        selfServiceControl(kiosk),
      );
    },
    // Roster pulls change nothing here; the reports are read again only when asked.
    update: () => undefined,
  };
};
