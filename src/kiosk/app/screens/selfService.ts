/**
 * Self-service mode (decision 0052): the start screen a family sees (scan the pass, or type the phone),
 * the volunteer's way out (signing in with their own account), the idle reset, and the guard that
 * keeps every other screen out while the mode is on. The tablet stays signed in as the ADMIN who
 * turned the mode on: the family's check-ins sync as theirs, as at a staffed desk.
 */
import * as E from 'fp-ts/lib/Either.js';
import { field, h, leaveButton } from '../../../client/dom.js';
import { accessOf } from '../access.js';
import type { MessageKey } from '../i18n.js';
import type { Kiosk, Screen } from '../kiosk.js';
import { idleExpired, selfServiceAllows } from '../selfService.js';
import { loadSelfService, SELF_SERVICE_IDLE_SECONDS, saveSelfService } from '../storage.js';
import { type FamilyOrigin, openFamilyFrom } from './family.js';
import { familyLookupScreen } from './familyLookup.js';
import { openScanOverlay } from './scanOverlay.js';
import { sessionsScreen } from './sessions.js';
import { credentialInputs, mayCarryOutbox } from './signIn.js';

export const selfServiceOrigin: FamilyOrigin = { selfService: true, back: () => selfServiceScreen };

export const selfServiceOn = (): boolean => loadSelfService() !== undefined;

const startRender = (kiosk: Kiosk): HTMLElement => {
  return h(
    'section',
    { className: 'self-start' },
    h('h1', {}, kiosk.t('self.title')),
    h(
      'div',
      { className: 'self-choices' },
      h(
        'button',
        {
          className: 'primary self-choice',
          attrs: { type: 'button', 'data-test': 'self-scan' },
          onClick: () => openScanOverlay(kiosk, openFamilyFrom(kiosk, selfServiceOrigin)),
        },
        kiosk.t('self.scan'),
      ),
      h(
        'button',
        {
          className: 'primary self-choice',
          attrs: { type: 'button', 'data-test': 'self-phone' },
          onClick: () => kiosk.show(familyLookupScreen(selfServiceOrigin)),
        },
        kiosk.t('self.phone'),
      ),
    ),
    h(
      'button',
      {
        className: 'quiet self-volunteer',
        attrs: { type: 'button', 'data-test': 'self-volunteer' },
        onClick: () => kiosk.show(selfServiceExitScreen),
      },
      kiosk.t('self.volunteer'),
    ),
  );
};

export const selfServiceScreen: Screen = {
  name: 'self-service',
  render: startRender,
  update: () => undefined,
};

const EXIT_FAILURES: Readonly<Record<string, MessageKey>> = {
  network: 'self.exitOffline',
  unauthorized: 'signIn.failed',
  rate_limited: 'signIn.rateLimited',
  forbidden: 'signIn.forbidden',
};

/**
 * A volunteer leaves the mode by signing in with their own account, online (a tablet holds nothing to
 * check a password against offline). An account without the desk may not; another user while this
 * tablet's events wait to be sent may not either (they are sent as whoever is signed in: 0020).
 */
const exitRender = (kiosk: Kiosk): HTMLElement => {
  const { email, password, submit, message } = credentialInputs(kiosk);
  const onSubmit = async (event: SubmitEvent) => {
    event.preventDefault();
    message.textContent = '';
    submit.disabled = true;
    try {
      const before = kiosk.session.current();
      await kiosk.sync.recount();
      const waiting = kiosk.sync.status().pending;
      const signedIn = await kiosk.session.signIn(
        email.value.trim(),
        password.value,
        (next) => accessOf(next.user.roles).desk && mayCarryOutbox(before, waiting, next),
      );
      if (E.isLeft(signedIn)) {
        message.textContent =
          signedIn.left === 'refused_other_user'
            ? before !== undefined && waiting > 0
              ? kiosk.t('signIn.otherUser', { name: before.user.displayName })
              : kiosk.t('signIn.forbidden')
            : kiosk.t(EXIT_FAILURES[signedIn.left] ?? 'signIn.error');
        return;
      }
      saveSelfService(undefined);
      kiosk.show(sessionsScreen);
    } finally {
      submit.disabled = false;
    }
  };
  return h(
    'section',
    { className: 'sign-in self-exit' },
    h('h1', {}, kiosk.t('self.exitTitle')),
    h('p', {}, kiosk.t('self.exitHint')),
    h(
      'form',
      { onSubmit: (e) => void onSubmit(e) },
      field(kiosk.t('signIn.email'), email),
      field(kiosk.t('signIn.password'), password),
      submit,
      message,
      h(
        'div',
        { className: 'actions' },
        leaveButton(kiosk.t('self.cancel'), () => kiosk.show(selfServiceScreen)),
      ),
    ),
  );
};

export const selfServiceExitScreen: Screen = { name: 'self-service-exit', render: exitRender };

/** Turns the mode on for this tablet (an ADMIN, on the admins' view) and opens its start. */
export const startSelfService = (kiosk: Kiosk): void => {
  saveSelfService({ idleSeconds: SELF_SERVICE_IDLE_SECONDS });
  kiosk.show(selfServiceScreen);
};

/**
 * While the mode is on, the screen asked for if the mode allows it, else its start: whatever asks for
 * another screen (a typed `#/admin`, a link, a bug), a family never reaches it.
 */
export const guardSelfService = (next: Screen): Screen => {
  const on = selfServiceOn();
  // The print styles and the header read it: no printer choice or account buttons for a family.
  document.body.dataset.selfService = String(on);
  return on && !selfServiceAllows(next.name) ? selfServiceScreen : next;
};

/**
 * Back to the start after a screen sits untouched for the mode's idle (30 s unless set otherwise on
 * this tablet): a family that walks away leaves nothing of theirs on the screen.
 */
export const watchIdle = (kiosk: Kiosk): void => {
  let lastTouch = Date.now();
  const touched = () => {
    lastTouch = Date.now();
  };
  for (const type of ['pointerdown', 'keydown', 'input', 'touchstart'] as const)
    document.addEventListener(type, touched, { capture: true, passive: true });
  window.setInterval(() => {
    const mode = loadSelfService();
    if (mode === undefined) return;
    const dialogs = [...document.querySelectorAll('dialog')].filter((d) => d.open);
    if (idleExpired(kiosk.screenName(), dialogs.length > 0, lastTouch, Date.now(), mode.idleSeconds)) {
      touched();
      // A scan left open goes too (closing it turns the camera off).
      for (const dialog of dialogs) dialog.close();
      kiosk.show(selfServiceScreen);
    }
  }, 500);
};
