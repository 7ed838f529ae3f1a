/**
 * The labels after a check-in: one tag per child (name, class, allergy alert, care notes, the daily
 * code) and one guardian's stub listing every child checked in together, each with their code (a
 * mother with three children keeps one stub). Print styles show only these. While the server answers,
 * the stub also carries the family pass's QR code (0049), so a first visit hands the pass out; the
 * tablet holds no pass, so a stub printed offline has none.
 */
import { h } from '../../../client/dom.js';
import { isLabelLayout, LABEL_LAYOUTS } from '../../../domain/labelLayouts.js';
import type { RosterStudent } from '../../../domain/roster.js';
import { qrElement, stubPassText } from '../familyPass.js';
import { formatTime } from '../i18n.js';
import type { Kiosk, Screen } from '../kiosk.js';
import type { RosterSessionDoc } from '../rosterIndex.js';
import { loadLabelLayout, saveLabelLayout } from '../storage.js';
import { deskScreen } from './desk.js';
import { sessionLabel } from './sessions.js';

export interface LabelledChild {
  readonly session: RosterSessionDoc;
  readonly student: RosterStudent;
  readonly code: string;
}

export interface LabelInput {
  readonly children: ReadonlyArray<LabelledChild>;
  readonly checkedInAt: string;
  /** Where "done" returns to. */
  readonly desk: RosterSessionDoc;
  /** Where "done" goes instead (a family's screen opened outside a desk: self-service's start). */
  readonly done?: () => Screen;
}

const childLabel = (kiosk: Kiosk, { session, student, code }: LabelledChild, checkedInAt: string) =>
  h(
    'article',
    { className: 'label', attrs: { 'data-test': 'label' } },
    h(
      'p',
      { className: 'label-when' },
      `${sessionLabel(kiosk, session)} · ${formatTime(kiosk.lang(), checkedInAt)}`,
    ),
    h('p', { className: 'label-name' }, student.displayName),
    h('p', { className: 'label-class' }, kiosk.index().classes.get(student.classId) ?? ''),
    student.allergies === null
      ? null
      : h('p', { className: 'label-allergy' }, kiosk.t('label.allergy', { text: student.allergies })),
    student.specialNeeds === null
      ? null
      : h('p', { className: 'label-care' }, kiosk.t('label.care', { text: student.specialNeeds })),
    h(
      'p',
      { className: 'label-code' },
      h('span', { className: 'label-code-caption' }, kiosk.t('label.code')),
      h('span', { className: 'code', attrs: { 'data-test': 'label-code' } }, code),
    ),
  );

/** The child whose family the stub's pass is asked for: the first the roster knows a family of. */
const passChild = (children: ReadonlyArray<LabelledChild>): string | undefined =>
  (children.find((c) => (c.student.families ?? []).length > 0) ?? children[0])?.student.studentId;

const stub = (kiosk: Kiosk, children: ReadonlyArray<LabelledChild>, checkedInAt: string) => {
  const pass = h('div', { className: 'stub-pass' });
  const hint = h('p', { className: 'label-hint stub-pass-hint' });
  const studentId = passChild(children);
  if (studentId !== undefined)
    void stubPassText(kiosk.session.fetch, studentId).then((content) => {
      if (content === undefined) return;
      pass.append(qrElement(content, kiosk.t('label.passAlt'), 'stub-qr'));
      pass.dataset.test = 'stub-pass';
      hint.textContent = kiosk.t('label.passHint');
    });
  return h(
    'article',
    { className: 'label stub', attrs: { 'data-test': 'stub' } },
    h(
      'p',
      { className: 'label-when' },
      `${kiosk.t('label.stub')} · ${formatTime(kiosk.lang(), checkedInAt)}`,
    ),
    h(
      'div',
      { className: 'stub-body' },
      h(
        'div',
        { className: 'stub-children' },
        ...children.map(({ student, code }) =>
          h(
            'p',
            { className: 'stub-child', attrs: { 'data-test': 'stub-child' } },
            h('span', { className: 'label-name' }, student.displayName),
            ' ',
            h('span', { className: 'code' }, code),
          ),
        ),
      ),
      pass,
    ),
    h('p', { className: 'label-hint' }, kiosk.t('label.stubHint')),
    hint,
  );
};

/** The tablet's label printer: its layout is the body's `data-label-layout`, which the print styles read. */
const printerChoice = (kiosk: Kiosk): HTMLElement => {
  const current = loadLabelLayout();
  document.body.dataset.labelLayout = current;
  const select = h(
    'select',
    {
      attrs: { name: 'labelLayout' },
      onInput: () => {
        if (!isLabelLayout(select.value)) return;
        saveLabelLayout(select.value);
        document.body.dataset.labelLayout = select.value;
      },
    },
    ...LABEL_LAYOUTS.map((layout) => h('option', { attrs: { value: layout } }, kiosk.t(`printer.${layout}`))),
  );
  select.value = current;
  return h(
    'label',
    { className: 'field printer no-print' },
    h('span', { className: 'field-label' }, kiosk.t('printer.label')),
    select,
  );
};

export const labelScreen = ({ children, checkedInAt, desk, done }: LabelInput): Screen => ({
  name: 'label',
  // The labels show what was recorded: a roster pull arriving meanwhile must not rebuild them under
  // the volunteer's hands (or under the print dialog).
  update: () => undefined,
  render(kiosk: Kiosk) {
    return h(
      'section',
      { className: 'label-screen' },
      printerChoice(kiosk),
      h(
        'div',
        { className: 'print-area' },
        ...children.map((c) => childLabel(kiosk, c, checkedInAt)),
        stub(kiosk, children, checkedInAt),
      ),
      h(
        'div',
        { className: 'actions no-print' },
        h(
          'button',
          { className: 'secondary big', attrs: { type: 'button' }, onClick: () => window.print() },
          kiosk.t('label.print'),
        ),
        h(
          'button',
          {
            className: 'primary big',
            attrs: { type: 'button' },
            onClick: () => kiosk.show(done?.() ?? deskScreen(desk)),
          },
          kiosk.t('label.done'),
        ),
      ),
    );
  },
});
