/**
 * "Call the guardian" for a child in the room (0037): an optional short line, and the page goes to the
 * phones on the child's record through the server; the tablet never sees a number, only how many
 * phones were reached. Offline, or before the server knows the check-in, the page waits on the tablet
 * and the screen says so.
 */

import { field, h, leaveButton, submitOnce } from '../../../client/dom.js';
import { PAGE_MESSAGE_MAX } from '../../../domain/pages.js';
import type { RosterStudent } from '../../../domain/roster.js';
import { openCheckin } from '../checkinState.js';
import type { MessageKey } from '../i18n.js';
import type { Kiosk, Screen } from '../kiosk.js';
import type { PageOutcome } from '../pageQueue.js';
import type { RosterSessionDoc } from '../rosterIndex.js';
import { checkoutScreen } from './checkout.js';

const OUTCOME_TEXT: Readonly<
  Record<Exclude<PageOutcome['kind'], 'sent' | 'queued' | 'rate_limited'>, MessageKey>
> = {
  not_in_room: 'page.notInRoom',
  not_delivered: 'page.notDelivered',
  failed: 'page.failed',
};

const outcomeText = (kiosk: Kiosk, outcome: PageOutcome): string => {
  switch (outcome.kind) {
    case 'sent':
      return kiosk.t('page.sent', { n: outcome.phonesPaged });
    case 'queued':
      return kiosk.t(outcome.why === 'offline' ? 'page.queuedOffline' : 'page.queuedUnconfirmed');
    case 'rate_limited':
      return kiosk.t('page.tooSoon', { minutes: Math.max(1, Math.ceil(outcome.retryAfterSeconds / 60)) });
    default:
      return kiosk.t(OUTCOME_TEXT[outcome.kind]);
  }
};

export const pageGuardianScreen = (session: RosterSessionDoc, student: RosterStudent): Screen => ({
  name: 'page-guardian',
  render(kiosk: Kiosk) {
    const message = h('textarea', {
      className: 'page-message',
      attrs: { name: 'message', rows: '2', maxlength: String(PAGE_MESSAGE_MAX) },
    });
    const result = h('p', { className: 'notice', attrs: { role: 'status', 'data-test': 'page-result' } });
    const problem = h('p', { className: 'form-error', attrs: { role: 'alert' } });
    const confirm = h(
      'button',
      { className: 'primary big', attrs: { type: 'submit' } },
      kiosk.t('page.confirm'),
    );

    const attempt = async (): Promise<string | undefined> => {
      const open = openCheckin(kiosk.aspect(session.sessionId, student.studentId));
      if (open === undefined) return kiosk.t('checkout.notOpen');
      // One line: a line break typed on the tablet becomes a space, as the server wants one line.
      const text = message.value.replace(/\s+/g, ' ').trim();
      const outcome = await kiosk.page({
        checkInId: open.checkInId,
        studentId: student.studentId,
        sessionId: session.sessionId,
        message: text === '' ? null : text.slice(0, PAGE_MESSAGE_MAX),
      });
      result.dataset.outcome = outcome.kind;
      result.textContent = outcomeText(kiosk, outcome);
      problem.textContent = '';
      return undefined;
    };

    const onSubmit = submitOnce(confirm, problem, attempt);
    queueMicrotask(() => message.focus());
    return h(
      'section',
      { className: 'checkout page-guardian' },
      h('h1', {}, kiosk.t('page.title', { name: student.displayName })),
      h('p', { className: 'field-hint' }, kiosk.t('page.hint')),
      h(
        'form',
        { onSubmit: (e) => void onSubmit(e) },
        field(kiosk.t('page.message'), message),
        h('p', { className: 'field-hint' }, kiosk.t('page.messageHint', { max: PAGE_MESSAGE_MAX })),
        problem,
        result,
        h(
          'div',
          { className: 'actions' },
          leaveButton(kiosk.t('checkout.back'), () => kiosk.show(checkoutScreen(session, student))),
          confirm,
        ),
      ),
    );
  },
});
