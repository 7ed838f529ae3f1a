/**
 * The browser client's transport against a fake fetch: a scripted server that records every request
 * and answers as the real one does (TokenPair on login and refresh, the error envelope otherwise).
 * Refreshes are held open on a latch, so calls can be made to meet their 401s while one is in flight.
 */
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import {
  createTransport,
  type Failure,
  json,
  type SignInPlan,
  type TokenAnswer,
  type Tokens,
  type TransportOptions,
  validationDetails,
} from '../../src/client/transport.js';
import type { ErrorCode } from '../../src/domain/errors.js';

const UUID = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const DEVICE = UUID(900);

interface Seen {
  readonly method: string;
  readonly path: string;
  readonly headers: Headers;
  readonly body: string | undefined;
}

interface Kept extends Tokens {
  readonly user: string;
  readonly expired?: boolean;
}

const tokenPair = (n: number) => ({
  accessToken: `access-${n}`,
  refreshToken: `refresh-token-number-${n}`,
  csrfToken: UUID(n),
  sessionId: UUID(n),
  expiresAt: '2026-06-01T10:15:00.000Z',
  accessTokenExpiresAt: '2026-06-01T10:15:00.000Z',
  sessionExpiresAt: '2026-06-01T22:00:00.000Z',
  refreshTokenExpiresAt: '2026-06-08T10:00:00.000Z',
  user: {
    userId: UUID(1),
    email: 'ana@example.org',
    displayName: 'Ana',
    role: 'ADMIN',
    roles: ['ADMIN'],
    primaryRole: 'ADMIN',
    permissions: ['reports'],
  },
});

const envelope = (code: string, message: string) => ({
  error: { code, message, correlationId: UUID(777) },
});

const answer = (status: number, body: unknown): Response =>
  Response.json(body, { status, headers: { 'Content-Type': 'application/json' } });

/** A promise opened by the test: what waits on it goes on only when the test says. */
const latch = () => {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
};

/**
 * The server: the kept sign-in is generation 1. `expire()` makes its access token stale (the refresh
 * token still good), `revokeAll()` both. A refresh with the current refresh token issues the next
 * generation (after `refreshGate`, if set), so a refresh token presented twice is refused.
 */
const fakeServer = () => {
  const seen: Seen[] = [];
  const state = {
    generation: 1,
    validAccess: new Set(['access-1']),
    validRefresh: tokenPair(1).refreshToken as string | undefined,
    refreshGate: undefined as Promise<void> | undefined,
    refreshAnswer: undefined as (() => Response) | undefined,
    handler: (_s: Seen): Response => answer(200, { ok: true }),
  };
  const issue = () => {
    state.generation += 1;
    const pair = tokenPair(state.generation);
    state.validAccess = new Set([pair.accessToken]);
    state.validRefresh = pair.refreshToken;
    return pair;
  };
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const path = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const s: Seen = {
      method: init?.method ?? 'GET',
      path,
      headers: new Headers(init?.headers),
      body: typeof init?.body === 'string' ? init.body : undefined,
    };
    seen.push(s);
    if (path === '/api/v1/auth/login') return answer(200, { ...issue(), addedLater: 'a newer field' });
    if (path === '/api/v1/auth/revoke') return answer(200, { revoked: true, sessionId: UUID(1) });
    if (path === '/api/v1/auth/refresh') {
      await state.refreshGate;
      if (state.refreshAnswer !== undefined) return state.refreshAnswer();
      const presented: unknown = JSON.parse(s.body ?? '{}').refreshToken;
      if (presented !== state.validRefresh) return answer(401, envelope('COMPROMISED_SESSION', 'reused'));
      return answer(200, issue());
    }
    const bearer = s.headers.get('Authorization')?.replace(/^Bearer /, '') ?? '';
    if (!state.validAccess.has(bearer))
      return answer(401, envelope('UNAUTHORIZED', 'Authentication is missing or invalid.'));
    return state.handler(s);
  };
  return {
    seen,
    state,
    fetch,
    calls: (path: string) => seen.filter((x) => x.path === path),
    expire: () => state.validAccess.clear(),
    revokeAll: () => {
      state.validAccess.clear();
      state.validRefresh = undefined;
    },
  };
};

/** Lets the calls in flight run up to their next wait. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

const Ok = t.type({ ok: t.boolean });

const transportOn = (
  server: ReturnType<typeof fakeServer>,
  kept: Kept | undefined,
  extra: Partial<TransportOptions<Kept>> = {},
) => {
  let stored = kept;
  let keys = 0;
  const transport = createTransport<Kept>({
    fetch: server.fetch,
    deviceId: DEVICE,
    load: () => stored,
    save: (next) => {
      stored = next;
    },
    keep: (a: TokenAnswer) => ({
      accessToken: a.accessToken,
      refreshToken: a.refreshToken,
      user: a.user.email,
    }),
    newKey: () => {
      keys += 1;
      return `key-${keys}`;
    },
    ...extra,
  });
  return { transport, stored: () => stored };
};

const signedIn = (n: number): Kept => ({
  accessToken: `access-${n}`,
  refreshToken: tokenPair(n).refreshToken,
  user: 'ana@example.org',
});

const get = { method: 'GET', path: '/api/v1/classes', read: json(Ok) } as const;
const post = {
  method: 'POST',
  path: '/api/v1/classes',
  body: { json: { name: 'Turma' } },
  read: json(Ok),
} as const;

describe('client: the transport', () => {
  it('sends the bearer token and the device id with every call, and a key with mutations only', async () => {
    const server = fakeServer();
    const { transport } = transportOn(server, signedIn(1));
    expect(await transport.send(get)).to.deep.equal(E.right({ ok: true }));
    expect(await transport.send(post)).to.deep.equal(E.right({ ok: true }));
    expect(await transport.send(post)).to.deep.equal(E.right({ ok: true }));
    const [read, first, second] = server.seen;
    for (const s of [read, first, second]) {
      expect(s?.headers.get('Authorization')).to.equal('Bearer access-1');
      expect(s?.headers.get('X-Device-Id')).to.equal(DEVICE);
    }
    expect(read?.headers.has('Idempotency-Key')).to.equal(false);
    expect(first?.headers.get('Idempotency-Key')).to.equal('key-1');
    expect(first?.headers.get('Content-Type')).to.equal('application/json');
    expect(first?.body).to.equal('{"name":"Turma"}');
    // Each call is a new request: its own key.
    expect(second?.headers.get('Idempotency-Key')).to.equal('key-2');
  });

  it('concurrent calls that meet a 401 share one refresh, then each is sent again with the new token', async () => {
    const server = fakeServer();
    const { transport, stored } = transportOn(server, signedIn(1));
    server.expire();
    const gate = latch();
    server.state.refreshGate = gate.opened;
    const calls = [transport.send(get), transport.send(post), transport.send(get)];
    // Every call meets its 401 while the one refresh is held open.
    while (server.calls('/api/v1/classes').length < 3) await settle();
    await settle();
    gate.open();
    const ok = E.right({ ok: true });
    expect(await Promise.all(calls)).to.deep.equal([ok, ok, ok]);
    expect(server.calls('/api/v1/auth/refresh')).to.have.length(1);
    const retries = server.calls('/api/v1/classes').slice(3);
    expect(retries.map((x) => x.headers.get('Authorization'))).to.deep.equal([
      'Bearer access-2',
      'Bearer access-2',
      'Bearer access-2',
    ]);
    expect(stored()?.accessToken).to.equal('access-2');
  });

  it('a call that meets a 401 after another call refreshed is sent again with the new token, without a refresh', async () => {
    const server = fakeServer();
    const gate = latch();
    let held = false;
    // The first read reaches the server only once the gate opens, by when the tokens were refreshed.
    const slowFetch: typeof fetch = async (input, init) => {
      if (!held && input === '/api/v1/classes' && (init?.method ?? 'GET') === 'GET') {
        held = true;
        await gate.opened;
      }
      return server.fetch(input, init);
    };
    const { transport } = transportOn({ ...server, fetch: slowFetch }, signedIn(1));
    server.expire();
    const read = transport.send(get);
    await settle();
    expect(await transport.send(post)).to.deep.equal(E.right({ ok: true }));
    expect(server.calls('/api/v1/auth/refresh')).to.have.length(1);
    gate.open();
    expect(await read).to.deep.equal(E.right({ ok: true }));
    // Had it refreshed too, it would have presented a used refresh token and ended every session.
    expect(server.calls('/api/v1/auth/refresh')).to.have.length(1);
    const reads = server.calls('/api/v1/classes').filter((x) => x.method === 'GET');
    expect(reads.map((x) => x.headers.get('Authorization'))).to.deep.equal([
      'Bearer access-1',
      'Bearer access-2',
    ]);
  });

  it('the retry after a refresh keeps the mutation’s Idempotency-Key', async () => {
    const server = fakeServer();
    const { transport } = transportOn(server, signedIn(1));
    server.expire();
    expect(await transport.send(post)).to.deep.equal(E.right({ ok: true }));
    const attempts = server.calls('/api/v1/classes');
    expect(attempts.map((x) => x.headers.get('Authorization'))).to.deep.equal([
      'Bearer access-1',
      'Bearer access-2',
    ]);
    expect(attempts.map((x) => x.headers.get('Idempotency-Key'))).to.deep.equal(['key-1', 'key-1']);
    expect(attempts.map((x) => x.body)).to.deep.equal(['{"name":"Turma"}', '{"name":"Turma"}']);
  });

  it('a refresh the server refuses signs out: the failure is the call’s 401, and nothing more is sent', async () => {
    const server = fakeServer();
    const { transport, stored } = transportOn(server, signedIn(1));
    server.revokeAll();
    const failed = await transport.send(get);
    expect(failed).to.deep.equal(
      E.left({
        kind: 'refused',
        status: 401,
        error: {
          code: 'UNAUTHORIZED',
          message: 'Authentication is missing or invalid.',
          correlationId: UUID(777),
        },
      }),
    );
    expect(transport.current()).to.equal(undefined);
    expect(stored()).to.equal(undefined);
    const sent = server.seen.length;
    expect(await transport.send(get)).to.deep.equal(E.left({ kind: 'signed-out' }));
    expect(server.seen).to.have.length(sent);
  });

  it('what a refused refresh leaves is the app’s: the kiosk keeps its user, marked expired', async () => {
    const server = fakeServer();
    const { transport } = transportOn(server, signedIn(1), {
      refused: (s) => ({ ...s, expired: true }),
      plan: (s): SignInPlan => (s.expired === true ? 'unusable' : 'use'),
    });
    server.revokeAll();
    expect(E.isLeft(await transport.send(get))).to.equal(true);
    expect(transport.current()).to.deep.include({ user: 'ana@example.org', expired: true });
    const sent = server.seen.length;
    const raw = await transport.fetch('/api/v1/replication/roster', {});
    expect(raw.status).to.equal(401);
    expect(server.seen).to.have.length(sent);
  });

  it('a refresh that meets no network, or a failing server, keeps the sign-in for a later call', async () => {
    for (const refreshAnswer of [
      () => {
        throw new TypeError('Failed to fetch');
      },
      () => answer(503, envelope('STORE_UNAVAILABLE', 'The data store is unavailable.')),
      () => answer(429, envelope('RATE_LIMITED', 'Too many requests; retry later.')),
    ]) {
      const server = fakeServer();
      const { transport } = transportOn(server, signedIn(1));
      server.expire();
      server.state.refreshAnswer = refreshAnswer;
      const failed = await transport.send(get);
      expect(failed).to.satisfy((f: E.Either<Failure, unknown>) => E.isLeft(f) && f.left.kind === 'refused');
      expect(transport.current()?.accessToken).to.equal('access-1');
    }
  });

  it('reads the error envelope into a typed failure, and tells apart what is no envelope', async () => {
    const cases: ReadonlyArray<[() => Response, Failure]> = [
      [
        // Fields a newer server added, beside the envelope and in it, are read past.
        () =>
          answer(409, {
            error: { ...envelope('ROOM_FULL', 'The room is full.').error, hint: 'added later' },
            addedLater: true,
          }),
        {
          kind: 'refused',
          status: 409,
          error: { code: 'ROOM_FULL', message: 'The room is full.', correlationId: UUID(777) },
        },
      ],
      [
        () =>
          answer(400, {
            error: { ...envelope('VALIDATION_FAILED', 'bad').error, details: { issues: [], newer: 1 } },
          }),
        {
          kind: 'refused',
          status: 400,
          error: {
            code: 'VALIDATION_FAILED',
            message: 'bad',
            correlationId: UUID(777),
            details: { issues: [], newer: 1 },
          },
        },
      ],
      [() => new Response('<html>Bad gateway</html>', { status: 502 }), { kind: 'unexpected', status: 502 }],
      // A code the catalogue does not hold is no envelope this client can read.
      [() => answer(418, envelope('TEAPOT', 'short and stout')), { kind: 'unexpected', status: 418 }],
      // A 2xx the codec refuses.
      [() => answer(200, { ok: 'yes' }), { kind: 'unexpected', status: 200 }],
      [
        () => {
          throw new TypeError('Failed to fetch');
        },
        { kind: 'network' },
      ],
    ];
    for (const [reply, failure] of cases) {
      const server = fakeServer();
      server.state.handler = reply;
      const { transport } = transportOn(server, signedIn(1));
      expect(await transport.send(get)).to.deep.equal(E.left(failure));
    }
  });

  it('reads what a VALIDATION_FAILED says is wrong, and nothing from any other failure', () => {
    const refused = (code: ErrorCode, details: Record<string, unknown>): Failure => ({
      kind: 'refused',
      status: 400,
      error: { code, message: 'bad', correlationId: UUID(777), details },
    });
    const issues = [{ path: 'body.birthDate', message: 'expected a calendar date YYYY-MM-DD' }];
    expect(
      validationDetails(refused('VALIDATION_FAILED', { issues, headers: ['Nome', 'Turma'] })),
    ).to.deep.equal({
      issues,
      headers: ['Nome', 'Turma'],
    });
    expect(validationDetails(refused('VALIDATION_FAILED', { nothing: true }))).to.equal(undefined);
    expect(validationDetails(refused('CONFLICT', { issues }))).to.equal(undefined);
    expect(validationDetails({ kind: 'network' })).to.equal(undefined);
  });

  it('a field a newer server added to a closed domain codec is read past (the login answer)', async () => {
    // TokenPair refuses unknown fields; the fake login adds one.
    const { transport } = transportOn(fakeServer(), undefined);
    expect(await transport.signIn('ana@example.org', 'secret')).to.deep.equal(
      E.right({ accessToken: 'access-2', refreshToken: tokenPair(2).refreshToken, user: 'ana@example.org' }),
    );
  });

  it('signs in with the device id, and revokes at once a sign-in the app does not accept', async () => {
    const server = fakeServer();
    const { transport, stored } = transportOn(server, undefined);
    const refused = await transport.signIn('ana@example.org', 'secret', () => false);
    expect(refused).to.deep.equal(E.left({ kind: 'not-accepted' }));
    expect(stored()).to.equal(undefined);
    const [login, revoke] = server.seen;
    expect(login?.path).to.equal('/api/v1/auth/login');
    expect(login?.headers.get('X-Device-Id')).to.equal(DEVICE);
    expect(login?.headers.has('Authorization')).to.equal(false);
    expect(JSON.parse(login?.body ?? '')).to.deep.equal({ email: 'ana@example.org', password: 'secret' });
    expect(revoke?.path).to.equal('/api/v1/auth/revoke');
    expect(revoke?.headers.get('Authorization')).to.equal('Bearer access-2');
    expect(revoke?.headers.has('Idempotency-Key')).to.equal(true);
  });

  it('signs out: the session revoked, the sign-in forgotten, the listeners told', async () => {
    const server = fakeServer();
    const { transport, stored } = transportOn(server, signedIn(1));
    let told = 0;
    transport.onChange(() => {
      told += 1;
    });
    await transport.signOut();
    expect(server.calls('/api/v1/auth/revoke')).to.have.length(1);
    expect(stored()).to.equal(undefined);
    expect(told).to.equal(1);
  });

  it('a sign-in past its end is signed out without a call; one about to expire is refreshed first', async () => {
    const ended = fakeServer();
    const marked = transportOn(ended, signedIn(1), {
      plan: (s) => (s.expired === true ? 'unusable' : 'ended'),
      refused: (s) => ({ ...s, expired: true }),
    });
    expect(await marked.transport.send(get)).to.deep.equal(E.left({ kind: 'signed-out' }));
    expect(ended.seen).to.have.length(0);
    expect(marked.stored()?.expired).to.equal(true);

    const ahead = fakeServer();
    const refreshing = transportOn(ahead, signedIn(1), {
      plan: (s) => (s.accessToken === 'access-1' ? 'refresh-first' : 'use'),
    });
    expect(await refreshing.transport.send(get)).to.deep.equal(E.right({ ok: true }));
    expect(ahead.seen.map((s) => s.path)).to.deep.equal(['/api/v1/auth/refresh', '/api/v1/classes']);
    expect(ahead.seen[1]?.headers.get('Authorization')).to.equal('Bearer access-2');
  });

  it('as a fetch: keys a mutation that has no key, keeps one the caller made, answers 401 itself when signed out', async () => {
    const server = fakeServer();
    const { transport } = transportOn(server, signedIn(1));
    await transport.fetch('/api/v1/check-ins/x/page', { method: 'POST' });
    await transport.fetch('/api/v1/check-ins/x/page', {
      method: 'POST',
      headers: { 'Idempotency-Key': 'mine' },
    });
    await transport.fetch('/api/v1/replication/roster/_changes');
    expect(server.seen.map((s) => s.headers.get('Idempotency-Key'))).to.deep.equal(['key-1', 'mine', null]);
    await transport.signOut();
    const before = server.seen.length;
    const answered = await transport.fetch('/api/v1/replication/roster/_changes');
    expect(answered.status).to.equal(401);
    expect(server.seen).to.have.length(before);
  });
});
