/**
 * The labels after a check-in: one tag per child (name, class, allergy alert, care notes, the daily
 * code) and one guardian's stub listing every child checked in together, each with their code (a
 * mother with three children keeps one stub). Print styles show only these. While the server answers,
 * the stub also carries the family pass's QR code (0049), so a first visit hands the pass out; the
 * tablet holds no pass, so a stub printed offline has none.
 *
 * With a server printer chosen for this tablet, the labels go to it as a print job once the screen is
 * up (`labelPrint.ts`, 0051), and the printer's answer is shown with *Reimprimir* when it failed; the
 * browser's print stays on offer, and is what prints when the server is out of reach.
 */
import * as E from 'fp-ts/lib/Either.js';
import { h } from '../../../client/dom.js';
import { apiOf } from '../../../client/endpoints.js';
import { isLabelLayout, LABEL_LAYOUTS } from '../../../domain/labelLayouts.js';
import type { RosterStudent } from '../../../domain/roster.js';
import { qrElement, stubPassText } from '../familyPass.js';
import { formatTime } from '../i18n.js';
import type { Kiosk, Screen } from '../kiosk.js';
import { type PrintProgress, printThroughServer } from '../labelPrint.js';
import type { RosterSessionDoc } from '../rosterIndex.js';
import {
  type LabelPrinterChoice,
  loadLabelLayout,
  loadLabelPrinter,
  saveLabelLayout,
  saveLabelPrinter,
} from '../storage.js';
import { deskScreen } from './desk.js';
import { sessionLabel } from './sessions.js';

export interface LabelledChild {
  readonly session: RosterSessionDoc;
  readonly student: RosterStudent;
  readonly code: string;
  /** The check-in the label is for: a print job names it, and the server prints its code. */
  readonly checkInId: string;
}

export interface LabelInput {
  readonly children: ReadonlyArray<LabelledChild>;
  readonly checkedInAt: string;
  /** Where "done" returns to. */
  readonly desk: RosterSessionDoc;
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

/** What the screen says of a job on the server's printer `name`. */
const progressText = (kiosk: Kiosk, name: string, p: PrintProgress): string => {
  switch (p.kind) {
    case 'sending':
      return kiosk.t('print.sending', { printer: name });
    case 'printing':
      return p.retrying === undefined
        ? kiosk.t('print.printing', { printer: name })
        : kiosk.t('print.retrying', { printer: name, error: p.retrying });
    case 'done':
      return kiosk.t('print.done', { printer: name });
    case 'failed':
      return kiosk.t('print.failed', { printer: name, error: p.message });
    case 'browser':
      return kiosk.t('print.browser');
    case 'unknown':
      return kiosk.t('print.unknown', { printer: name });
  }
};

/**
 * The tablet's server printer (0051, item 4): chosen from the server's list, kept per tablet; "the
 * browser" prints through the dialog. The list is read each time the screen opens; offline, the choice
 * kept is all it shows.
 */
const serverPrinterChoice = (kiosk: Kiosk, onChosen: (c: LabelPrinterChoice | undefined) => void) => {
  const kept = loadLabelPrinter();
  const browserOption = h('option', { attrs: { value: '' } }, kiosk.t('print.viaBrowser'));
  const keptOption = kept === undefined ? null : h('option', { attrs: { value: kept.printerId } }, kept.name);
  const select = h(
    'select',
    {
      attrs: { name: 'labelPrinter', 'data-test': 'label-printer' },
      onInput: () => {
        const option = select.selectedOptions[0];
        const choice =
          select.value === '' || option === undefined
            ? undefined
            : { printerId: select.value, name: option.textContent ?? '' };
        saveLabelPrinter(choice);
        onChosen(choice);
      },
    },
    browserOption,
    keptOption,
  );
  select.value = kept?.printerId ?? '';
  void apiOf(kiosk.session)
    .listPrinters()
    .then((answer) => {
      if (E.isLeft(answer)) return;
      // A printer renamed in the office is kept under its new name.
      const current = answer.right.items.find((p) => p.printerId === kept?.printerId);
      if (current !== undefined && current.name !== kept?.name)
        saveLabelPrinter({ printerId: current.printerId, name: current.name });
      const options = answer.right.items.map((p) => h('option', { attrs: { value: p.printerId } }, p.name));
      // A printer removed in the office stays offered while chosen: its jobs fail, and say so.
      const keptGone = kept !== undefined && !answer.right.items.some((p) => p.printerId === kept.printerId);
      select.replaceChildren(
        browserOption,
        ...options,
        ...(keptGone && keptOption !== null ? [keptOption] : []),
      );
      select.value = kept?.printerId ?? '';
    });
  return h(
    'label',
    { className: 'field printer no-print' },
    h('span', { className: 'field-label' }, kiosk.t('print.choice')),
    select,
  );
};

export const labelScreen = ({ children, checkedInAt, desk }: LabelInput): Screen => ({
  name: 'label',
  // The labels show what was recorded: a roster pull arriving meanwhile must not rebuild them under
  // the volunteer's hands (or under the print dialog).
  update: () => undefined,
  render(kiosk: Kiosk) {
    const status = h('p', {
      className: 'print-status no-print',
      attrs: { role: 'status', 'data-test': 'print-status' },
    });
    const again = h(
      'button',
      { className: 'secondary big', attrs: { type: 'button', 'data-test': 'reprint' } },
      kiosk.t('print.again'),
    );
    again.hidden = true;
    const browserPrint = h(
      'button',
      { className: 'secondary big', attrs: { type: 'button' }, onClick: () => window.print() },
      kiosk.t('label.print'),
    );
    const section = h('section', { className: 'label-screen' });
    const checkInIds = children.map((c) => c.checkInId);
    /** Sends the labels to `printer` and shows its answer; a reprint is another job for the same check-ins. */
    const send = (printer: LabelPrinterChoice) => {
      again.hidden = true;
      again.textContent = kiosk.t('print.again');
      void printThroughServer({
        api: apiOf(kiosk.session),
        printerId: printer.printerId,
        checkInIds,
        online: () => kiosk.sync.status().online,
        kick: () => kiosk.sync.kick(),
        shown: () => section.isConnected,
        report: (p) => {
          status.textContent = progressText(kiosk, printer.name, p);
          status.dataset.state = p.kind;
          again.hidden = !(p.kind === 'failed' || p.kind === 'unknown');
          if (p.kind === 'browser') browserPrint.focus();
        },
      });
    };
    again.addEventListener('click', () => {
      const printer = loadLabelPrinter();
      if (printer !== undefined) send(printer);
    });
    const chosen = loadLabelPrinter();
    // After the check-in's answer, never before: the screen is drawn, then the job goes.
    if (chosen !== undefined) queueMicrotask(() => send(chosen));
    section.append(
      h('h1', { className: 'no-print' }, kiosk.t('label.title')),
      printerChoice(kiosk),
      serverPrinterChoice(kiosk, (choice) => {
        // A printer chosen here prints these labels when asked: it is offered, not sent unasked.
        status.textContent = '';
        delete status.dataset.state;
        again.hidden = choice === undefined;
        again.textContent = choice === undefined ? '' : kiosk.t('print.on', { printer: choice.name });
      }),
      h(
        'div',
        { className: 'print-area' },
        ...children.map((c) => childLabel(kiosk, c, checkedInAt)),
        stub(kiosk, children, checkedInAt),
      ),
      status,
      h(
        'div',
        { className: 'actions no-print' },
        again,
        browserPrint,
        h(
          'button',
          {
            className: 'primary big',
            attrs: { type: 'button' },
            onClick: () => kiosk.show(deskScreen(desk)),
          },
          kiosk.t('label.done'),
        ),
      ),
    );
    return section;
  },
});
