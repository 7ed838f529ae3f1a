/** Register or edit a child: every field the office keeps, with the server's validation shown by field. */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { field, h, replaceChildren } from '../../../kiosk/app/dom.js';
import { apiCall, errorMessage } from '../api.js';
import { dateField, dateInput } from '../dateInput.js';
import type { Shell } from '../shell.js';
import { adminTranslator } from './adminText.js';
import { labelled } from './children.js';

const Classes = t.type({
  items: t.array(
    t.intersection([t.type({ classId: t.string, name: t.string }), t.partial({ status: t.string })]),
  ),
});
const optionalText = t.union([t.string, t.null, t.undefined]);
const StudentAnswer = t.type({
  studentId: t.string,
  displayName: t.string,
  classId: t.string,
  guardianName: optionalText,
  guardianNameAlt: optionalText,
  birthDate: optionalText,
  allergies: optionalText,
  specialNeeds: optionalText,
  phones: t.union([t.array(t.type({ number: t.string, qualifier: t.string })), t.undefined]),
  nucleusId: optionalText,
  familyMembershipStatus: optionalText,
  address: t.union([t.record(t.string, t.string), t.null, t.undefined]),
});
const Nuclei = t.type({
  items: t.array(
    t.intersection([t.type({ nucleusId: t.string, name: t.string }), t.partial({ status: t.string })]),
  ),
});
/** The spec's seven address fields, in the order a Brazilian address is written. */
const ADDRESS = ['street', 'number', 'complement', 'neighborhood', 'city', 'state', 'postalCode'] as const;
const Issues = t.type({
  error: t.type({ details: t.type({ issues: t.array(t.type({ path: t.string, message: t.string })) }) }),
});

export const childFormPage = (shell: Shell, studentId: string | undefined): void => {
  const { t: tr } = shell;
  const at = adminTranslator();
  const input = (type = 'text', required = false) =>
    h('input', { attrs: { type, ...(required ? { required: '' } : {}) } });
  const f = {
    displayName: input('text', true),
    guardianName: input('text', true),
    guardianNameAlt: input(),
    phone: input('tel'),
    phone2: input('tel'),
    allergies: h('textarea'),
    specialNeeds: h('textarea'),
  };
  const birthDate = dateInput();
  const classSelect = h('select', { attrs: { required: '' } });
  const nucleusSelect = h('select', {}, h('option', { attrs: { value: '' } }, '—'));
  const membership = input();
  const address: Record<(typeof ADDRESS)[number], HTMLInputElement> = {
    street: input(),
    number: input(),
    complement: input(),
    neighborhood: input(),
    city: input(),
    state: input(),
    postalCode: input(),
  };
  const addressBody = () => {
    const filled = ADDRESS.filter((k) => address[k].value.trim() !== '');
    return filled.length === 0 ? null : Object.fromEntries(filled.map((k) => [k, address[k].value.trim()]));
  };
  // The family's own words for each phone ("mãe", "avó"), kept through an edit: the form shows numbers only.
  const qualifiers: string[] = [];
  const orNull = (el: HTMLInputElement | HTMLTextAreaElement) =>
    el.value.trim() === '' ? null : el.value.trim();
  const form = h(
    'form',
    {
      onSubmit: (e) => {
        e.preventDefault();
        void (async () => {
          const phones = [f.phone, f.phone2]
            .map((el, i) => ({
              number: el.value.trim(),
              qualifier: qualifiers[i] ?? (i === 0 ? 'principal' : 'outro'),
            }))
            .filter((p) => p.number !== '');
          const body = {
            displayName: f.displayName.value.trim(),
            guardianName: f.guardianName.value.trim(),
            guardianNameAlt: orNull(f.guardianNameAlt),
            birthDate: birthDate.iso() ?? null,
            phones,
            classId: classSelect.value,
            allergies: orNull(f.allergies),
            specialNeeds: orNull(f.specialNeeds),
            nucleusId: nucleusSelect.value === '' ? null : nucleusSelect.value,
            familyMembershipStatus: orNull(membership),
            address: addressBody(),
          };
          const a =
            studentId === undefined
              ? await apiCall('POST', '/api/v1/students', body)
              : await apiCall('PATCH', `/api/v1/students/${studentId}`, body);
          if (a.status === 200 || a.status === 201) {
            shell.say(tr('child.saved'));
            // Back to the child's page, where what was saved can be seen with the rest of the record.
            const saved = t.type({ studentId: t.string }).decode(a.json);
            return shell.go(E.isRight(saved) ? `#/child/${saved.right.studentId}` : '#/children');
          }
          const issues = Issues.decode(a.json);
          shell.say(
            a.status === 0
              ? tr('error.network')
              : E.isRight(issues)
                ? issues.right.error.details.issues.map((i) => `${i.path}: ${i.message}`).join('; ')
                : tr('error.generic', { message: errorMessage(a) }),
            'error',
          );
        })();
      },
    },
    field(tr('child.displayName'), f.displayName),
    field(tr('child.guardianName'), f.guardianName),
    field(tr('child.guardianNameAlt'), f.guardianNameAlt),
    dateField(tr('child.birthDate'), birthDate),
    field(tr('child.phone'), f.phone),
    field(tr('child.phone2'), f.phone2),
    labelled(tr('child.class'), classSelect),
    field(tr('child.allergies'), f.allergies),
    field(tr('child.specialNeeds'), f.specialNeeds),
    labelled(at('field.nucleus'), nucleusSelect),
    field(at('field.membership'), membership),
    h(
      'fieldset',
      { className: 'address' },
      h('legend', {}, at('field.address')),
      ...ADDRESS.map((k) => field(at(`address.${k}`), address[k])),
    ),
    h('button', { attrs: { type: 'submit' } }, tr('child.save')),
  );
  replaceChildren(
    shell.main,
    h('p', {}, h('a', { attrs: { href: '#/children' } }, tr('child.back'))),
    h('h1', {}, studentId === undefined ? tr('child.newTitle') : tr('child.editTitle')),
    form,
  );
  // Nothing can be typed until the record is in: the values read would overwrite what was typed, and a
  // form left empty by a failed read must not be sent as the child's record.
  form.inert = true;
  form.setAttribute('aria-busy', 'true');
  const ready = () => {
    form.inert = false;
    form.removeAttribute('aria-busy');
    f.displayName.focus();
  };
  void (async () => {
    const classes = Classes.decode((await apiCall('GET', '/api/v1/classes?includeInactive=true')).json);
    const nuclei = Nuclei.decode((await apiCall('GET', '/api/v1/nuclei?includeInactive=true')).json);
    const read =
      studentId === undefined
        ? undefined
        : StudentAnswer.decode((await apiCall('GET', `/api/v1/students/${studentId}`)).json);
    if (read !== undefined && E.isLeft(read)) return shell.say(tr('error.network'), 'error');
    const s = read?.right;
    // Deactivated classes and nuclei (0047) are offered only as the one the child is in, marked, so an
    // edit keeps it and a new child is never put there.
    const offered = <A extends { readonly status?: string }>(
      items: ReadonlyArray<A>,
      current: (a: A) => boolean,
    ) => items.filter((x) => x.status !== 'DEACTIVATED' || current(x));
    const named = (x: { readonly name: string; readonly status?: string }) =>
      x.status === 'DEACTIVATED' ? `${x.name} (${at('classes.inactive')})` : x.name;
    if (E.isRight(classes))
      replaceChildren(
        classSelect,
        ...offered(classes.right.items, (c) => c.classId === s?.classId).map((c) =>
          h('option', { attrs: { value: c.classId } }, named(c)),
        ),
      );
    if (E.isRight(nuclei))
      for (const n of offered(nuclei.right.items, (x) => x.nucleusId === s?.nucleusId))
        nucleusSelect.append(h('option', { attrs: { value: n.nucleusId } }, named(n)));
    if (s === undefined) return ready();
    f.displayName.value = s.displayName;
    f.guardianName.value = s.guardianName ?? '';
    f.guardianNameAlt.value = s.guardianNameAlt ?? '';
    birthDate.set(s.birthDate ?? null);
    f.phone.value = s.phones?.[0]?.number ?? '';
    f.phone2.value = s.phones?.[1]?.number ?? '';
    f.allergies.value = s.allergies ?? '';
    f.specialNeeds.value = s.specialNeeds ?? '';
    classSelect.value = s.classId;
    nucleusSelect.value = s.nucleusId ?? '';
    qualifiers.push(...(s.phones ?? []).map((p) => p.qualifier));
    membership.value = s.familyMembershipStatus ?? '';
    for (const k of ADDRESS) address[k].value = s.address?.[k] ?? '';
    ready();
  })();
};
