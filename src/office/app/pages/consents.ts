/**
 * A child's image consents (decision 0034): the one active now, the whole history, recording a new
 * one with the term text exactly as shown to the guardian (the server freezes it), and revoking with
 * a reason (ADMIN; the server erases the photo with the last active consent).
 */
import { field, h, replaceChildren } from '../../../client/dom.js';
import type { Consent, VerificationMethod } from '../../../domain/consent.js';
import { onAnswer } from '../calls.js';
import { api, transport } from '../client.js';
import type { Key } from '../i18n.js';
import type { Shell } from '../shell.js';
import { when } from './adminKit.js';
import { labelled } from './children.js';

/** The methods in the order the form offers them, the likeliest first. */
const METHODS: ReadonlyArray<VerificationMethod> = [
  'VERIFIED_GUARDIAN_PRESENT',
  'IN_PERSON_DOCUMENT',
  'RECEPTION_GUARDIAN_PHOTO',
  'PHONE_OTP',
  'ADULT_SELF',
];

const methodKey = (m: VerificationMethod): Key => `consent.method.${m}`;

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
  const revokeForm = (c: Consent): HTMLElement => {
    const reason = h('input', { attrs: { type: 'text', required: '', minlength: '3', maxlength: '500' } });
    return h(
      'form',
      {
        className: 'inline-form',
        onSubmit: (e) => {
          e.preventDefault();
          void onAnswer(
            shell,
            api.revokeConsent({
              params: { consentId: c.consentId },
              body: { revocation_reason: reason.value.trim() },
            }),
            async () => {
              shell.say(tr('consent.revoked'));
              await load();
            },
          );
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
          const verification = METHODS.find((m) => m === method.value) ?? 'VERIFIED_GUARDIAN_PRESENT';
          void onAnswer(
            shell,
            api.createConsent({
              body: {
                subject_type: 'STUDENT',
                subject_id: studentId,
                term_version: version.value.trim(),
                purpose: purpose.value.trim(),
                term_text: text.value,
                granted_by_name: by.value.trim(),
                relationship: relationship.value.trim(),
                verification_method: verification,
              },
            }),
            async () => {
              shell.say(tr('consent.recorded'));
              await load();
            },
          );
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

  const historyTable = (items: ReadonlyArray<Consent>): HTMLElement =>
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
            ...items.map((c) =>
              h(
                'tr',
                { className: c.revoked_at === null ? 'active' : 'revoked' },
                h('td', {}, when(c.granted_at)),
                h('td', {}, `${c.granted_by_name} (${c.relationship})`),
                h('td', {}, c.term_version),
                h('td', {}, tr(methodKey(c.verification_method))),
                h('td', {}, c.revoked_at === null ? '—' : when(c.revoked_at)),
                h('td', {}, c.revocation_reason ?? '—'),
              ),
            ),
          ),
        );

  const load = async (): Promise<void> => {
    await onAnswer(
      shell,
      api.listConsents({ query: { subjectType: 'STUDENT', subjectId: studentId } }),
      (found) => draw(found.current, found.history),
    );
  };
  const draw = (current: Consent | null, history: ReadonlyArray<Consent>) => {
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
          (transport.current()?.user.roles.includes('ADMIN') ?? false)
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
