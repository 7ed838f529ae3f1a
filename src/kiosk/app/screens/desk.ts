/**
 * The desk at one session: find a child as you type (the local roster, accent-insensitive), see whether
 * they are here, check them in (the label follows) or out.
 */

import { h, replaceChildren } from '../../../client/dom.js';
import type { RosterStudent } from '../../../domain/roster.js';
import { roomIsFull, utcDay } from '../../../rules/checkin.js';
import {
  type AdmissionDecision,
  type DeskRefusal,
  decideAdmission,
  deskFacts,
  mayOverrideRefusal,
  refusalText,
} from '../admission.js';
import { latestCheckin, openCheckin } from '../checkinState.js';
import { base64UrlBytes, deviceDailyCode } from '../deviceCode.js';
import { formatTime } from '../i18n.js';
import type { Kiosk, Screen } from '../kiosk.js';
import { checkInDoc } from '../outboxEvents.js';
import { volunteersWanted } from '../roomVolunteers.js';
import { type RosterSessionDoc, searchStudents, sessionOpen, siblingsOf } from '../rosterIndex.js';
import { refusalPanel } from './admissionRefusal.js';
import { checkoutScreen } from './checkout.js';
import { labelScreen } from './label.js';
import { newChildScreen } from './newChild.js';
import { openFamilyAtDesk, openScanOverlay } from './scanOverlay.js';
import { sessionLabel, sessionsScreen } from './sessions.js';
import { siblingsScreen } from './siblings.js';
import { meInAction, type VolunteerControls, volunteerControls } from './volunteers.js';

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

type Override = { readonly justification: string } | undefined;

/**
 * The admission rule's answer for one child at this desk now, on what the tablet knows (`admission.ts`):
 * `ahead` children are going into the same room before this one (siblings checked in together); a
 * first-time visitor about to be registered is `NEW_VISITOR`.
 */
export const admissionAt = (
  kiosk: Kiosk,
  session: RosterSessionDoc,
  student: RosterStudent | 'NEW_VISITOR',
  options: { readonly ahead?: number; readonly override?: Override } = {},
): AdmissionDecision =>
  decideAdmission(
    { checkInId: crypto.randomUUID(), override: options.override },
    deskFacts({
      index: kiosk.index(),
      session: { ...session, volunteers: kiosk.volunteersIn(session.sessionId) },
      student,
      checkedIn: kiosk.headcount(session.sessionId).checkedIn + (options.ahead ?? 0),
      checkins: student === 'NEW_VISITOR' ? [] : kiosk.aspect(session.sessionId, student.studentId).checkins,
      actorRoles: kiosk.session.current()?.user.roles ?? [],
    }),
  );

/**
 * What the desk shows of refused check-ins: the reasons, and for an ADMIN the offer to check in all the
 * same with a justification, which `onOverride` records. Too few volunteers is offered a way out first:
 * the signed-in user checks in to the room (`volunteer.sessionId`), then `volunteer.retry` tries again.
 */
export const showRefusal = (
  kiosk: Kiosk,
  slot: HTMLElement,
  refusals: ReadonlyArray<{ readonly refusal: DeskRefusal; readonly name: string }>,
  onOverride: (justification: string) => Promise<string | undefined>,
  volunteer?: { readonly sessionId: string; readonly retry: () => Promise<string | undefined> },
): void => {
  const overridable = refusals.every(({ refusal }) => mayOverrideRefusal(refusal));
  const ratio = refusals.some(({ refusal }) => refusal.refusal.reason === 'RATIO_EXCEEDED');
  // Somebody already in the room adds nothing by checking in again.
  const action =
    ratio && volunteer !== undefined && (kiosk.volunteers.known(volunteer.sessionId)?.mine ?? null) === null
      ? meInAction(kiosk, volunteer.sessionId, volunteer.retry)
      : undefined;
  replaceChildren(
    slot,
    refusalPanel(kiosk, refusalText(kiosk.lang(), refusals), overridable ? onOverride : undefined, action),
  );
  if (action !== undefined && !overridable) queueMicrotask(() => action.querySelector('button')?.focus());
};

/**
 * Records one child's check-in on this tablet, judged again by the admission rule as it is recorded,
 * and answers the code for the label, or what stopped it; online or offline alike, since the event goes
 * through the outbox. An ADMIN's `override` is carried on the event when the rule needed it.
 */
export const recordCheckIn = async (
  kiosk: Kiosk,
  session: RosterSessionDoc,
  student: RosterStudent,
  now: Date,
  override?: Override,
): Promise<{ readonly code: string; readonly checkInId: string } | { readonly problem: string }> => {
  const key = kiosk.index().dayKeys.get(utcDay(now));
  if (key === undefined) return { problem: kiosk.t('checkin.noKey') };
  const decision = admissionAt(kiosk, session, student, { override });
  if (decision.kind === 'REFUSE')
    return { problem: refusalText(kiosk.lang(), [{ refusal: decision, name: student.displayName }]) };
  const code = await deviceDailyCode(base64UrlBytes(key), student.studentId);
  await kiosk.record(
    checkInDoc({
      eventId: crypto.randomUUID(),
      now,
      studentId: student.studentId,
      sessionId: session.sessionId,
      checkInId: decision.event.checkInId,
      baseVersion: kiosk.aspect(session.sessionId, student.studentId).version,
      override: decision.justification === null ? undefined : { justification: decision.justification },
    }),
  );
  return { code, checkInId: decision.event.checkInId };
};

/** Checks one child in, then shows the label and the guardian's stub. */
export const checkInChild = async (
  kiosk: Kiosk,
  session: RosterSessionDoc,
  student: RosterStudent,
  override?: Override,
): Promise<string | undefined> => {
  const now = new Date();
  const recorded = await recordCheckIn(kiosk, session, student, now, override);
  if ('problem' in recorded) return recorded.problem;
  kiosk.show(
    labelScreen({
      children: [{ session, student, code: recorded.code, checkInId: recorded.checkInId }],
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
  /** Where a refused check-in says why, with an ADMIN's override. */
  let offer: HTMLElement | undefined;
  let busy = false;

  let headcount: HTMLElement | undefined;
  /** A room with a ratio only: who is in it matters to nobody else. */
  let volunteers: VolunteerControls | undefined;

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

  /** A refusal is shown with its reason; an ADMIN may check the child in all the same, justified. */
  const checkIn = async (kiosk: Kiosk, student: RosterStudent): Promise<string | undefined> => {
    const decision = admissionAt(kiosk, session, student);
    if (decision.kind === 'ADMIT') return checkInChild(kiosk, session, student);
    if (offer !== undefined)
      showRefusal(
        kiosk,
        offer,
        [{ refusal: decision, name: student.displayName }],
        (justification) => checkInChild(kiosk, session, student, { justification }),
        { sessionId: session.sessionId, retry: () => checkIn(kiosk, student) },
      );
    return undefined;
  };

  /**
   * "In the room: 12 / 15 · left: 0 · volunteers: 1 of 2", live: the roster's check-ins with this
   * tablet's own over them, and the volunteers as last read from the server or pulled.
   */
  const drawHeadcount = (kiosk: Kiosk) => {
    volunteers?.update(kiosk);
    if (headcount === undefined) return;
    const count = kiosk.headcount(session.sessionId);
    const room = kiosk.index().rooms.get(session.classId);
    const capacity = room?.capacity ?? null;
    const needed = volunteersWanted(count.checkedIn, room?.childrenPerVolunteer ?? null);
    const present = kiosk.volunteersIn(session.sessionId);
    headcount.dataset.checkedIn = String(count.checkedIn);
    headcount.dataset.full = String(roomIsFull(count.checkedIn, capacity));
    headcount.dataset.volunteers = needed === null ? '' : String(present);
    headcount.textContent = [
      capacity === null
        ? kiosk.t('room.in', { n: count.checkedIn })
        : kiosk.t('room.inOf', { n: count.checkedIn, capacity }),
      kiosk.t('room.out', { n: count.checkedOut }),
      needed === null ? null : kiosk.t('room.volunteers', { n: present, needed }),
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
          if (offer !== undefined) replaceChildren(offer);
          drawList(kiosk);
        },
      });
      search.value = query;
      list = h('ul', { className: 'children' });
      notice = h('p', { className: 'notice', attrs: { role: 'alert' } });
      offer = h('div', { className: 'offer' });
      headcount = h('p', { className: 'headcount', attrs: { 'data-test': 'headcount' } });
      const ratio = kiosk.index().rooms.get(session.classId)?.childrenPerVolunteer ?? null;
      volunteers = ratio === null ? undefined : volunteerControls(kiosk, session.sessionId);
      // Whether the signed-in user is in the room is the server's to say ("I'm in" or "leave").
      if (volunteers !== undefined && navigator.onLine) void kiosk.volunteers.read(session.sessionId);
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
              attrs: { type: 'button', 'data-test': 'scan-pass' },
              onClick: () => openScanOverlay(kiosk, openFamilyAtDesk(kiosk, session)),
            },
            kiosk.t('desk.scanPass'),
          ),
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
        // A deactivated session is here for check-outs only; a check-in is refused by the rule, with why.
        sessionOpen(kiosk.index(), session)
          ? null
          : h('p', { className: 'notice', attrs: { 'data-test': 'session-closed' } }, kiosk.t('desk.closed')),
        headcount,
        volunteers?.element,
        search,
        notice,
        offer,
        list,
      );
    },
    update: drawList,
  };
};
