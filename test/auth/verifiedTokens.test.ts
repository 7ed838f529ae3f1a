import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { verifiedTokens } from '../../src/auth/verifiedTokens.js';
import { jwtKey } from '../../src/http/authenticate.js';

const SECRET = 'a-test-secret-of-at-least-32-bytes!!';
const key = jwtKey(SECRET);
const NOW = 1_800_000_000;

const sign = (claims: object, secret = SECRET) => jwt.sign(claims, secret, { algorithm: 'HS256' });
const claims = { userId: 'u-1', roles: ['CHAMADOR'], sessionId: 's-1', iat: NOW - 10, exp: NOW + 900 };

/** What jsonwebtoken itself answers, for comparison: the payload, or the error's name and message. */
const direct = (token: string, at: number): unknown => {
  try {
    return jwt.verify(token, key, { algorithms: ['HS256'], clockTimestamp: at });
  } catch (e) {
    return e instanceof Error ? { error: e.name, message: e.message } : e;
  }
};
const through = (tokens: ReturnType<typeof verifiedTokens>, token: string, at: number): unknown => {
  try {
    return tokens.verify(token, at);
  } catch (e) {
    return e instanceof Error ? { error: e.name, message: e.message } : e;
  }
};

describe('verified access tokens', () => {
  it('answers a remembered token as jsonwebtoken does, at every time around its validity', () => {
    const token = sign({ ...claims, nbf: NOW - 5 });
    for (const at of [NOW - 6, NOW - 5, NOW, NOW + 899, NOW + 900, NOW + 901]) {
      const tokens = verifiedTokens(key);
      expect(through(tokens, token, NOW)).to.deep.equal(direct(token, NOW));
      expect(tokens.size()).to.equal(1);
      // Remembered now: the time is checked again, on both sides of nbf and exp.
      expect(through(tokens, token, at), `at ${at - NOW}`).to.deep.equal(direct(token, at));
    }
  });

  it('lets an expired token go, and never remembers a refused one', () => {
    const tokens = verifiedTokens(key);
    const token = sign(claims);
    tokens.verify(token, NOW);
    expect(() => tokens.verify(token, NOW + 900)).to.throw(jwt.TokenExpiredError);
    expect(tokens.size()).to.equal(0);
    for (const bad of [
      sign(claims, 'another-secret-of-at-least-32-bytes!'),
      `${token.slice(0, -2)}xx`,
      jwt.sign(claims, SECRET, { algorithm: 'HS384' }),
      sign({ ...claims, exp: NOW - 1 }),
      'not a token',
    ]) {
      expect(() => tokens.verify(bad, NOW)).to.throw();
      expect(() => tokens.verify(bad, NOW)).to.throw();
    }
    expect(tokens.size()).to.equal(0);
  });

  it('hands out copies: a caller changing its payload changes nobody else’s', () => {
    const tokens = verifiedTokens(key);
    const token = sign(claims);
    const first = tokens.verify(token, NOW);
    if (typeof first !== 'object' || first === null) throw new Error('expected an object');
    Reflect.set(first, 'userId', 'someone-else');
    const roles: unknown = Reflect.get(first, 'roles');
    if (Array.isArray(roles)) roles.push('ADMIN');
    expect(tokens.verify(token, NOW)).to.deep.equal(direct(token, NOW));
  });

  it('keeps at most maxEntries tokens, the oldest let go first', () => {
    const tokens = verifiedTokens(key, 3);
    const made = Array.from({ length: 5 }, (_, i) => sign({ ...claims, userId: `u-${i}` }));
    for (const t of made) tokens.verify(t, NOW);
    expect(tokens.size()).to.equal(3);
    for (const t of made) expect(tokens.verify(t, NOW)).to.deep.equal(direct(t, NOW));
  });
});
