/**
 * Brothers and sisters in one go: the children who share a guardian phone with the one found, each
 * in their own class's session of the day, ticked and checked in with one action (one CHECK_IN event
 * per child, one label per child and one guardian's stub listing them all with each code). Offline
 * too: every event goes through the outbox.
 */

import { h, leaveButton, submitOnce } from '../../../client/dom.js';
import type { RosterStudent } from '../../../domain/roster.js';
import { openCheckin } from '../checkinState.js';
import type { Kiosk, Screen } from '../kiosk.js';
import { type RosterSessionDoc, sessionOpen, siblingsOf } from '../rosterIndex.js';
import { type ChildChoice, checkInTogether, childTicks } from './childTicks.js';
import { deskScreen } from './desk.js';
import { labelScreen } from './label.js';
import { type Drawn, refreshingScreen } from './refreshingScreen.js';

/**
 * The session a child would be checked in to: their class's session on the desk's day, if any, one
 * that takes check-ins first (a deactivated one is offered only for the refusal to say why).
 */
const sessionFor = (
  kiosk: Kiosk,
  desk: RosterSessionDoc,
  child: RosterStudent,
): RosterSessionDoc | undefined => {
  if (child.classId === desk.classId) return desk;
  const index = kiosk.index();
  const sameDay = index.sessions.filter((s) => s.classId === child.classId && s.date === desk.date);
  return sameDay.find((s) => sessionOpen(index, s)) ?? sameDay[0];
};

/**
 * A roster pull while the family waits (another tablet checks a brother in, a class gains a session)
 * refreshes each row in place (`childTicks`).
 */
export const siblingsScreen = (desk: RosterSessionDoc, found: RosterStudent): Screen =>
  refreshingScreen('siblings', (kiosk) => renderSiblings(kiosk, desk, found));

const renderSiblings = (kiosk: Kiosk, desk: RosterSessionDoc, found: RosterStudent): Drawn => {
  const family = [found, ...siblingsOf(kiosk.index(), found)];
  /** Whether the child can be ticked now, and the words that say why not. */
  const choice = (student: RosterStudent): ChildChoice => {
    const session = sessionFor(kiosk, desk, student);
    if (session === undefined) return { student, open: false, status: kiosk.t('siblings.noSession') };
    if (openCheckin(kiosk.aspect(session.sessionId, student.studentId)) !== undefined)
      return { student, open: false, status: kiosk.t('siblings.inside') };
    return { student, open: true, status: '' };
  };
  const ticks = childTicks(kiosk, 'sibling', family.map(choice));
  const message = h('p', { className: 'form-error', attrs: { role: 'alert' } });
  const confirm = h(
    'button',
    { className: 'primary big', attrs: { type: 'submit' } },
    kiosk.t('siblings.confirm'),
  );

  const offer = h('div', { className: 'offer' });

  const attempt = (): Promise<string | undefined> =>
    checkInTogether(
      kiosk,
      offer,
      family.flatMap((child) => {
        const session = sessionFor(kiosk, desk, child);
        return ticks.ticked(child.studentId) && session !== undefined ? [{ student: child, session }] : [];
      }),
      {
        selfService: false,
        recorded: ({ labelled, checkedInAt }) => {
          kiosk.show(labelScreen({ children: labelled, checkedInAt, desk }));
          return undefined;
        },
      },
    );

  const onSubmit = submitOnce(confirm, message, attempt);
  const element = h(
    'section',
    { className: 'siblings' },
    h('h1', {}, kiosk.t('siblings.title', { name: found.displayName })),
    h(
      'form',
      { onSubmit: (e) => void onSubmit(e) },
      ticks.element,
      message,
      offer,
      h(
        'div',
        { className: 'actions' },
        leaveButton(kiosk.t('newChild.cancel'), () => kiosk.show(deskScreen(desk))),
        confirm,
      ),
    ),
  );
  return { element, refresh: () => ticks.refresh(family.map(choice)) };
};
