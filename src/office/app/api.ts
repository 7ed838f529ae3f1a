/**
 * The office's REST calls: sign in (bearer mode), one refresh on a 401, and every other call with
 * the access token, the device id and, for mutations, a fresh Idempotency-Key. Answers are decoded by
 * the callers with tolerant codecs; a failure is a value, never a throw.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { PermissionC } from '../../domain/principal.js';

const AUTH_KEY = 'chamada-office-auth';
const DEVICE_KEY = 'chamada-office-device';

const Auth = t.type({
  accessToken: t.string,
  refreshToken: t.string,
  // What the roles grant, from the login and refresh answers: the office offers pages by it.
  user: t.type({ displayName: t.string, roles: t.array(t.string), permissions: t.array(PermissionC) }),
});
export type Auth = t.TypeOf<typeof Auth>;

export const deviceId = (): string => {
  const known = localStorage.getItem(DEVICE_KEY);
  if (known !== null) return known;
  const id = crypto.randomUUID();
  localStorage.setItem(DEVICE_KEY, id);
  return id;
};

const readJson = (text: string | null): unknown => {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** Kept for the tab only (sessionStorage): closing the office's tab signs out. */
export const currentAuth = (): Auth | undefined => {
  const decoded = Auth.decode(readJson(sessionStorage.getItem(AUTH_KEY)));
  return E.isRight(decoded) ? decoded.right : undefined;
};
const saveAuth = (auth: Auth | undefined): void => {
  if (auth === undefined) sessionStorage.removeItem(AUTH_KEY);
  else sessionStorage.setItem(AUTH_KEY, JSON.stringify(auth));
};

export interface Answer {
  /** 0 when the server could not be reached. */
  readonly status: number;
  readonly json: unknown;
}

const Envelope = t.type({ error: t.type({ code: t.string, message: t.string }) });
export const errorMessage = (a: Answer): string => {
  const d = Envelope.decode(a.json);
  return E.isRight(d) ? d.right.error.message : `HTTP ${a.status}`;
};

const send = async (path: string, init: RequestInit): Promise<Answer> => {
  try {
    const res = await fetch(path, { ...init, cache: 'no-store' });
    return { status: res.status, json: readJson(await res.text()) };
  } catch {
    return { status: 0, json: undefined };
  }
};

export const signIn = async (email: string, password: string): Promise<Answer> => {
  const a = await send('/api/v1/auth/login', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Device-Id': deviceId() },
    body: JSON.stringify({ email, password }),
  });
  const auth = Auth.decode(a.json);
  if (a.status === 200 && E.isRight(auth)) saveAuth(auth.right);
  return a;
};

export const signOut = async (): Promise<void> => {
  const auth = currentAuth();
  saveAuth(undefined);
  if (auth !== undefined)
    await send('/api/v1/auth/revoke', {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${auth.accessToken}`,
        'X-Device-Id': deviceId(),
        'Idempotency-Key': crypto.randomUUID(),
      },
    });
};

const refreshOnce = async (auth: Auth): Promise<Auth | undefined> => {
  const a = await send('/api/v1/auth/refresh', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Device-Id': deviceId() },
    body: JSON.stringify({ refreshToken: auth.refreshToken }),
  });
  // The answer names the user again: a role changed since sign-in shows in the pages offered.
  const next = Auth.decode(a.json);
  if (a.status !== 200 || E.isLeft(next)) return undefined;
  const renewed = next.right;
  saveAuth(renewed);
  return renewed;
};

/**
 * Runs `attempt` with the signed-in tokens; a 401 refreshes them once and runs it again (the caller
 * keeps one Idempotency-Key across both, so a retry never does a thing twice). A refresh that fails
 * signs out. Every authenticated call of the office goes through here.
 */
const authorised = async <R extends { readonly status: number }>(
  attempt: (auth: Auth) => Promise<R>,
  signedOut: R,
): Promise<R> => {
  const auth = currentAuth();
  if (auth === undefined) return signedOut;
  const first = await attempt(auth);
  if (first.status !== 401) return first;
  const renewed = await refreshOnce(auth);
  if (renewed === undefined) {
    saveAuth(undefined);
    return first;
  }
  return attempt(renewed);
};

/** The headers of every authenticated call; the Idempotency-Key on mutations only. */
const authHeaders = (auth: Auth, method: string, key: string): Record<string, string> => ({
  Authorization: `Bearer ${auth.accessToken}`,
  'X-Device-Id': deviceId(),
  ...(method === 'GET' ? {} : { 'Idempotency-Key': key }),
});

/** An authenticated call. `body` is JSON unless it is a File (an upload, sent as `text/csv`). */
export const apiCall = async (method: string, path: string, body?: unknown): Promise<Answer> => {
  const key = crypto.randomUUID();
  return authorised(
    (auth) => {
      const headers = authHeaders(auth, method, key);
      if (body instanceof File) headers['Content-Type'] = 'text/csv';
      else if (body !== undefined) headers['Content-Type'] = 'application/json';
      return send(path, {
        method,
        headers,
        ...(body === undefined ? {} : { body: body instanceof File ? body : JSON.stringify(body) }),
      });
    },
    { status: 401, json: undefined },
  );
};

/**
 * A GET whose answer is a file (a report's CSV): the body as text with its status. The text is handed
 * to a download as is, never parsed here.
 */
export const apiText = (path: string, accept: string): Promise<{ status: number; text: string }> =>
  authorised(
    async (auth) => {
      try {
        const res = await fetch(path, {
          cache: 'no-store',
          headers: { ...authHeaders(auth, 'GET', ''), Accept: accept },
        });
        return { status: res.status, text: await res.text() };
      } catch {
        return { status: 0, text: '' };
      }
    },
    { status: 401, text: '' },
  );

export interface BytesAnswer extends Answer {
  /** The body's bytes when the answer is not JSON (an image). */
  readonly bytes: Uint8Array<ArrayBuffer> | undefined;
}

/** An authenticated call whose body is raw bytes of a given type (a photo upload), or whose answer may be bytes (reading a photo). */
export const apiBytes = async (
  method: 'GET' | 'PUT',
  path: string,
  upload?: { readonly body: Blob; readonly type: string },
): Promise<BytesAnswer> => {
  const key = crypto.randomUUID();
  return authorised(
    async (auth) => {
      const headers = authHeaders(auth, method, key);
      if (upload !== undefined) headers['Content-Type'] = upload.type;
      try {
        const res = await fetch(path, {
          method,
          headers,
          cache: 'no-store',
          ...(upload === undefined ? {} : { body: upload.body }),
        });
        const json = (res.headers.get('content-type') ?? '').startsWith('application/json');
        if (json) return { status: res.status, json: readJson(await res.text()), bytes: undefined };
        return { status: res.status, json: undefined, bytes: new Uint8Array(await res.arrayBuffer()) };
      } catch {
        return { status: 0, json: undefined, bytes: undefined };
      }
    },
    { status: 401, json: undefined, bytes: undefined },
  );
};
