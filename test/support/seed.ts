/** A small roster made through the API (as an ADMIN would): classes, sessions and students. */
import { expect } from 'chai';
import * as t from 'io-ts';
import { call, decodeAs } from './http.js';
import { DEV_TOKENS, mutationHeaders } from './testService.js';

/** POSTs as the development ADMIN and returns the id field of the 201 answer. */
export const createdId = async (url: string, path: string, body: unknown, key: string): Promise<string> => {
  const r = await call(`${url}${path}`, {
    method: 'POST',
    headers: mutationHeaders(DEV_TOKENS.DEV_ADMIN_TOKEN),
    body: JSON.stringify(body),
  });
  expect(r.status, r.text).to.equal(201);
  const id = decodeAs(t.type({ [key]: t.string }), r.json)[key];
  if (id === undefined) throw new Error(`no ${key} in the answer`);
  return id;
};

export interface SmallRoster {
  readonly classId: string;
  readonly sessionId: string;
  readonly studentIds: ReadonlyArray<string>;
}

/** One class, one session on `date`, and one student per name. */
export const seedSmallRoster = async (
  url: string,
  names: ReadonlyArray<string>,
  date = '2026-11-26',
): Promise<SmallRoster> => {
  const classId = await createdId(url, '/api/v1/classes', { name: 'Turma' }, 'classId');
  const sessionId = await createdId(url, '/api/v1/sessions', { classId, date }, 'sessionId');
  const studentIds: string[] = [];
  for (const displayName of names) {
    studentIds.push(
      await createdId(
        url,
        '/api/v1/students',
        { displayName, guardianName: 'G', phones: [], classId },
        'studentId',
      ),
    );
  }
  return { classId, sessionId, studentIds };
};
