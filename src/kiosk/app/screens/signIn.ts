/**
 * Sign-in (online, once): tokens, the first pull of the roster and the check-in configuration. After
 * it the kiosk opens straight on the sessions, network or not.
 */
import * as E from 'fp-ts/lib/Either.js';
import { field, h } from '../../../client/dom.js';
import { accessOf } from '../access.js';
import { checkinConfig } from '../api.js';
import type { MessageKey } from '../i18n.js';
import type { Kiosk, Screen } from '../kiosk.js';
import type { AuthState } from '../storage.js';
import { adminScreen } from './admin.js';
import { homeScreen } from './home.js';

const FAILURE_MESSAGES: Readonly<Record<string, MessageKey>> = {
  network: 'signIn.offline',
  unauthorized: 'signIn.failed',
  rate_limited: 'signIn.rateLimited',
  forbidden: 'signIn.forbidden',
};

/** The sign-in form's parts, shared with self-service's way out (`selfService.ts`). */
export const credentialInputs = (kiosk: Kiosk) => ({
  email: h('input', {
    attrs: { type: 'email', name: 'email', autocomplete: 'username', required: '', inputmode: 'email' },
  }),
  password: h('input', {
    attrs: { type: 'password', name: 'password', autocomplete: 'current-password', required: '' },
  }),
  submit: h('button', { className: 'primary big', attrs: { type: 'submit' } }, kiosk.t('signIn.submit')),
  message: h('p', { className: 'form-error', attrs: { role: 'alert' } }),
});

/** Events are sent as whoever is signed in: while some wait, only their user may sign in (0020). */
export const mayCarryOutbox = (before: AuthState | undefined, waiting: number, next: AuthState): boolean =>
  before === undefined || waiting === 0 || before.user.userId === next.user.userId;

const render = (kiosk: Kiosk): HTMLElement => {
  const { email, password, submit, message } = credentialInputs(kiosk);
  const busy = (text: MessageKey | null) => {
    submit.disabled = text !== null;
    submit.textContent = kiosk.t(text ?? 'signIn.submit');
  };

  const onSubmit = async (event: SubmitEvent) => {
    event.preventDefault();
    message.textContent = '';
    busy('signIn.busy');
    const before = kiosk.session.current();
    await kiosk.sync.recount();
    const waiting = kiosk.sync.status().pending;
    const signedIn = await kiosk.session.signIn(email.value.trim(), password.value, (next) =>
      mayCarryOutbox(before, waiting, next),
    );
    if (E.isLeft(signedIn)) {
      busy(null);
      message.textContent =
        signedIn.left === 'refused_other_user' && before !== undefined
          ? kiosk.t('signIn.otherUser', { name: before.user.displayName })
          : kiosk.t(FAILURE_MESSAGES[signedIn.left] ?? 'signIn.error');
      return;
    }
    const access = accessOf(signedIn.right.user.roles);
    const refuse = async () => {
      await kiosk.session.signOut();
      busy(null);
      message.textContent = kiosk.t('signIn.forbidden');
    };
    if (!access.desk) {
      // Reports only (RELATORIOS): no roster, no outbox, straight to the admins' view.
      if (access.reports) kiosk.show(homeScreen(kiosk, location.hash));
      else await refuse();
      return;
    }
    busy('signIn.loading');
    const synced = await kiosk.sync.syncNow();
    if (synced.authProblem === 'forbidden') {
      if (access.reports) kiosk.show(adminScreen('conflicts'));
      else await refuse();
      return;
    }
    const config = await checkinConfig(kiosk.session.fetch);
    if (E.isRight(config)) kiosk.setConfig(config.right);
    await kiosk.reloadRoster();
    kiosk.show(homeScreen(kiosk, location.hash));
  };

  return h(
    'section',
    { className: 'sign-in' },
    h('h1', {}, kiosk.t('signIn.title')),
    h(
      'form',
      { onSubmit: (e) => void onSubmit(e) },
      field(kiosk.t('signIn.email'), email),
      field(kiosk.t('signIn.password'), password),
      submit,
      message,
    ),
  );
};

export const signInScreen: Screen = { name: 'sign-in', render };
