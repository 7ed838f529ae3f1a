import { pbkdf2Sync } from 'node:crypto';
import { expect } from 'chai';
import {
  hashPassword,
  PBKDF2_DIGEST,
  PBKDF2_ITERATIONS,
  PBKDF2_KEY_BYTES,
  PBKDF2_SALT_BYTES,
  verifyAgainstDummy,
  verifyPassword,
} from '../../src/crypto/password.js';

// Each derivation costs about a fifth of a second, so the suite hashes as few times as it can.
describe('password storage (PBKDF2-HMAC-SHA256)', () => {
  const password = 'correct horse battery staple';
  let stored: string;
  before(async () => {
    stored = await hashPassword(password);
  });

  it('uses the parameters of the product decision', () => {
    expect([PBKDF2_DIGEST, PBKDF2_ITERATIONS, PBKDF2_SALT_BYTES, PBKDF2_KEY_BYTES]).to.deep.equal([
      'sha256',
      600_000,
      16,
      32,
    ]);
  });

  it('stores pbkdf2:<32 hex salt>:<64 hex hash>', () => {
    expect(stored).to.match(/^pbkdf2:[0-9a-f]{32}:[0-9a-f]{64}$/);
  });

  it('accepts the password it hashed', async () => {
    expect(await verifyPassword(password, stored)).to.equal(true);
  });

  it('refuses another password', async () => {
    expect(await verifyPassword('correct horse battery stapler', stored)).to.equal(false);
  });

  it('salts every hash, so the same password is stored differently twice', async () => {
    expect(await hashPassword(password)).not.to.equal(stored);
  });

  it('stores exactly the PBKDF2 output of those parameters for the stored salt (known vector)', async () => {
    const salt = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
    const hash = pbkdf2Sync(password, new Uint8Array(salt), 600_000, 32, 'sha256').toString('hex');
    expect(await verifyPassword(password, `pbkdf2:${salt.toString('hex')}:${hash}`)).to.equal(true);
    const [, storedSalt, storedHash] = stored.split(':');
    if (storedSalt === undefined) throw new Error('no salt');
    const expected = pbkdf2Sync(
      password,
      new Uint8Array(Buffer.from(storedSalt, 'hex')),
      600_000,
      32,
      'sha256',
    );
    expect(storedHash).to.equal(expected.toString('hex'));
  });

  const malformed: ReadonlyArray<[string, string]> = [
    ['an empty string', ''],
    ['another scheme', `bcrypt:${'0'.repeat(32)}:${'0'.repeat(64)}`],
    ['a missing hash', `pbkdf2:${'0'.repeat(32)}`],
    ['a short salt', `pbkdf2:${'0'.repeat(30)}:${'0'.repeat(64)}`],
    ['a long hash', `pbkdf2:${'0'.repeat(32)}:${'0'.repeat(66)}`],
    ['upper-case hex', `pbkdf2:${'A'.repeat(32)}:${'0'.repeat(64)}`],
    ['non-hex characters', `pbkdf2:${'g'.repeat(32)}:${'0'.repeat(64)}`],
    ['trailing text', `pbkdf2:${'0'.repeat(32)}:${'0'.repeat(64)}:x`],
  ];
  for (const [what, value] of malformed) {
    it(`refuses, without throwing, a stored value with ${what}`, async () => {
      expect(await verifyPassword(password, value)).to.equal(false);
    });
  }

  it('answers false for an unknown user, doing a full PBKDF2 verification (figures printed, not asserted)', async () => {
    const answers: boolean[] = [];
    const timed = async (run: () => Promise<boolean>): Promise<number> => {
      const started = performance.now();
      answers.push(await run());
      return performance.now() - started;
    };
    // The faster of two runs each, because the machine is shared and noise only ever adds time.
    const dummy = Math.min(
      await timed(() => verifyAgainstDummy(password)),
      await timed(() => verifyAgainstDummy(password)),
    );
    const real = Math.min(
      await timed(() => verifyPassword(password, stored)),
      await timed(() => verifyPassword(password, stored)),
    );
    expect(answers).to.deep.equal([false, false, true, true]);
    // Timing is a benchmark's business, not a test's: printed for the reader, never asserted.
    process.stdout.write(
      `      dummy verification ${dummy.toFixed(0)} ms, real verification ${real.toFixed(0)} ms\n`,
    );
  });
});
