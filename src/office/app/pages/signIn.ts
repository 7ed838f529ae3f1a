/** Sign-in: email and password; only ADMIN and CADASTRO (or a role that may add students) get in. */
import { field, h, replaceChildren } from '../../../client/dom.js';
import { mayUseOffice } from '../../../rules/authorization.js';
import { currentAuth, signIn, signOut } from '../api.js';
import type { Shell } from '../shell.js';

export const signInPage = (shell: Shell, done: () => void): void => {
  const { t } = shell;
  const email = h('input', { attrs: { type: 'email', autocomplete: 'username', required: '' } });
  const password = h('input', {
    attrs: { type: 'password', autocomplete: 'current-password', required: '' },
  });
  const form = h(
    'form',
    {
      onSubmit: (e) => {
        e.preventDefault();
        void (async () => {
          const a = await signIn(email.value, password.value);
          if (a.status === 200) {
            const user = currentAuth()?.user;
            if (user !== undefined && mayUseOffice(user)) return done();
            await signOut();
            return shell.say(t('signIn.forbidden'), 'error');
          }
          shell.say(
            a.status === 0 ? t('error.network') : a.status === 401 ? t('signIn.failed') : t('signIn.error'),
            'error',
          );
        })();
      },
    },
    field(t('signIn.email'), email),
    field(t('signIn.password'), password),
    h('button', { attrs: { type: 'submit' } }, t('signIn.submit')),
  );
  replaceChildren(shell.main, h('h1', {}, t('signIn.title')), form);
  email.focus();
};
