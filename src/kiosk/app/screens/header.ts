/**
 * The bar on every screen: where the kiosk is, online or not, what waits to sync, the way between the
 * desk and the admins' view, language, sign-out.
 */

import { h } from '../../../client/dom.js';
import { accessOf } from '../access.js';
import type { Kiosk } from '../kiosk.js';
import type { SyncEngineState } from '../sync.js';
import { adminScreen } from './admin.js';
import { selfServiceOn } from './selfService.js';
import { sessionsScreen } from './sessions.js';
import { signInScreen } from './signIn.js';

const statusText = (kiosk: Kiosk, s: SyncEngineState): string => {
  const parts = [
    s.syncing ? kiosk.t('status.syncing') : kiosk.t(s.online ? 'status.online' : 'status.offline'),
    s.pending > 0 ? kiosk.t('status.pending', { n: s.pending }) : kiosk.t('status.allSent'),
  ];
  if (s.refused.length > 0) parts.push(kiosk.t('status.rejected', { n: s.refused.length }));
  const pages = kiosk.pages.counts();
  if (pages.waiting > 0) parts.push(kiosk.t('status.pagesWaiting', { n: pages.waiting }));
  if (pages.refused > 0) parts.push(kiosk.t('status.pagesRefused', { n: pages.refused }));
  if (s.authProblem !== 'none' || kiosk.session.current()?.expired === true)
    parts.push(kiosk.t('status.signInAgain'));
  return parts.join(' · ');
};

/** To the admins' view from the desk, and back, for those who may open both. */
const nav = (kiosk: Kiosk): HTMLElement | null => {
  const user = kiosk.session.current();
  if (user === undefined || selfServiceOn()) return null;
  const access = accessOf(user.user.roles);
  const onAdmin = kiosk.screenName()?.startsWith('admin') === true;
  if (!onAdmin && access.reports) {
    return h(
      'button',
      { className: 'quiet', attrs: { type: 'button' }, onClick: () => kiosk.show(adminScreen('conflicts')) },
      kiosk.t('nav.admin'),
    );
  }
  if (onAdmin && access.desk) {
    return h(
      'button',
      { className: 'quiet', attrs: { type: 'button' }, onClick: () => kiosk.show(sessionsScreen) },
      kiosk.t('nav.kiosk'),
    );
  }
  return null;
};

export const header = (kiosk: Kiosk, s: SyncEngineState): HTMLElement => {
  // Self-service: a family gets the status and the language, no account or navigation (0052).
  const user = selfServiceOn() ? undefined : kiosk.session.current();
  const notice = h('span', { className: 'header-notice', attrs: { role: 'alert' } });
  const signOut = async () => {
    await kiosk.sync.recount();
    if (kiosk.sync.status().pending > 0) {
      notice.textContent = kiosk.t('signOut.pending');
      return;
    }
    await kiosk.session.signOut();
    kiosk.show(signInScreen);
  };
  return h(
    'header',
    { className: 'topbar' },
    h('span', { className: 'brand' }, `${kiosk.t('appName')} · ${kiosk.t('kiosk')}`),
    h(
      'span',
      {
        className: `sync-status ${s.online ? 'is-online' : 'is-offline'}`,
        attrs: {
          'data-test': 'sync-status',
          'data-online': String(s.online),
          'data-pending': String(s.pending),
          'data-syncing': String(s.syncing),
          'data-pages-waiting': String(kiosk.pages.counts().waiting),
        },
      },
      h('span', { className: 'dot', attrs: { 'aria-hidden': 'true' } }),
      statusText(kiosk, s),
    ),
    notice,
    h(
      'span',
      { className: 'topbar-actions' },
      nav(kiosk),
      // An ended session with events waiting cannot sign out (they would be lost), so this is the way
      // back: the sign-in screen keeps the user, and only the same user may carry the outbox (0020).
      user?.expired === true
        ? h(
            'button',
            {
              className: 'quiet',
              attrs: { type: 'button', 'data-test': 'sign-in-again' },
              onClick: () => kiosk.show(signInScreen),
            },
            kiosk.t('header.signInAgain'),
          )
        : null,
      h(
        'button',
        {
          className: 'quiet',
          attrs: { type: 'button' },
          onClick: () => kiosk.setLang(kiosk.lang() === 'pt-BR' ? 'en' : 'pt-BR'),
        },
        kiosk.t('header.otherLanguage'),
      ),
      user === undefined
        ? null
        : h(
            'button',
            { className: 'quiet', attrs: { type: 'button' }, onClick: () => void signOut() },
            `${kiosk.t('header.signOut')} (${user.user.displayName})`,
          ),
    ),
  );
};
