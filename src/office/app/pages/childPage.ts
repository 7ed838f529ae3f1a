/**
 * A child's page (`#/child/<id>`): the record, its attendance history, image consents, who may collect
 * it, the audit trail naming it, the LGPD export and the soft delete with its justification. Each part
 * is loaded on its own, so one the account may not read (a 403) leaves the others in place.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { field, h, replaceChildren } from '../../../kiosk/app/dom.js';
import { apiCall } from '../api.js';
import type { Shell } from '../shell.js';
import { day, download, row, sayFailure, section, table, when } from './adminKit.js';
import { type AdminT, adminTranslator } from './adminText.js';
import { familyPassSection } from './familyPass.js';
import { pickupSection } from './pickup.js';

const text = t.union([t.string, t.null, t.undefined]);
const Student = t.type({
  studentId: t.string,
  displayName: t.string,
  classId: t.string,
  status: t.string,
  guardianName: text,
  guardianNameAlt: text,
  birthDate: text,
  allergies: text,
  specialNeeds: text,
  nucleusId: text,
  familyMembershipStatus: text,
  deleted_justification: text,
  visitor: t.union([t.boolean, t.undefined]),
  phones: t.union([t.array(t.type({ number: t.string, qualifier: t.string })), t.undefined]),
  address: t.union([t.record(t.string, t.string), t.null, t.undefined]),
});
const Named = t.type({ items: t.array(t.record(t.string, t.unknown)) });
const History = t.type({
  rows: t.array(
    t.type({
      date: t.string,
      classId: t.union([t.string, t.null]),
      mark: t.union([t.string, t.null]),
      checkedInAt: t.union([t.string, t.null]),
      checkedOutAt: t.union([t.string, t.null]),
      present: t.boolean,
    }),
  ),
});
const Consent = t.type({
  consentId: t.string,
  purpose: t.string,
  granted_by_name: t.string,
  relationship: t.string,
  verification_method: t.string,
  granted_at: t.string,
  revoked_at: t.union([t.string, t.null]),
  revocation_reason: t.union([t.string, t.null]),
});
const Consents = t.type({ history: t.array(Consent) });
const Audit = t.type({
  items: t.array(
    t.type({
      created_at: t.string,
      actor_user_id: t.union([t.string, t.null]),
      actor_role: t.union([t.string, t.null]),
      endpoint: t.string,
      outcome: t.string,
      action: t.union([t.string, t.null, t.undefined]),
    }),
  ),
  nextCursor: t.union([t.string, t.null]),
});

const UserNames = t.type({ items: t.array(t.type({ userId: t.string, displayName: t.string })) });

/** `{ id → name }` from a list answer whose items carry `<key>` and `name`. */
const namesOf = (json: unknown, key: string): Map<string, string> => {
  const d = Named.decode(json);
  const names = new Map<string, string>();
  if (E.isRight(d))
    for (const item of d.right.items) {
      const id = item[key];
      const name = item.name;
      if (typeof id === 'string' && typeof name === 'string') names.set(id, name);
    }
  return names;
};

const DAY_MS = 86_400_000;

export const childPage = (shell: Shell, studentId: string): void => {
  const at = adminTranslator();
  const heading = h('h1', {}, at('child.title'));
  const details = h('dl', { className: 'details' });
  const notice = h('p', { attrs: { 'data-test': 'child-status' } });
  const history = h('div', { attrs: { 'data-test': 'child-history' } });
  const consents = h('div', { attrs: { 'data-test': 'child-consents' } });
  const pickup = h('div', { attrs: { 'data-test': 'child-pickup' } });
  const pass = h('div', { attrs: { 'data-test': 'child-family-pass' } });
  const audit = h('div', { attrs: { 'data-test': 'child-audit' } });
  const removal = h('div');
  const exportButton = h(
    'button',
    {
      attrs: { type: 'button' },
      onClick: () => {
        void (async () => {
          const a = await apiCall('GET', `/api/v1/students/${studentId}/export`);
          if (a.status !== 200) return sayFailure(shell, at, a);
          download(`chamada-${studentId}.json`, JSON.stringify(a.json, null, 2), 'application/json');
          shell.say(at('child.exported'));
        })();
      },
    },
    at('child.export'),
  );
  replaceChildren(
    shell.main,
    h('p', {}, h('a', { attrs: { href: '#/children' } }, shell.t('child.back'))),
    heading,
    notice,
    h(
      'p',
      { className: 'actions' },
      h('a', { className: 'button', attrs: { href: `#/children/${studentId}` } }, at('child.edit')),
      exportButton,
    ),
    section(at('child.details'), details),
    section(at('child.history'), history),
    section(at('child.consents'), consents),
    section(at('pickup.title'), pickup),
    section(at('child.pass'), pass),
    section(at('child.audit'), audit),
    removal,
  );

  void (async () => {
    const read = await apiCall('GET', `/api/v1/students/${studentId}`);
    const student = Student.decode(read.json);
    if (read.status !== 200 || E.isLeft(student)) return sayFailure(shell, at, read);
    const s = student.right;
    // The child's class and nucleus are named even once deactivated (0047).
    const classes = namesOf((await apiCall('GET', '/api/v1/classes?includeInactive=true')).json, 'classId');
    const nuclei = namesOf((await apiCall('GET', '/api/v1/nuclei?includeInactive=true')).json, 'nucleusId');
    heading.textContent = s.displayName;
    document.title = `${s.displayName} — ${shell.t('appName')}`;
    notice.textContent =
      s.status === 'DELETED'
        ? at('child.deletedBecause', { reason: s.deleted_justification ?? '' })
        : s.visitor === true
          ? at('child.visitor')
          : '';
    const item = (label: string, value: string | null | undefined) =>
      value === null || value === undefined || value === '' ? [] : [h('dt', {}, label), h('dd', {}, value)];
    const address =
      s.address === null || s.address === undefined
        ? null
        : ['street', 'number', 'complement', 'neighborhood', 'city', 'state', 'postalCode']
            .map((k) => s.address?.[k])
            .filter((v) => v !== undefined && v !== '')
            .join(', ');
    replaceChildren(
      details,
      ...item(at('field.guardians'), [s.guardianName, s.guardianNameAlt].filter(Boolean).join(' · ')),
      ...item(at('field.phones'), (s.phones ?? []).map((p) => `${p.number} (${p.qualifier})`).join(' · ')),
      ...item(
        at('field.birthDate'),
        s.birthDate === null || s.birthDate === undefined ? null : day(s.birthDate),
      ),
      ...item(at('field.class'), classes.get(s.classId) ?? s.classId),
      ...item(
        at('field.nucleus'),
        s.nucleusId === null || s.nucleusId === undefined ? null : (nuclei.get(s.nucleusId) ?? s.nucleusId),
      ),
      ...item(at('field.address'), address),
      ...item(at('field.allergies'), s.allergies),
      ...item(at('field.specialNeeds'), s.specialNeeds),
      ...item(at('field.membership'), s.familyMembershipStatus),
    );
    if (s.status === 'ACTIVE') replaceChildren(removal, deleteForm(shell, at, studentId));
    await Promise.all([
      loadHistory(shell, at, history, studentId, classes),
      loadConsents(at, consents, studentId),
      pickupSection(shell, at, pickup, studentId),
      s.status === 'ACTIVE' ? familyPassSection(shell, at, pass, studentId) : undefined,
      loadAudit(at, audit, studentId),
    ]);
  })();
};

const forbidden = (at: AdminT, into: HTMLElement, status: number): boolean => {
  if (status !== 403) return false;
  replaceChildren(into, h('p', {}, at('common.forbidden')));
  return true;
};

const loadHistory = async (
  shell: Shell,
  at: AdminT,
  into: HTMLElement,
  studentId: string,
  classes: ReadonlyMap<string, string>,
): Promise<void> => {
  const today = new Date();
  const to = today.toISOString().slice(0, 10);
  // 366 days inclusive: the report's widest range.
  const from = new Date(today.getTime() - 365 * DAY_MS).toISOString().slice(0, 10);
  const a = await apiCall('GET', `/api/v1/reports/attendance?from=${from}&to=${to}&studentId=${studentId}`);
  if (forbidden(at, into, a.status)) return;
  const d = History.decode(a.json);
  if (a.status !== 200 || E.isLeft(d)) return sayFailure(shell, at, a);
  const rows = [...d.right.rows].reverse();
  replaceChildren(
    into,
    table(
      [at('col.date'), at('field.class'), at('col.mark'), at('col.in'), at('col.out')],
      rows.map((r) =>
        row(
          day(r.date),
          r.classId === null ? '' : (classes.get(r.classId) ?? r.classId),
          r.present ? at('present') : at('absent'),
          when(r.checkedInAt),
          when(r.checkedOutAt),
        ),
      ),
      at('child.historyNone'),
    ),
  );
};

const loadConsents = async (at: AdminT, into: HTMLElement, studentId: string): Promise<void> => {
  const a = await apiCall('GET', `/api/v1/image-consents?subjectType=STUDENT&subjectId=${studentId}`);
  if (forbidden(at, into, a.status)) return;
  const d = Consents.decode(a.json);
  const items = E.isRight(d) ? d.right.history : [];
  replaceChildren(
    into,
    table(
      [at('col.when'), at('col.who'), at('col.what'), at('col.status')],
      items.map((c) =>
        row(
          when(c.granted_at),
          `${c.granted_by_name} (${c.relationship})`,
          `${c.purpose} · ${c.verification_method}`,
          c.revoked_at === null
            ? at('child.consentActive')
            : at('child.consentRevoked', { date: when(c.revoked_at), reason: c.revocation_reason ?? '' }),
        ),
      ),
      at('child.consentsNone'),
    ),
  );
};

const loadAudit = async (at: AdminT, into: HTMLElement, studentId: string): Promise<void> => {
  const body = h('div');
  const more = h('p');
  // Names for the actors' ids: the audit log and the user list are both ADMIN's, so one read serves.
  const users = new Map<string, string>();
  const listed = UserNames.decode((await apiCall('GET', '/api/v1/users')).json);
  if (E.isRight(listed)) for (const u of listed.right.items) users.set(u.userId, u.displayName);
  const page = async (cursor?: string) => {
    const q = new URLSearchParams({ subjectId: studentId, limit: '50' });
    if (cursor !== undefined) q.set('cursor', cursor);
    const a = await apiCall('GET', `/api/v1/audit-logs?${q}`);
    if (forbidden(at, into, a.status)) return;
    const d = Audit.decode(a.json);
    if (E.isLeft(d)) return;
    const next = d.right.nextCursor;
    body.append(
      table(
        [at('col.when'), at('col.who'), at('col.what'), at('col.outcome')],
        d.right.items.map((e) =>
          row(
            when(e.created_at),
            [e.actor_user_id === null ? null : (users.get(e.actor_user_id) ?? e.actor_user_id), e.actor_role]
              .filter(Boolean)
              .join(' · '),
            [e.action, e.endpoint].filter(Boolean).join(' · '),
            e.outcome,
          ),
        ),
        at('child.auditNone'),
      ),
    );
    replaceChildren(
      more,
      next === null
        ? null
        : h('button', { attrs: { type: 'button' }, onClick: () => void page(next) }, at('child.auditMore')),
    );
  };
  replaceChildren(into, body, more);
  await page();
};

const deleteForm = (shell: Shell, at: AdminT, studentId: string): HTMLFormElement => {
  const reason = h('textarea', { attrs: { required: '', minlength: '10', maxlength: '500' } });
  const confirm = h('button', { className: 'danger', attrs: { type: 'submit' } }, at('child.deleteConfirm'));
  return h(
    'form',
    {
      attrs: { 'data-test': 'child-delete' },
      onSubmit: (e) => {
        e.preventDefault();
        confirm.disabled = true;
        void (async () => {
          const a = await apiCall('POST', `/api/v1/students/${studentId}/delete`, {
            justification: reason.value.trim(),
          });
          confirm.disabled = false;
          if (a.status !== 200) return sayFailure(shell, at, a);
          shell.say(at('child.deleted'));
          childPage(shell, studentId);
        })();
      },
    },
    h('h2', {}, at('child.delete')),
    h('p', {}, at('child.deleteHelp')),
    field(at('child.justification'), reason),
    confirm,
  );
};
