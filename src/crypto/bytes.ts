import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Views a Buffer as a plain Uint8Array. @types/pouchdb-core declares a global `Buffer` interface that
 * merges with Node's and stops Buffer from type-checking as an ArrayBufferView; the bytes are the same.
 */
export const asBytes = (b: Buffer): Uint8Array => new Uint8Array(b.buffer, b.byteOffset, b.byteLength);

export const sha256 = (s: string): Uint8Array => asBytes(createHash('sha256').update(s, 'utf8').digest());

/** Constant-time equality; different lengths are simply unequal (length is not secret here). */
export const equalBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && timingSafeEqual(a, b);
