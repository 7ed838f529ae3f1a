/**
 * The signed-in user of this tablet and the fetch that every call to the server goes through: bearer
 * token and X-Device-Id added, the access token refreshed once when it is about to expire or a call
 * answers 401. A refused refresh, or a session past its end (SESSION_TTL from sign-in, which refreshing
 * never extends), marks the session expired but keeps the user: the kiosk goes on working offline, and
 * what it records waits until the same user signs in again (spec: unsynced actions stay queued until
 * re-authentication).
 */
import * as E from 'fp-ts/lib/Either.js';
import * as api from './api.js';
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
  ): Promise<E.Either<api.ApiFailure | 'refused_other_user', AuthState>>;
  signOut(): Promise<void>;
  readonly fetch: typeof fetch;
  onChange(listener: () => void): void;
}

export const makeSession = (deviceId: string): Session => {
  let auth = loadAuth();
  const listeners: Array<() => void> = [];
  const set = (next: AuthState | undefined) => {
    auth = next;
    saveAuth(next);
    for (const l of listeners) l();
  };

  let refreshing: Promise<boolean> | undefined;
  // One refresh at a time: a refresh token presented twice is taken for a stolen one (0013).
  const refreshOnce = (): Promise<boolean> => {
    refreshing ??= (async () => {
      const before = auth;
      if (before === undefined || before.expired) return false;
      const next = await api.refresh(before.refreshToken);
      if (E.isRight(next)) {
        set(next.right);
        return true;
      }
      if (next.left === 'unauthorized') set({ ...before, expired: true });
      return false;
    })().finally(() => {
      refreshing = undefined;
    });
    return refreshing;
  };

  const send = (input: RequestInfo | URL, init: RequestInit | undefined, token: string) => {
    const headers = new Headers(init?.headers);
    headers.set('Authorization', `Bearer ${token}`);
    headers.set('X-Device-Id', deviceId);
    return fetch(input, { ...init, headers });
  };

  const notSignedIn = () =>
    new Response(JSON.stringify({ error: 'unauthorized', reason: 'not signed in' }), {
      status: 401,
      headers: { 'Content-Type': 'application/json' },
    });

  const authedFetch: typeof fetch = async (input, init) => {
    const usable = () => (auth === undefined || auth.expired ? undefined : auth);
    const before = usable();
    if (before === undefined) return notSignedIn();
    const plan = refreshPlan(before, Date.now());
    if (plan === 'session-ended') {
      // No refresh can help: ask for a sign-in, and send nothing as a session the server has ended.
      set({ ...before, expired: true });
      return notSignedIn();
    }
    if (plan === 'refresh-ahead') await refreshOnce();
    const first = await send(input, init, usable()?.accessToken ?? before.accessToken);
    if (first.status !== 401 || !(await refreshOnce())) return first;
    return send(input, init, usable()?.accessToken ?? before.accessToken);
  };

  return {
    deviceId,
    current: () => auth,
    async signIn(email, password, accept) {
      const signedIn = await api.login(email, password, deviceId);
      if (E.isLeft(signedIn)) return signedIn;
      if (!accept(signedIn.right)) {
        await api.revoke(signedIn.right, deviceId);
        return E.left('refused_other_user');
      }
      set(signedIn.right);
      return signedIn;
    },
    async signOut() {
      if (auth !== undefined && !auth.expired) await api.revoke(auth, deviceId);
      set(undefined);
    },
    fetch: authedFetch,
    onChange: (listener) => {
      listeners.push(listener);
    },
  };
};
