/**
 * Volunteers at the desk of a room with a ratio: "I'm in this room" and "Leave the room" for the
 * signed-in user, a small form for a helper without an account, and the same "I'm in this room" offered
 * inside a RATIO_EXCEEDED refusal, one tap from retrying the check-in. Online only (`roomVolunteers.ts`):
 * offline the controls are disabled and say why, since a tablet has no volunteer event to queue.
 */
import * as E from 'fp-ts/lib/Either.js';
import { field, h, replaceChildren, submitOnce } from '../../../client/dom.js';
import type { ApiFailure } from '../api.js';
import type { MessageKey } from '../i18n.js';
import type { Kiosk } from '../kiosk.js';
import type { RoomVolunteers, VolunteerChange } from '../roomVolunteers.js';

const FAILURES: Readonly<Record<ApiFailure, MessageKey>> = {
  network: 'volunteers.offline',
  unauthorized: 'volunteers.signInAgain',
  forbidden: 'volunteers.forbidden',
  rate_limited: 'volunteers.failed',
  unexpected: 'volunteers.failed',
};

/** Makes the change on the server; what went wrong, in words, or the room as the server then lists it. */
const changeVolunteers = async (
  kiosk: Kiosk,
  sessionId: string,
  change: VolunteerChange,
): Promise<E.Either<string, RoomVolunteers>> => {
  // Said at once rather than after a fetch's timeout: the browser knows it has no network.
  if (!navigator.onLine) return E.left(kiosk.t('volunteers.offline'));
  const done = await kiosk.volunteers.change(sessionId, change);
  return E.isLeft(done) ? E.left(kiosk.t(FAILURES[done.left])) : done;
};

/** Calls `onNetwork` when the browser goes on or offline, for as long as `owner` is on the page. */
const whileShown = (owner: HTMLElement, onNetwork: () => void): void => {
  const listener = () => {
    if (owner.isConnected) onNetwork();
    else {
      window.removeEventListener('online', listener);
      window.removeEventListener('offline', listener);
    }
  };
  window.addEventListener('online', listener);
  window.addEventListener('offline', listener);
};

export interface VolunteerControls {
  readonly element: HTMLElement;
  /** Redraws from what the desk knows now (the signed-in user in the room or not, the network). */
  update(kiosk: Kiosk): void;
}

export const volunteerControls = (kiosk: Kiosk, sessionId: string): VolunteerControls => {
  const hintId = `volunteers-hint-${sessionId}`;
  const hint = h('p', { className: 'field-hint', attrs: { id: hintId, 'data-test': 'volunteers-hint' } });
  const message = h('p', {
    className: 'notice',
    attrs: { role: 'status', 'data-test': 'volunteers-message' },
  });
  let busy = false;

  const toggleMe = async () => {
    if (busy) return;
    const mine = kiosk.volunteers.known(sessionId)?.mine ?? null;
    busy = true;
    me.disabled = true;
    message.textContent = '';
    try {
      const done = await changeVolunteers(
        kiosk,
        sessionId,
        mine === null ? { kind: 'me-in' } : { kind: 'me-out', volunteerId: mine },
      );
      if (E.isLeft(done)) message.textContent = done.left;
    } finally {
      busy = false;
      update(kiosk);
    }
  };
  const me = h('button', {
    className: 'secondary',
    attrs: { type: 'button', 'data-test': 'volunteer-me', 'aria-describedby': hintId },
    onClick: () => void toggleMe(),
  });

  const name = h('input', {
    attrs: {
      type: 'text',
      name: 'helperName',
      autocomplete: 'off',
      spellcheck: 'false',
      required: '',
      maxlength: '120',
      'aria-describedby': hintId,
    },
  });
  const submit = h(
    'button',
    { className: 'secondary', attrs: { type: 'submit' } },
    kiosk.t('volunteers.helperSubmit'),
  );
  const form = h(
    'form',
    {
      className: 'helper-form',
      onSubmit: submitOnce(submit, message, async () => {
        const helper = name.value.trim();
        // Blanks only: `required` let them through, and there is nobody to name.
        if (helper === '') return undefined;
        message.textContent = '';
        const done = await changeVolunteers(kiosk, sessionId, { kind: 'helper', name: helper });
        if (E.isLeft(done)) return done.left;
        // The name went to the server, which keeps it; nothing on the tablet holds it after this.
        name.value = '';
        message.textContent = kiosk.t('volunteers.helperAdded');
        return undefined;
      }),
    },
    field(kiosk.t('volunteers.helperName'), name),
    submit,
  );

  const update = (k: Kiosk) => {
    const online = navigator.onLine;
    const mine = k.volunteers.known(sessionId)?.mine ?? null;
    me.textContent = k.t(mine === null ? 'volunteers.meIn' : 'volunteers.meOut');
    me.dataset.in = String(mine !== null);
    me.disabled = busy || !online;
    name.disabled = !online;
    submit.disabled = !online;
    hint.dataset.online = String(online);
    hint.textContent = k.t(online ? 'volunteers.needsNetwork' : 'volunteers.offline');
  };

  const element = h(
    'div',
    {
      className: 'volunteers',
      attrs: { role: 'group', 'aria-label': kiosk.t('volunteers.group'), 'data-test': 'volunteers' },
    },
    me,
    h('details', { className: 'helper' }, h('summary', {}, kiosk.t('volunteers.helper')), form),
    hint,
    message,
  );
  update(kiosk);
  whileShown(element, () => update(kiosk));
  return { element, update };
};

/**
 * "I'm in this room" inside a RATIO_EXCEEDED refusal: one tap checks the signed-in user in, then the
 * refusal gives way to the room's new count and a button to try the check-in again (`retry`, which
 * answers what stopped it, if anything).
 */
export const meInAction = (
  kiosk: Kiosk,
  sessionId: string,
  retry: () => Promise<string | undefined>,
): HTMLElement => {
  const message = h('p', { className: 'form-error', attrs: { role: 'alert' } });
  let busy = false;
  const button = h(
    'button',
    {
      className: 'primary',
      attrs: { type: 'button', 'data-test': 'refusal-volunteer-me' },
      onClick: () => void checkInMe(),
    },
    kiosk.t('volunteers.meIn'),
  );
  const slot = h('div', { className: 'refusal-action' }, button, message);
  const again = h(
    'button',
    {
      className: 'primary',
      attrs: { type: 'button', 'data-test': 'retry-check-in' },
      onClick: () =>
        void retry().then((problem) => {
          if (problem !== undefined) message.textContent = problem;
        }),
    },
    kiosk.t('volunteers.retry'),
  );
  const checkInMe = async () => {
    if (busy) return;
    busy = true;
    button.disabled = true;
    try {
      const done = await changeVolunteers(kiosk, sessionId, { kind: 'me-in' });
      if (E.isLeft(done)) {
        message.textContent = done.left;
        return;
      }
      replaceChildren(
        slot,
        h('p', { attrs: { role: 'status' } }, kiosk.t('volunteers.nowIn', { n: done.right.inRoom })),
        again,
        message,
      );
      again.focus();
    } finally {
      busy = false;
      button.disabled = false;
    }
  };
  return slot;
};
