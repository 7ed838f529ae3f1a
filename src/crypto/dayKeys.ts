/**
 * Per-day keys and daily codes with Node's HMAC. The master `checkin_secret` never leaves the server;
 * a device gets day keys, each good for one UTC day only, so a stolen tablet leaks days, not the secret.
 */
import { createHmac } from 'node:crypto';
import { dailyCode, dayKeyMessage, utcDay } from '../rules/checkin.js';
import { asBytes } from './bytes.js';

const hmacBytes = (key: Uint8Array, message: string): Uint8Array =>
  asBytes(createHmac('sha256', key).update(message, 'utf8').digest());

export const dayKey = (secret: Uint8Array, day: string): Uint8Array => hmacBytes(secret, dayKeyMessage(day));

/** The code of a child for the UTC day of `at`. */
export const codeFor = (secret: Uint8Array, studentId: string, at: Date): string => {
  const key = dayKey(secret, utcDay(at));
  return dailyCode(studentId, (message) => hmacBytes(key, message));
};
