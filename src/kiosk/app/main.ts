/** The kiosk's start: device id, language, session, databases, then the first screen. */
import './styles.css';
import { accessOf } from './access.js';
import { adminRoute } from './adminModel.js';
import { createKiosk } from './kiosk.js';
import { header } from './screens/header.js';
import { homeScreen } from './screens/home.js';
import { guardSelfService, watchIdle } from './screens/selfService.js';
import { makeSession } from './session.js';
import { deviceId, loadLang } from './storage.js';
import { makeSyncEngine } from './sync.js';

const start = async (): Promise<void> => {
  const root = document.getElementById('app');
  if (root === null) throw new Error('index.html lost its #app element');
  const session = makeSession(deviceId());
  const sync = makeSyncEngine(session.fetch, () => {
    const auth = session.current();
    // A reports-only account has no roster to pull and nothing to push.
    return auth !== undefined && !auth.expired && accessOf(auth.user.roles).desk;
  });
  const kiosk = await createKiosk({
    root,
    lang: loadLang(),
    session,
    sync,
    header,
    guard: guardSelfService,
  });
  kiosk.show(homeScreen(kiosk, location.hash));
  // `#/admin/...` typed or bookmarked while the app is open.
  window.addEventListener('hashchange', () => {
    const wanted = adminRoute(location.hash);
    if (wanted !== undefined && kiosk.screenName() !== `admin-${wanted}`) {
      kiosk.show(homeScreen(kiosk, location.hash));
    }
  });
  watchIdle(kiosk);
  sync.start();
  // Registered after the first screen, so a slow install never delays the desk. Not in development:
  // Vite's dev server serves modules the worker must not cache.
  if (import.meta.env.PROD && 'serviceWorker' in navigator) {
    const base = import.meta.env.BASE_URL;
    await navigator.serviceWorker.register(`${base}sw.js`, { scope: base });
  }
};

start().catch((e: unknown) => {
  document.body.textContent = `Chamada: ${e instanceof Error ? e.message : String(e)}`;
});
