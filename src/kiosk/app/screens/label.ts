/**
 * The label after a check-in: the child's tag (name, class, allergy alert, care notes, the daily code)
 * and the guardian's stub with the same code. Print styles show only these two.
 */
import type { RosterStudent } from '../../../domain/roster.js';
import { h } from '../dom.js';
import { formatTime } from '../i18n.js';
import type { Kiosk, Screen } from '../kiosk.js';
import type { RosterSessionDoc } from '../rosterIndex.js';
import { deskScreen } from './desk.js';
import { sessionLabel } from './sessions.js';

export interface LabelInput {
  readonly session: RosterSessionDoc;
  readonly student: RosterStudent;
  readonly code: string;
  readonly checkedInAt: string;
}

export const labelScreen = ({ session, student, code, checkedInAt }: LabelInput): Screen => ({
  name: 'label',
  render(kiosk: Kiosk) {
    const when = `${sessionLabel(kiosk, session)} · ${formatTime(kiosk.lang(), checkedInAt)}`;
    const className = kiosk.index().classes.get(student.classId) ?? '';
    return h(
      'section',
      { className: 'label-screen' },
      h(
        'div',
        { className: 'print-area' },
        h(
          'article',
          { className: 'label', attrs: { 'data-test': 'label' } },
          h('p', { className: 'label-when' }, when),
          h('p', { className: 'label-name' }, student.displayName),
          h('p', { className: 'label-class' }, className),
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
        ),
        h(
          'article',
          { className: 'label stub', attrs: { 'data-test': 'stub' } },
          h('p', { className: 'label-when' }, `${kiosk.t('label.stub')} · ${when}`),
          h('p', { className: 'label-name' }, student.displayName),
          h('p', { className: 'label-code' }, h('span', { className: 'code' }, code)),
          h('p', { className: 'label-hint' }, kiosk.t('label.stubHint')),
        ),
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
            onClick: () => kiosk.show(deskScreen(session)),
          },
          kiosk.t('label.done'),
        ),
      ),
    );
  },
});
