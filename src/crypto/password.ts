/**
 * Password storage, per the product decision: PBKDF2-HMAC-SHA256, 600,000 iterations, a 16-byte random
 * salt and a 32-byte key, stored as `pbkdf2:<hexSalt>:<hexHash>`. The parameters live in the code, not
 * in the stored string, so raising them later means a new prefix and re-hashing at the next login.
 */
import { pbkdf2, randomBytes } from 'node:crypto';
import { asBytes, equalBytes } from './bytes.js';

export const PBKDF2_ITERATIONS = 600_000;
export const PBKDF2_DIGEST = 'sha256';
export const PBKDF2_SALT_BYTES = 16;
export const PBKDF2_KEY_BYTES = 32;

const STORED_FORMAT = /^pbkdf2:([0-9a-f]{32}):([0-9a-f]{64})$/;

const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const fromHex = (hex: string): Uint8Array => asBytes(Buffer.from(hex, 'hex'));

// The callback form runs on the libuv thread pool; pbkdf2Sync would block every other request for ~200 ms.
const derive = (password: string, salt: Uint8Array): Promise<Uint8Array> =>
  new Promise((resolve, reject) => {
    pbkdf2(password, salt, PBKDF2_ITERATIONS, PBKDF2_KEY_BYTES, PBKDF2_DIGEST, (e, key) => {
      if (e === null) resolve(asBytes(key));
      else reject(e);
    });
  });

export const hashPassword = async (password: string): Promise<string> => {
  const salt = asBytes(randomBytes(PBKDF2_SALT_BYTES));
  return `pbkdf2:${toHex(salt)}:${toHex(await derive(password, salt))}`;
};

export const verifyPassword = async (password: string, stored: string): Promise<boolean> => {
  const parts = STORED_FORMAT.exec(stored);
  const [, salt, hash] = parts ?? [];
  if (salt === undefined || hash === undefined) return false;
  return equalBytes(await derive(password, fromHex(salt)), fromHex(hash));
};

// Random, not derived from any password: it only has to be well formed, and making it costs nothing, so
// the first unknown-email login is not slower than the others.
let dummyStored: string | undefined;

/** Spends one verification's time and answers false, so an unknown email takes as long as a known one. */
export const verifyAgainstDummy = async (password: string): Promise<false> => {
  dummyStored ??= `pbkdf2:${toHex(asBytes(randomBytes(PBKDF2_SALT_BYTES)))}:${toHex(asBytes(randomBytes(PBKDF2_KEY_BYTES)))}`;
  await verifyPassword(password, dummyStored);
  return false;
};
