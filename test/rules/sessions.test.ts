import { expect } from 'chai';
import {
  decideAccess,
  decideRefresh,
  type RefreshDecision,
  type SessionFacts,
  sessionWindow,
} from '../../src/rules/sessions.js';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();
const live: SessionFacts = {
  userId: 'u1',
  revokedAt: null,
  revokeReason: null,
  replacedBy: null,
  expiresAt: ago(-3_600_000),
  refreshExpiresAt: ago(-86_400_000),
};
const rotated: Partial<SessionFacts> = { revokedAt: ago(50), revokeReason: 'ROTATED', replacedBy: 's2' };

describe('decideRefresh', () => {
  // The rotation was stamped 50 ms ago; this refresh arrived 100 ms ago (before it) or 10 ms ago (after).
  const before = new Date(NOW.getTime() - 100);
  const after = new Date(NOW.getTime() - 10);
  const table: ReadonlyArray<[string, Partial<SessionFacts>, Date, RefreshDecision]> = [
    ['a live session rotates', {}, before, 'rotate'],
    ['past the refresh lifetime it has expired', { refreshExpiresAt: ago(1) }, before, 'expired'],
    [
      "past the login's end the session has expired, whatever the refresh token's lifetime",
      { expiresAt: ago(0) },
      before,
      'session-expired',
    ],
    ['rotated after this refresh arrived: a concurrent double send, not theft', rotated, before, 'race'],
    [
      // A frozen clock cannot tell a sequential reuse from a double send: it counts as reuse.
      'rotated in the very millisecond it arrived: reuse',
      rotated,
      new Date(Date.parse(ago(50))),
      'reuse',
    ],
    ['rotated before this refresh arrived, however recently: reuse', rotated, after, 'reuse'],
    [
      'logged out after this refresh arrived: reuse (only a rotation races)',
      { revokedAt: ago(50), revokeReason: 'LOGOUT' },
      before,
      'reuse',
    ],
    ['revoked as compromised: reuse', { revokedAt: ago(50), revokeReason: 'COMPROMISED' }, before, 'reuse'],
    ['replaced without a revocation time: reuse', { replacedBy: 's2' }, before, 'reuse'],
    [
      'a token rotated long ago and past its refresh lifetime is reuse (theft outranks expiry)',
      { ...rotated, revokedAt: ago(60_000), refreshExpiresAt: ago(1) },
      before,
      'reuse',
    ],
  ];
  for (const [name, over, receivedAt, expected] of table) {
    it(name, () => expect(decideRefresh({ ...live, ...over }, NOW, receivedAt)).to.equal(expected));
  }
  it('without an arrival time, a rotated token is reuse', () =>
    expect(decideRefresh({ ...live, ...rotated }, NOW)).to.equal('reuse'));
});

describe('sessionWindow', () => {
  const ttl = { accessTokenTtlSeconds: 900, refreshTokenTtlSeconds: 604_800, sessionTtlSeconds: 86_400 };
  const at = (ms: number) => new Date(NOW.getTime() + ms);

  it('a login starts the session: its end is SESSION_TTL away; nothing issued outlives it', () =>
    expect(sessionWindow(NOW, ttl)).to.deep.equal({
      sessionExpiresAt: at(86_400_000),
      refreshExpiresAt: at(86_400_000),
      accessExpiresAt: at(900_000),
    }));

  it("a refresh keeps the login's end: it never extends the session", () => {
    const end = at(3_600_000);
    expect(sessionWindow(NOW, ttl, end).sessionExpiresAt).to.equal(end);
  });

  it("an access token issued near the session's end expires with the session", () => {
    const end = at(60_000);
    expect(sessionWindow(NOW, ttl, end)).to.deep.equal({
      sessionExpiresAt: end,
      refreshExpiresAt: end,
      accessExpiresAt: end,
    });
  });

  it('a refresh token shorter than the session keeps its own lifetime', () =>
    expect(sessionWindow(NOW, { ...ttl, refreshTokenTtlSeconds: 600 }).refreshExpiresAt).to.deep.equal(
      at(600_000),
    ));
});

describe('decideAccess', () => {
  const table: ReadonlyArray<
    [string, string, Partial<SessionFacts> | undefined, 'ACTIVE' | 'DEACTIVATED', string]
  > = [
    ['a live session of an active user', 'u1', {}, 'ACTIVE', 'ok'],
    [
      "a rotated session's access tokens live out their expiry",
      'u1',
      { revokedAt: ago(5), revokeReason: 'ROTATED' },
      'ACTIVE',
      'ok',
    ],
    ['a logout stops them at once', 'u1', { revokedAt: ago(5), revokeReason: 'LOGOUT' }, 'ACTIVE', 'revoked'],
    ['a session of another user', 'u2', {}, 'ACTIVE', 'unknown-session'],
    ['no session', 'u1', undefined, 'ACTIVE', 'unknown-session'],
    ['past the session lifetime', 'u1', { expiresAt: ago(0) }, 'ACTIVE', 'expired'],
    ['a deactivated user', 'u1', {}, 'DEACTIVATED', 'inactive-user'],
  ];
  for (const [name, userId, over, status, expected] of table) {
    it(name, () =>
      expect(
        decideAccess(userId, over === undefined ? undefined : { ...live, ...over }, status, NOW),
      ).to.equal(expected),
    );
  }
});
