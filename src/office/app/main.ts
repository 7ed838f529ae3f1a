/**
 * The office (decision 0032): sign in, then the pages by hash (`#/children`, `#/children/new`,
 * `#/children/<id>`, `#/import`, `#/schedules`). Built like the kiosk: DOM from `h()` only, no inline
 * script or style, so the service's CSP holds unchanged.
 */
import './styles.css';
import { h, replaceChildren } from '../../client/dom.js';
import { mayReach } from '../../rules/authorization.js';
import { transport } from './client.js';
import { type Lang, loadLang, saveLang, translator } from './i18n.js';
import { adminTranslator } from './pages/adminText.js';
import { childFormPage } from './pages/childForm.js';
import { childPage } from './pages/childPage.js';
import { childrenPage } from './pages/children.js';
import { classesPage } from './pages/classes.js';
import { importPage } from './pages/import.js';
import { photoPage } from './pages/photo.js';
import { reportsPage } from './pages/reports.js';
import { schedulesPage } from './pages/schedules.js';
import { signInPage } from './pages/signIn.js';
import { usersPage } from './pages/users.js';
import type { Shell } from './shell.js';

const root = document.getElementById('app');
if (root === null) throw new Error('index.html lost its #app element');
let lang: Lang = loadLang();

const render = (): void => {
  const t = translator(lang);
  document.documentElement.lang = lang;
  document.title = t('appName');
  const main = h('main', { attrs: { id: 'main', tabindex: '-1' } });
  const message = h('p', { className: 'message', attrs: { role: 'status', 'aria-live': 'polite' } });
  const shell: Shell = {
    t,
    main,
    go: (hash) => {
      if (location.hash === hash) render();
      else location.hash = hash;
    },
    say: (text, kind = 'info') => {
      message.textContent = text;
      message.className = `message ${kind}`;
      message.setAttribute('role', kind === 'error' ? 'alert' : 'status');
    },
  };
  const net = h('p', { className: 'net', attrs: { 'data-test': 'net', role: 'status' } });
  const showNet = () => {
    net.textContent = navigator.onLine ? t('net.online') : t('net.offline');
    net.className = navigator.onLine ? 'net online' : 'net offline';
  };
  showNet();
  window.onoffline = showNet;
  window.ononline = showNet;
  const toggle = h(
    'button',
    {
      className: 'link',
      attrs: { type: 'button', lang: lang === 'en' ? 'pt-BR' : 'en' },
      onClick: () => {
        lang = lang === 'en' ? 'pt-BR' : 'en';
        saveLang(lang);
        render();
      },
    },
    t('nav.language'),
  );
  const auth = transport.current();
  const route = location.hash.replace(/^#\/?/, '');
  const link = (hash: string, label: string, current: boolean) =>
    h('a', { attrs: { href: hash, ...(current ? { 'aria-current': 'page' } : {}) } }, label);
  const header = h(
    'header',
    {},
    h('span', { className: 'brand' }, t('appName')),
    auth === undefined
      ? null
      : h(
          'nav',
          { attrs: { 'aria-label': t('appName') } },
          link('#/children', t('nav.children'), route.startsWith('children')),
          link('#/import', t('nav.import'), route === 'import'),
          link('#/schedules', t('nav.schedules'), route === 'schedules'),
          // Pages whose every call the user's roles would have refused are not offered (a coordinator
          // is not sent to the users page to read 403), a custom role's judged by what it grants.
          mayReach('admin', auth.user)
            ? link('#/users', adminTranslator()('nav.users'), route === 'users')
            : null,
          mayReach('relatorios', auth.user, 'reports')
            ? link('#/reports', adminTranslator()('nav.reports'), route === 'reports')
            : null,
          link('#/classes', adminTranslator()('nav.classes'), route === 'classes'),
          h(
            'button',
            {
              className: 'link',
              attrs: { type: 'button' },
              onClick: () => {
                void transport.signOut().then(() => shell.go('#/'));
              },
            },
            t('nav.signOut'),
          ),
        ),
    toggle,
  );
  replaceChildren(root, header, net, message, main);
  document.body.dataset.page = auth === undefined ? 'sign-in' : route.split('/')[0] || 'children';
  if (auth === undefined) signInPage(shell, () => shell.go('#/children'));
  else if (route === 'import') importPage(shell);
  else if (route === 'schedules') schedulesPage(shell);
  else if (route === 'users') usersPage(shell);
  else if (route === 'reports') reportsPage(shell);
  else if (route === 'classes') classesPage(shell);
  else if (route.startsWith('child/')) childPage(shell, route.slice('child/'.length));
  else if (route === 'children/new') childFormPage(shell, undefined);
  else if (/^children\/[^/]+\/photo$/.test(route)) photoPage(shell, route.split('/')[1] ?? '');
  else if (route.startsWith('children/')) childFormPage(shell, route.slice('children/'.length));
  else childrenPage(shell);
};

window.addEventListener('hashchange', render);
render();
