/**
 * Opaque, tamper-evident paging cursors: base64url JSON plus an HMAC tag. A forged or edited cursor is
 * recognised (400), and clients cannot steer a query through a cursor.
 */
import { createHmac } from 'node:crypto';
import { equalBytes } from './bytes.js';

const tagOf = (key: Uint8Array, body: string): string =>
  createHmac('sha256', key).update(body, 'utf8').digest('base64url').slice(0, 22);

export const signCursor = (key: Uint8Array, payload: unknown): string => {
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  return `${body}.${tagOf(key, body)}`;
};

/** The payload (still to be decoded by the caller's codec), or undefined for a forged cursor. */
export const openCursor = (key: Uint8Array, cursor: string): unknown => {
  const [body, tag, ...rest] = cursor.split('.');
  if (body === undefined || tag === undefined || rest.length > 0 || cursor.length > 2048) return undefined;
  const expected = new TextEncoder().encode(tagOf(key, body));
  if (!equalBytes(expected, new TextEncoder().encode(tag))) return undefined;
  try {
    return JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
};
