/**
 * The desk at one session: find a child as you type (the local roster, accent-insensitive), see whether
 * they are here, check them in (the label follows) or out.
 */
import type { RosterStudent } from '../../../domain/roster.js';
import { decideCheckin, roomIsFull, utcDay, volunteersNeeded } from '../../../rules/checkin.js';
import { latestCheckin, openCheckin } from '../checkinState.js';
import { base64UrlBytes, deviceDailyCode } from '../deviceCode.js';
import { h, replaceChildren } from '../dom.js';
import { formatTime } from '../i18n.js';
import type { Kiosk, Screen } from '../kiosk.js';
import { checkInDoc } from '../outboxEvents.js';
import { type RosterSessionDoc, searchStudents, siblingsOf } from '../rosterIndex.js';
import { checkoutScreen } from './checkout.js';
import { labelScreen } from './label.js';
import { newChildScreen } from './newChild.js';
import { sessionLabel, sessionsScreen } from './sessions.js';
import { siblingsScreen } from './siblings.js';

const statusLine = (kiosk: Kiosk, session: RosterSessionDoc, student: RosterStudent): string => {
  const last = latestCheckin(kiosk.aspect(session.sessionId, student.studentId));
  if (last === undefined || last.status === 'SUPERSEDED') return kiosk.t('desk.absent');
  const text =
    last.status === 'CHECKED_OUT' && last.checkedOutAt !== null
      ? kiosk.t(last.emergency ? 'desk.leftEmergency' : 'desk.left', {
          time: formatTime(kiosk.lang(), last.checkedOutAt),
        })
      : kiosk.t('desk.present', { time: formatTime(kiosk.lang(), last.checkedInAt) });
  return last.pending ? `${text} (${kiosk.t('desk.unconfirmed')})` : text;
};

/** The room as this tablet counts it: full at the class's capacity; an ADMIN may check in beyond it. */
export type RoomCheck = 'OPEN' | 'FULL' | 'FULL_ADMIN_MAY_OVERRIDE';

export const roomCheck = (kiosk: Kiosk, session: RosterSessionDoc, adding = 1): RoomCheck => {
  const capacity = kiosk.index().rooms.get(session.classId)?.capacity ?? null;
  // Full when the last of the children coming in would find the room full.
  if (!roomIsFull(kiosk.headcount(session.sessionId).checkedIn + adding - 1, capacity)) return 'OPEN';
  return (kiosk.session.current()?.user.roles ?? []).includes('ADMIN') ? 'FULL_ADMIN_MAY_OVERRIDE' : 'FULL';
};

/** What the desk says when the room is full, with the count and the capacity. */
export const roomFullMessage = (kiosk: Kiosk, session: RosterSessionDoc, check: RoomCheck): string =>
  kiosk.t(check === 'FULL' ? 'room.fullRefused' : 'room.fullOverride', {
    n: kiosk.headcount(session.sessionId).checkedIn,
    capacity: kiosk.index().rooms.get(session.classId)?.capacity ?? 0,
  });

/**
 * Records one child's check-in on this tablet (the server's own rule on what the tablet knows) and
 * answers the code for the label, or what stopped it; online or offline alike, since the event goes
 * through the outbox. The room's capacity is checked by the caller (`roomCheck`), which may let an
 * ADMIN override it.
 */
export const recordCheckIn = async (
  kiosk: Kiosk,
  session: RosterSessionDoc,
  student: RosterStudent,
  now: Date,
): Promise<{ readonly code: string } | { readonly problem: string }> => {
  const key = kiosk.index().dayKeys.get(utcDay(now));
  const view = kiosk.aspect(session.sessionId, student.studentId);
  if (key === undefined) return { problem: kiosk.t('checkin.noKey') };
  const decision = decideCheckin(view.checkins, { type: 'CHECK_IN', checkInId: crypto.randomUUID() });
  if (decision.kind === 'REFUSED')
    return { problem: kiosk.t('checkin.already', { name: student.displayName }) };
  const code = await deviceDailyCode(base64UrlBytes(key), student.studentId);
  await kiosk.record(
    checkInDoc({
      eventId: crypto.randomUUID(),
      now,
      studentId: student.studentId,
      sessionId: session.sessionId,
      checkInId: decision.checkInId,
      baseVersion: view.version,
    }),
  );
  return { code };
};

/** Checks one child in, then shows the label and the guardian's stub. */
export const checkInChild = async (
  kiosk: Kiosk,
  session: RosterSessionDoc,
  student: RosterStudent,
): Promise<string | undefined> => {
  const now = new Date();
  const recorded = await recordCheckIn(kiosk, session, student, now);
  if ('problem' in recorded) return recorded.problem;
  kiosk.show(
    labelScreen({
      children: [{ session, student, code: recorded.code }],
      checkedInAt: now.toISOString(),
      desk: session,
    }),
  );
  return undefined;
};

export const deskScreen = (session: RosterSessionDoc): Screen => {
  let query = '';
  let list: HTMLElement | undefined;
  let notice: HTMLElement | undefined;
  let busy = false;

  let headcount: HTMLElement | undefined;

  const act = async (action: () => Promise<string | undefined>) => {
    if (busy) return;
    busy = true;
    try {
      const problem = await action();
      if (problem !== undefined && notice !== undefined) notice.textContent = problem;
    } finally {
      busy = false;
    }
  };

  /** At capacity a volunteer is told so; an ADMIN is offered to check the child in all the same. */
  const checkIn = async (kiosk: Kiosk, student: RosterStudent): Promise<string | undefined> => {
    const room = roomCheck(kiosk, session);
    if (room === 'OPEN') return checkInChild(kiosk, session, student);
    if (room === 'FULL' || notice === undefined) return roomFullMessage(kiosk, session, room);
    replaceChildren(
      notice,
      roomFullMessage(kiosk, session, room),
      ' ',
      h(
        'button',
        {
          className: 'danger-outline',
          attrs: { type: 'button' },
          onClick: () => void act(() => checkInChild(kiosk, session, student)),
        },
        kiosk.t('room.override', { name: student.displayName }),
      ),
    );
    return undefined;
  };

  /** "In the room: 12 / 15", live: the roster's check-ins with this tablet's own over them. */
  const drawHeadcount = (kiosk: Kiosk) => {
    if (headcount === undefined) return;
    const count = kiosk.headcount(session.sessionId);
    const room = kiosk.index().rooms.get(session.classId);
    const capacity = room?.capacity ?? null;
    const needed = volunteersNeeded(count.checkedIn, room?.childrenPerVolunteer ?? null);
    headcount.dataset.checkedIn = String(count.checkedIn);
    headcount.dataset.full = String(roomIsFull(count.checkedIn, capacity));
    headcount.textContent = [
      capacity === null
        ? kiosk.t('room.in', { n: count.checkedIn })
        : kiosk.t('room.inOf', { n: count.checkedIn, capacity }),
      kiosk.t('room.out', { n: count.checkedOut }),
      needed === null ? null : kiosk.t('room.volunteers', { n: needed }),
    ]
      .filter((part) => part !== null)
      .join(' · ');
  };

  const row = (kiosk: Kiosk, student: RosterStudent): HTMLElement => {
    const open = openCheckin(kiosk.aspect(session.sessionId, student.studentId));
    const siblings = siblingsOf(kiosk.index(), student).length;
    return h(
      'li',
      { className: 'child', attrs: { 'data-student-id': student.studentId } },
      h(
        'div',
        { className: 'child-main' },
        h('span', { className: 'child-name' }, student.displayName),
        h('span', { className: 'child-class' }, kiosk.index().classes.get(student.classId) ?? ''),
        student.visitor ? h('span', { className: 'badge visitor' }, kiosk.t('desk.visitor')) : null,
        student.allergies === null
          ? null
          : h('span', { className: 'badge allergy' }, kiosk.t('desk.allergy', { text: student.allergies })),
        h('span', { className: 'child-status' }, statusLine(kiosk, session, student)),
      ),
      siblings === 0
        ? null
        : h(
            'button',
            {
              className: 'secondary',
              attrs: { type: 'button' },
              onClick: () => kiosk.show(siblingsScreen(session, student)),
            },
            kiosk.t('desk.siblings', { n: siblings }),
          ),
      open === undefined
        ? h(
            'button',
            {
              className: 'primary',
              attrs: { type: 'button' },
              onClick: () => void act(() => checkIn(kiosk, student)),
            },
            kiosk.t('desk.checkIn'),
          )
        : h(
            'button',
            {
              className: 'secondary',
              attrs: { type: 'button' },
              onClick: () => kiosk.show(checkoutScreen(session, student)),
            },
            kiosk.t('desk.checkOut'),
          ),
    );
  };

  const drawList = (kiosk: Kiosk) => {
    drawHeadcount(kiosk);
    if (list === undefined) return;
    const found = searchStudents(kiosk.index(), query, session.classId);
    replaceChildren(
      list,
      ...(found.length === 0
        ? [h('li', { className: 'empty' }, kiosk.t('desk.noMatch'))]
        : found.map((s) => row(kiosk, s))),
    );
  };

  return {
    name: 'desk',
    render(kiosk) {
      const search = h('input', {
        className: 'search',
        attrs: {
          type: 'search',
          placeholder: kiosk.t('desk.search'),
          'aria-label': kiosk.t('desk.search'),
          autocomplete: 'off',
          spellcheck: 'false',
        },
        onInput: () => {
          query = search.value;
          if (notice !== undefined) notice.textContent = '';
          drawList(kiosk);
        },
      });
      search.value = query;
      list = h('ul', { className: 'children' });
      notice = h('p', { className: 'notice', attrs: { role: 'alert' } });
      headcount = h('p', { className: 'headcount', attrs: { 'data-test': 'headcount' } });
      drawList(kiosk);
      queueMicrotask(() => search.focus());
      return h(
        'section',
        { className: 'desk' },
        h(
          'div',
          { className: 'desk-head' },
          h('h1', {}, sessionLabel(kiosk, session)),
          h(
            'button',
            {
              className: 'secondary',
              attrs: { type: 'button', 'data-test': 'new-child' },
              onClick: () => kiosk.show(newChildScreen(session)),
            },
            kiosk.t('desk.newChild'),
          ),
          h(
            'button',
            { className: 'quiet', attrs: { type: 'button' }, onClick: () => kiosk.show(sessionsScreen) },
            kiosk.t('header.changeSession'),
          ),
        ),
        headcount,
        search,
        notice,
        list,
      );
    },
    update: drawList,
  };
};
