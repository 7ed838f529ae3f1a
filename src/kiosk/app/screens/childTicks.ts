/**
 * The children checked in together (the siblings and the family screens): one ticked row each, a
 * child who can go in now offered ticked and one who cannot greyed out with a line that says why;
 * then the ticked ones judged together and recorded together.
 */
import { h, replaceChildren } from '../../../client/dom.js';
import type { RosterStudent } from '../../../domain/roster.js';
import { refusalText } from '../admission.js';
import type { Kiosk } from '../kiosk.js';
import { refusalPanel } from './admissionRefusal.js';
import { type GoingIn, recordTogether, refusalsTogether, showRefusal } from './desk.js';
import type { LabelledChild } from './label.js';

/** Whether a child can be ticked now, and the words that say why not (empty when open). */
export interface ChildChoice {
  readonly student: RosterStudent;
  readonly open: boolean;
  readonly status: string;
}

export interface ChildTicks {
  readonly element: HTMLUListElement;
  /** Whether the volunteer left the child ticked. */
  ticked(studentId: string): boolean;
  /**
   * After a roster pull while the family waits: the volunteer's ticks stay, and only a child who can
   * no longer go in is unticked. One who became available again is offered unticked: the volunteer
   * had not chosen them. Children not among `now` are left as they are.
   */
  refresh(now: ReadonlyArray<ChildChoice>): void;
}

/** `rowClass` tells the screens' rows apart (`sibling`, `family-child`). */
export const childTicks = (
  kiosk: Kiosk,
  rowClass: string,
  choices: ReadonlyArray<ChildChoice>,
): ChildTicks => {
  const boxes = new Map<string, HTMLInputElement>();
  const statuses = new Map<string, HTMLElement>();
  const row = ({ student, open, status }: ChildChoice): HTMLElement => {
    const box = h('input', { attrs: { type: 'checkbox', name: student.studentId } });
    box.checked = open;
    box.disabled = !open;
    boxes.set(student.studentId, box);
    const statusLine = h('span', { className: 'child-status' }, status);
    statusLine.hidden = status === '';
    statuses.set(student.studentId, statusLine);
    return h(
      'li',
      { className: `child ${rowClass}`, attrs: { 'data-student-id': student.studentId } },
      h(
        'label',
        { className: 'child-main' },
        box,
        h('span', { className: 'child-name' }, student.displayName),
        h('span', { className: 'child-class' }, kiosk.index().classes.get(student.classId) ?? ''),
        student.allergies === null
          ? null
          : h('span', { className: 'badge allergy' }, kiosk.t('desk.allergy', { text: student.allergies })),
        statusLine,
      ),
    );
  };
  return {
    element: h('ul', { className: 'children' }, ...choices.map(row)),
    ticked: (studentId) => boxes.get(studentId)?.checked === true,
    refresh(now) {
      for (const { student, open, status } of now) {
        const box = boxes.get(student.studentId);
        const statusLine = statuses.get(student.studentId);
        if (box === undefined || statusLine === undefined) continue;
        if (!open) box.checked = false;
        box.disabled = !open;
        statusLine.textContent = status;
        statusLine.hidden = status === '';
      }
    },
  };
};

/** The children recorded together, for their labels and the one stub. */
export interface RecordedTogether {
  readonly labelled: ReadonlyArray<LabelledChild>;
  readonly checkedInAt: string;
}

/**
 * Every chosen child is judged before any is recorded, each counting those going into the room before
 * it (`refusalsTogether`): all go in, or none and the refusal is shown in `offer`. At the desk an ADMIN
 * may override it with a justification; in self-service it only says why (the tablet's signed-in ADMIN
 * is not the person at the screen). `recorded` shows the labels. Answers what the form says, if
 * anything.
 */
export const checkInTogether = async (
  kiosk: Kiosk,
  offer: HTMLElement,
  chosen: ReadonlyArray<GoingIn>,
  options: {
    readonly selfService: boolean;
    readonly recorded: (together: RecordedTogether) => string | undefined;
  },
): Promise<string | undefined> => {
  replaceChildren(offer);
  if (chosen.length === 0) return kiosk.t('siblings.noneChosen');
  const record = async (override: { readonly justification: string } | undefined) => {
    const recorded = await recordTogether(kiosk, chosen, override);
    return 'problem' in recorded ? recorded.problem : options.recorded(recorded);
  };
  const refusals = refusalsTogether(kiosk, chosen);
  if (refusals.length === 0) return record(undefined);
  if (options.selfService)
    replaceChildren(
      offer,
      refusalPanel(kiosk, `${refusalText(kiosk.lang(), refusals)} ${kiosk.t('family.askVolunteer')}`),
    );
  else showRefusal(kiosk, offer, refusals, (justification) => record({ justification }));
  return undefined;
};
