/**
 * A stored photo for tests that need one: a PATCH names only the photo the server holds for the
 * child (decision 0043), so a test that wants a `photoRef` uploads a picture as a client would.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import sharp from 'sharp';
import { call, decodeAs } from './http.js';

/** A small JPEG of one colour, 48 × 64 (portrait, as a child's photo is). */
export const testJpeg = (): Promise<Buffer> =>
  sharp({ create: { width: 48, height: 64, channels: 3, background: { r: 200, g: 120, b: 40 } } })
    .jpeg()
    .toBuffer();

/**
 * Uploads a test photo for a student who has an active image consent; answers the stored key, which
 * the student's `photoRef` now names. `headers` authenticate the caller (a bearer and a device id).
 */
export const uploadTestPhoto = async (
  origin: string,
  studentId: string,
  headers: Record<string, string>,
): Promise<string> => {
  const r = await call(`${origin}/api/v1/students/${studentId}/photo`, {
    method: 'PUT',
    headers: { ...headers, 'Content-Type': 'image/jpeg', 'Idempotency-Key': randomUUID() },
    body: new Blob([new Uint8Array(await testJpeg())]),
  });
  expect(r.status, r.text).to.equal(200);
  return decodeAs(t.type({ photoRef: t.string }), r.json).photoRef;
};
