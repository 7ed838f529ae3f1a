/**
 * The children checked in together, one ticked row each (the siblings and the family screens). A
 * child who can go in now is offered ticked; one who cannot is greyed out with a line that says why.
 */
import { h } from '../../../client/dom.js';
import type { RosterStudent } from '../../../domain/roster.js';
import type { Kiosk } from '../kiosk.js';

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
