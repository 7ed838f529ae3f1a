/**
 * Brothers and sisters in one go: the children who share a guardian phone with the one found, each
 * in their own class's session of the day, ticked and checked in with one action (one CHECK_IN event
 * per child, one label per child and one guardian's stub listing them all with each code). Offline
 * too: every event goes through the outbox.
 */

import { h, leaveButton, replaceChildren, submitOnce } from '../../../client/dom.js';
import type { RosterStudent } from '../../../domain/roster.js';
import { openCheckin } from '../checkinState.js';
import type { Kiosk, Screen } from '../kiosk.js';
import { type RosterSessionDoc, sessionOpen, siblingsOf } from '../rosterIndex.js';
import { admissionAt, deskScreen, recordCheckIn, showRefusal } from './desk.js';
import { type LabelledChild, labelScreen } from './label.js';

/**
 * The session a child would be checked in to: their class's session on the desk's day, if any, one
 * that takes check-ins first (a deactivated one is offered only for the refusal to say why).
 */
export const sessionFor = (
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
 * refreshes each row in place: the volunteer's ticks stay, and only a child who can no longer be
 * checked in is unticked and greyed out.
 */
export const siblingsScreen = (desk: RosterSessionDoc, found: RosterStudent): Screen => {
  let refresh: (() => void) | undefined;
  return {
    name: 'siblings',
    update: () => refresh?.(),
    render: (kiosk: Kiosk) => {
      const form = renderSiblings(kiosk, desk, found);
      refresh = form.refresh;
      return form.element;
    },
  };
};

const renderSiblings = (
  kiosk: Kiosk,
  desk: RosterSessionDoc,
  found: RosterStudent,
): { readonly element: HTMLElement; readonly refresh: () => void } => {
  const family = [found, ...siblingsOf(kiosk.index(), found)];
  const boxes = new Map<string, HTMLInputElement>();
  const statuses = new Map<string, HTMLElement>();
  /** Whether the child can be ticked now, and the words that say why not. */
  const availability = (child: RosterStudent): { readonly open: boolean; readonly status: string } => {
    const session = sessionFor(kiosk, desk, child);
    if (session === undefined) return { open: false, status: kiosk.t('siblings.noSession') };
    if (openCheckin(kiosk.aspect(session.sessionId, child.studentId)) !== undefined)
      return { open: false, status: kiosk.t('siblings.inside') };
    return { open: true, status: '' };
  };
  const row = (child: RosterStudent): HTMLElement => {
    const { open, status } = availability(child);
    const box = h('input', { attrs: { type: 'checkbox', name: child.studentId } });
    box.checked = open;
    box.disabled = !open;
    boxes.set(child.studentId, box);
    const statusLine = h('span', { className: 'child-status' }, status);
    statusLine.hidden = status === '';
    statuses.set(child.studentId, statusLine);
    return h(
      'li',
      { className: 'child sibling', attrs: { 'data-student-id': child.studentId } },
      h(
        'label',
        { className: 'child-main' },
        box,
        h('span', { className: 'child-name' }, child.displayName),
        h('span', { className: 'child-class' }, kiosk.index().classes.get(child.classId) ?? ''),
        child.allergies === null
          ? null
          : h('span', { className: 'badge allergy' }, kiosk.t('desk.allergy', { text: child.allergies })),
        statusLine,
      ),
    );
  };
  const refresh = (): void => {
    for (const child of family) {
      const box = boxes.get(child.studentId);
      const statusLine = statuses.get(child.studentId);
      if (box === undefined || statusLine === undefined) continue;
      const { open, status } = availability(child);
      // A child who became available again is offered unticked: the volunteer had not chosen them.
      if (!open) box.checked = false;
      box.disabled = !open;
      statusLine.textContent = status;
      statusLine.hidden = status === '';
    }
  };
  const message = h('p', { className: 'form-error', attrs: { role: 'alert' } });
  const confirm = h(
    'button',
    { className: 'primary big', attrs: { type: 'submit' } },
    kiosk.t('siblings.confirm'),
  );

  const offer = h('div', { className: 'offer' });

  /** Checks the chosen children in, each judged again as it is recorded (the room fills as they go). */
  const checkInAll = async (
    chosen: ReadonlyArray<{ readonly child: RosterStudent; readonly session: RosterSessionDoc }>,
    override: { readonly justification: string } | undefined,
  ): Promise<string | undefined> => {
    const now = new Date();
    const labelled: LabelledChild[] = [];
    const problems: string[] = [];
    for (const { child, session } of chosen) {
      const recorded = await recordCheckIn(kiosk, session, child, now, override);
      // One child refused (checked in meanwhile on this tablet) does not hold back the others.
      if ('code' in recorded)
        labelled.push({ session, student: child, code: recorded.code, checkInId: recorded.checkInId });
      else problems.push(recorded.problem);
    }
    if (labelled.length === 0) return problems.join(' ') || kiosk.t('siblings.noneChosen');
    kiosk.show(labelScreen({ children: labelled, checkedInAt: now.toISOString(), desk }));
    return undefined;
  };

  /**
   * Every ticked child is judged before any is recorded, each counting those going into the same room
   * before them: one refusal stops them all, and an ADMIN's one justification passes them all.
   */
  const attempt = async (): Promise<string | undefined> => {
    replaceChildren(offer);
    const chosen = family.flatMap((child) => {
      const session = sessionFor(kiosk, desk, child);
      return boxes.get(child.studentId)?.checked === true && session !== undefined
        ? [{ child, session }]
        : [];
    });
    if (chosen.length === 0) return kiosk.t('siblings.noneChosen');
    const refusals = chosen.flatMap(({ child, session }, i) => {
      const ahead = chosen.slice(0, i).filter((c) => c.session === session).length;
      const decision = admissionAt(kiosk, session, child, { ahead });
      return decision.kind === 'REFUSE' ? [{ refusal: decision, name: child.displayName }] : [];
    });
    if (refusals.length === 0) return checkInAll(chosen, undefined);
    showRefusal(kiosk, offer, refusals, (justification) => checkInAll(chosen, { justification }));
    return undefined;
  };

  const onSubmit = submitOnce(confirm, message, attempt);
  const element = h(
    'section',
    { className: 'siblings' },
    h('h1', {}, kiosk.t('siblings.title', { name: found.displayName })),
    h(
      'form',
      { onSubmit: (e) => void onSubmit(e) },
      h('ul', { className: 'children' }, ...family.map(row)),
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
  return { element, refresh };
};
