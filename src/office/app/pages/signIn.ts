/** Sign-in: email and password; only ADMIN and CADASTRO (or a role that may add students) get in. */
import * as E from 'fp-ts/lib/Either.js';
import { field, h, replaceChildren } from '../../../client/dom.js';
import { statusOf } from '../../../client/transport.js';
import { mayUseOffice } from '../../../rules/authorization.js';
import { transport } from '../client.js';
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
          // A user who may not register children is signed out again at once (their session revoked).
          const signed = await transport.signIn(email.value, password.value, (next) =>
            mayUseOffice(next.user),
          );
          if (E.isRight(signed)) return done();
          const f = signed.left;
          shell.say(
            f.kind === 'not-accepted'
              ? t('signIn.forbidden')
              : f.kind === 'network'
                ? t('error.network')
                : statusOf(f) === 401
                  ? t('signIn.failed')
                  : t('signIn.error'),
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
