/**
 * The signed-in user of this tablet and the fetch that every call to the server goes through: the
 * shared transport (src/client/transport.ts) with what is the kiosk's own. The sign-in is kept in
 * localStorage across restarts. The access token is refreshed ahead when it is about to expire
 * (`sessionEnd.ts`). A refused refresh, or a session past its end (SESSION_TTL from sign-in, which
 * refreshing never extends), marks the session expired but keeps the user: the kiosk goes on working
 * offline, and what it records waits until the same user signs in again (spec: unsynced actions stay
 * queued until re-authentication).
 */
import * as E from 'fp-ts/lib/Either.js';
import { createTransport, type SignInPlan, type Transport } from '../../client/transport.js';
import { type ApiFailure, signInFailure } from './api.js';
import { refreshPlan } from './sessionEnd.js';
import { type AuthState, loadAuth, saveAuth } from './storage.js';

export interface Session {
  readonly deviceId: string;
  current(): AuthState | undefined;
  /** `accept` may refuse the new user (their session is then revoked at once). */
  signIn(
    email: string,
    password: string,
    accept: (next: AuthState) => boolean,
  ): Promise<E.Either<ApiFailure | 'refused_other_user', AuthState>>;
  signOut(): Promise<void>;
  readonly fetch: typeof fetch;
  /** The shared client's calls (`apiOf(session)`: typed endpoints on the domain codecs, 0050). */
  readonly send: Transport<AuthState>['send'];
  onChange(listener: () => void): void;
}

const PLANS = { none: 'use', 'refresh-ahead': 'refresh-first', 'session-ended': 'ended' } as const;

export const makeSession = (deviceId: string): Session => {
  const transport = createTransport<AuthState>({
    // Called unbound, as the browser's fetch may not be.
    fetch: (input, init) => fetch(input, init),
    deviceId,
    load: loadAuth,
    save: saveAuth,
    keep: (a) => ({
      accessToken: a.accessToken,
      refreshToken: a.refreshToken,
      accessTokenExpiresAt: a.accessTokenExpiresAt,
      sessionExpiresAt: a.sessionExpiresAt,
      user: {
        userId: a.user.userId,
        email: a.user.email,
        displayName: a.user.displayName,
        roles: a.user.roles,
      },
      expired: false,
    }),
    refused: (auth) => ({ ...auth, expired: true }),
    plan: (auth, nowMs): SignInPlan => (auth.expired ? 'unusable' : PLANS[refreshPlan(auth, nowMs)]),
  });
  return {
    deviceId,
    current: transport.current,
    signIn: async (email, password, accept) =>
      E.mapLeft(signInFailure)(await transport.signIn(email, password, accept)),
    signOut: transport.signOut,
    fetch: transport.fetch,
    send: transport.send,
    onChange: transport.onChange,
  };
};
