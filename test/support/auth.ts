/** Sign-in helpers for JWT-mode black-box tests. */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { type ServiceHarness, useService } from './harness.js';
import { inHooks, type Scope } from './hooks.js';
import { call, type HttpResult } from './http.js';
import { DEVICE_ID, mutationHeaders, type TestServiceOptions } from './testService.js';

export const TEST_JWT_SECRET = 'a-test-jwt-secret-that-is-long-enough-0123456789';
export const ADMIN_EMAIL = 'admin@chamada.test';
export const ADMIN_PASSWORD = 'correct horse battery staple';

export const jwtEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
  AUTH_MODE: 'jwt',
  JWT_SECRET: TEST_JWT_SECRET,
  SEED_ADMIN_EMAIL: ADMIN_EMAIL,
  SEED_ADMIN_PASSWORD: ADMIN_PASSWORD,
  ...extra,
});

/**
 * `useService` in JWT mode (`options.env` added to `jwtEnv()`), its first ADMIN seeded through
 * `POST /_seed` right after each start; sign in with `login(h.url, ADMIN_EMAIL, ADMIN_PASSWORD)`.
 */
export const useJwtService = (
  options: TestServiceOptions | (() => TestServiceOptions) = {},
  scope: Scope = 'file',
): ServiceHarness => {
  const h = useService(() => {
    const chosen = typeof options === 'function' ? options() : options;
    return { ...chosen, env: jwtEnv(chosen.env) };
  }, scope);
  inHooks(
    scope,
    () => seed(h.url),
    async () => {},
  );
  return h;
};

const Tokens = t.type({
  accessToken: t.string,
  csrfToken: t.string,
  sessionId: t.string,
  expiresAt: t.string,
  user: t.type({ userId: t.string, email: t.string, role: t.string, permissions: t.array(t.string) }),
});
const WithRefresh = t.intersection([Tokens, t.type({ refreshToken: t.string })]);
export type Tokens = t.TypeOf<typeof Tokens>;
export type TokensWithRefresh = t.TypeOf<typeof WithRefresh>;

export const decodeTokens = (json: unknown): TokensWithRefresh => {
  const decoded = WithRefresh.decode(json);
  if (E.isLeft(decoded)) throw new Error(`not a token pair: ${JSON.stringify(json)}`);
  return decoded.right;
};

export const jsonPost = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

export const seed = async (url: string): Promise<void> => {
  const r = await call(`${url}/api/v1/_seed`, { method: 'POST' });
  if (r.status !== 200) throw new Error(`seed failed: ${r.status} ${r.text}`);
};

/** `POST /auth/login` with `email` and `password`, the answer as it came. */
export const loginAttempt = (url: string, email: string, password: string): Promise<HttpResult> =>
  call(`${url}/api/v1/auth/login`, jsonPost({ email, password }));

export const login = async (url: string, email: string, password: string): Promise<TokensWithRefresh> => {
  const r = await loginAttempt(url, email, password);
  if (r.status !== 200) throw new Error(`login failed: ${r.status} ${r.text}`);
  return decodeTokens(r.json);
};

export const bearer = (accessToken: string): Record<string, string> => ({
  Authorization: `Bearer ${accessToken}`,
  'X-Device-Id': DEVICE_ID,
});

export const bearerMutation = (accessToken: string): Record<string, string> => mutationHeaders(accessToken);

const Created = t.type({ userId: t.string });

/** Creates a user as `adminToken` and returns its id. */
export const createUser = async (
  url: string,
  adminToken: string,
  user: { email: string; displayName: string; roles: string[]; password: string },
): Promise<string> => {
  const r = await call(`${url}/api/v1/users`, {
    method: 'POST',
    headers: mutationHeaders(adminToken),
    body: JSON.stringify(user),
  });
  const decoded = Created.decode(r.json);
  if (r.status !== 201 || E.isLeft(decoded)) throw new Error(`create user failed: ${r.status} ${r.text}`);
  return decoded.right.userId;
};

/** Creates a user as `adminToken`, then signs in as it: its id and its token pair. */
export const createAndSignIn = async (
  url: string,
  adminToken: string,
  user: { email: string; displayName: string; roles: string[]; password: string },
): Promise<{ readonly userId: string; readonly tokens: TokensWithRefresh }> => {
  const userId = await createUser(url, adminToken, user);
  return { userId, tokens: await login(url, user.email, user.password) };
};
