/**
 * Today's sessions (the tablet's calendar day), then the next days the roster holds. A deactivated
 * session is offered only while children are in its room, marked as check-out only.
 */
import { h } from '../dom.js';
import { formatDate, formatTime } from '../i18n.js';
import type { Kiosk, Screen } from '../kiosk.js';
import { type RosterSessionDoc, sessionOpen, sessionsFrom } from '../rosterIndex.js';
import { deskScreen } from './desk.js';

/** The tablet's calendar date (sessions are dated in the ministry's own calendar). */
export const localDay = (at: Date): string =>
  `${at.getFullYear()}-${String(at.getMonth() + 1).padStart(2, '0')}-${String(at.getDate()).padStart(2, '0')}`;

export const sessionLabel = (kiosk: Kiosk, s: RosterSessionDoc): string =>
  [kiosk.index().classes.get(s.classId), s.title ?? kiosk.t('sessions.untitled')]
    .filter((p) => p !== undefined)
    .join(' · ');

const sessionButton = (kiosk: Kiosk, s: RosterSessionDoc): HTMLElement =>
  h(
    'li',
    {},
    h(
      'button',
      {
        className: 'session',
        attrs: { type: 'button', 'data-session-id': s.sessionId },
        onClick: () => kiosk.show(deskScreen(s)),
      },
      h('span', { className: 'session-name' }, sessionLabel(kiosk, s)),
      h(
        'span',
        { className: 'session-when' },
        [formatDate(kiosk.lang(), s.date), s.startsAt === null ? '' : formatTime(kiosk.lang(), s.startsAt)]
          .filter((p) => p !== '')
          .join(' · '),
      ),
      sessionOpen(kiosk.index(), s) ? null : h('span', { className: 'badge' }, kiosk.t('sessions.closed')),
    ),
  );

const render = (kiosk: Kiosk): HTMLElement => {
  const index = kiosk.index();
  const { today, later } = sessionsFrom(
    index,
    localDay(new Date()),
    (sessionId) => kiosk.headcount(sessionId).checkedIn > 0,
  );
  const empty = index.sessions.length === 0 && index.students.size === 0;
  return h(
    'section',
    { className: 'sessions' },
    h('h1', {}, kiosk.t('sessions.title')),
    empty
      ? h('p', { className: 'notice' }, kiosk.t('sessions.noRoster'))
      : today.length === 0
        ? h('p', { className: 'notice' }, kiosk.t('sessions.none'))
        : h('ul', { className: 'session-list' }, ...today.map((s) => sessionButton(kiosk, s))),
    later.length === 0 ? null : h('h2', {}, kiosk.t('sessions.upcoming')),
    later.length === 0
      ? null
      : h('ul', { className: 'session-list later' }, ...later.map((s) => sessionButton(kiosk, s))),
  );
};

export const sessionsScreen: Screen = { name: 'sessions', render };
