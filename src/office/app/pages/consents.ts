/**
 * A child's image consents (decision 0034): the one active now, the whole history, recording a new
 * one with the term text exactly as shown to the guardian (the server freezes it), and revoking with
 * a reason (ADMIN; the server erases the photo with the last active consent).
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { field, h, replaceChildren } from '../../../client/dom.js';
import { apiCall, currentAuth, errorMessage } from '../api.js';
import type { Key } from '../i18n.js';
import type { Shell } from '../shell.js';
import { when } from './adminKit.js';
import { labelled } from './children.js';

const METHODS = [
  'VERIFIED_GUARDIAN_PRESENT',
  'IN_PERSON_DOCUMENT',
  'RECEPTION_GUARDIAN_PHOTO',
  'PHONE_OTP',
  'ADULT_SELF',
] as const;

const methodKey = (m: string): Key | undefined => {
  const found = METHODS.find((x) => x === m);
  return found === undefined ? undefined : `consent.method.${found}`;
};

const ConsentC = t.type({
  consentId: t.string,
  term_version: t.string,
  purpose: t.string,
  granted_by_name: t.string,
  relationship: t.string,
  verification_method: t.string,
  granted_at: t.string,
  revoked_at: t.union([t.string, t.null]),
  revocation_reason: t.union([t.string, t.null]),
});
type ConsentC = t.TypeOf<typeof ConsentC>;
const History = t.type({ current: t.union([ConsentC, t.null]), history: t.array(ConsentC) });

/** What the photo section needs to know after every change here. */
export interface ConsentState {
  readonly active: boolean;
}

/**
 * Renders the consent section into `into` and keeps it current; `changed` is told the state after
 * each load (the photo section shows or hides its upload by it).
 */
export const consentSection = (
  shell: Shell,
  studentId: string,
  guardianName: string,
  changed: (state: ConsentState) => void,
): HTMLElement => {
  const { t: tr } = shell;
  const section = h('section', { attrs: { 'aria-labelledby': 'consent-heading', 'data-test': 'consents' } });
  const say = (a: { status: number; json: unknown }) =>
    shell.say(
      a.status === 0 ? tr('error.network') : tr('error.generic', { message: errorMessage(a) }),
      'error',
    );

  const revokeForm = (c: ConsentC): HTMLElement => {
    const reason = h('input', { attrs: { type: 'text', required: '', minlength: '3', maxlength: '500' } });
    return h(
      'form',
      {
        className: 'inline-form',
        onSubmit: (e) => {
          e.preventDefault();
          void (async () => {
            const a = await apiCall('POST', `/api/v1/image-consents/${c.consentId}/revoke`, {
              revocation_reason: reason.value.trim(),
            });
            if (a.status !== 200) return say(a);
            shell.say(tr('consent.revoked'));
            await load();
          })();
        },
      },
      field(tr('consent.revokeReason'), reason),
      h('button', { attrs: { type: 'submit' } }, tr('consent.revoke')),
    );
  };

  const recordForm = (): HTMLElement => {
    const version = h('input', { attrs: { type: 'text', required: '', maxlength: '40', value: '2026-01' } });
    const purpose = h('input', { attrs: { type: 'text', required: '', maxlength: '200' } });
    purpose.value = tr('consent.defaultPurpose');
    const text = h('textarea', { attrs: { required: '', maxlength: '20000', rows: '5' } });
    text.value = tr('consent.defaultTerm');
    const by = h('input', { attrs: { type: 'text', required: '', maxlength: '120' } });
    by.value = guardianName;
    const relationship = h('input', { attrs: { type: 'text', required: '', maxlength: '60' } });
    const method = h(
      'select',
      {},
      ...METHODS.map((m) => h('option', { attrs: { value: m } }, tr(`consent.method.${m}`))),
    );
    return h(
      'form',
      {
        attrs: { 'data-test': 'consent-form' },
        onSubmit: (e) => {
          e.preventDefault();
          void (async () => {
            const a = await apiCall('POST', '/api/v1/image-consents', {
              subject_type: 'STUDENT',
              subject_id: studentId,
              term_version: version.value.trim(),
              purpose: purpose.value.trim(),
              term_text: text.value,
              granted_by_name: by.value.trim(),
              relationship: relationship.value.trim(),
              verification_method: method.value,
            });
            if (a.status !== 201) return say(a);
            shell.say(tr('consent.recorded'));
            await load();
          })();
        },
      },
      h('h3', {}, tr('consent.record')),
      field(tr('consent.termVersion'), version),
      field(tr('consent.purpose'), purpose),
      field(tr('consent.termText'), text),
      field(tr('consent.grantedBy'), by),
      field(tr('consent.relationship'), relationship),
      labelled(tr('consent.method'), method),
      h('button', { attrs: { type: 'submit' } }, tr('consent.record')),
    );
  };

  const historyTable = (items: ReadonlyArray<ConsentC>): HTMLElement =>
    items.length === 0
      ? h('p', {}, tr('consent.historyNone'))
      : h(
          'table',
          { attrs: { 'data-test': 'consent-history' } },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...(
                [
                  'consent.col.granted',
                  'consent.col.by',
                  'consent.col.version',
                  'consent.col.method',
                  'consent.col.revoked',
                  'consent.col.reason',
                ] as const
              ).map((k) => h('th', { attrs: { scope: 'col' } }, tr(k))),
            ),
          ),
          h(
            'tbody',
            {},
            ...items.map((c) => {
              const method = methodKey(c.verification_method);
              return h(
                'tr',
                { className: c.revoked_at === null ? 'active' : 'revoked' },
                h('td', {}, when(c.granted_at)),
                h('td', {}, `${c.granted_by_name} (${c.relationship})`),
                h('td', {}, c.term_version),
                h('td', {}, method === undefined ? c.verification_method : tr(method)),
                h('td', {}, c.revoked_at === null ? '—' : when(c.revoked_at)),
                h('td', {}, c.revocation_reason ?? '—'),
              );
            }),
          ),
        );

  const load = async (): Promise<void> => {
    const a = await apiCall('GET', `/api/v1/image-consents?subjectType=STUDENT&subjectId=${studentId}`);
    const decoded = History.decode(a.json);
    if (a.status !== 200 || E.isLeft(decoded)) return say(a);
    const { current, history } = decoded.right;
    replaceChildren(
      section,
      h('h2', { attrs: { id: 'consent-heading' } }, tr('consent.section')),
      h(
        'p',
        { attrs: { 'data-test': 'consent-current' } },
        current === null
          ? tr('consent.noneActive')
          : tr('consent.current', {
              date: when(current.granted_at),
              name: current.granted_by_name,
              relationship: current.relationship,
            }),
      ),
      current === null
        ? recordForm()
        : // Only ADMIN revokes (the server refuses anyone else): no form that can only fail.
          (currentAuth()?.user.roles.includes('ADMIN') ?? false)
          ? revokeForm(current)
          : null,
      h('h3', {}, tr('consent.history')),
      historyTable(history),
    );
    changed({ active: current !== null });
  };
  void load();
  return section;
};
