/** A small roster made through the API (as an ADMIN would): classes, sessions and students. */
import { expect } from 'chai';
import * as t from 'io-ts';
import { call, decodeAs } from './http.js';
import { DEV_TOKENS, mutationHeaders } from './testService.js';

/** Times a seeding POST answered 503 `STORE_UNAVAILABLE` is sent again, with its Idempotency-Key. */
const SEED_RESENDS = 3;

/**
 * POSTs as the development ADMIN and returns the id field of the 201 answer. A 503 `STORE_UNAVAILABLE`
 * is sent again with the same Idempotency-Key, as the contract tells clients to: a seed is a test's
 * setup, and tests that run their service with a short request deadline (1.5 s) on a loaded machine
 * saw a seeding write pass it (requestDeadline.test.ts on CouchDB, thirty-second session).
 */
export const createdId = async (url: string, path: string, body: unknown, key: string): Promise<string> => {
  const headers = mutationHeaders(DEV_TOKENS.DEV_ADMIN_TOKEN);
  const send = () => call(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  let r = await send();
  for (
    let resent = 0;
    resent < SEED_RESENDS && r.status === 503 && r.text.includes('STORE_UNAVAILABLE');
    resent += 1
  )
    r = await send();
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

/** A child to seed: a name, or a name, its guardian (`G` otherwise) and the guardians' phones (none otherwise). */
export type SeedStudent =
  | string
  | {
      readonly displayName: string;
      readonly guardianName: string;
      readonly phones?: ReadonlyArray<{ readonly number: string; readonly qualifier: string }>;
    };

export interface RosterSpec {
  readonly students?: ReadonlyArray<SeedStudent>;
  /** The session's day; the tests' usual Thursday unless named. */
  readonly date?: string;
  readonly className?: string;
  /** A nucleus of this name that the class belongs to; none unless named. */
  readonly nucleus?: string;
}

export interface Roster extends SmallRoster {
  readonly nucleusId: string | null;
  /** The id of the seeded child of this name (throws for a name not seeded). */
  readonly student: (displayName: string) => string;
}

/** A nucleus when named, one class, one session on `date`, and the students in order, all as ADMIN. */
export const seedRoster = async (url: string, spec: RosterSpec = {}): Promise<Roster> => {
  const nucleusId =
    spec.nucleus === undefined
      ? null
      : await createdId(url, '/api/v1/nuclei', { name: spec.nucleus }, 'nucleusId');
  const classId = await createdId(
    url,
    '/api/v1/classes',
    { name: spec.className ?? 'Turma', ...(nucleusId === null ? {} : { nucleusId }) },
    'classId',
  );
  const sessionId = await createdId(
    url,
    '/api/v1/sessions',
    { classId, date: spec.date ?? '2026-11-26' },
    'sessionId',
  );
  const ids = new Map<string, string>();
  const studentIds: string[] = [];
  for (const s of spec.students ?? []) {
    const {
      displayName,
      guardianName,
      phones = [],
    } = typeof s === 'string' ? { displayName: s, guardianName: 'G' } : s;
    const id = await createdId(
      url,
      '/api/v1/students',
      { displayName, guardianName, phones, classId },
      'studentId',
    );
    ids.set(displayName, id);
    studentIds.push(id);
  }
  const student = (displayName: string): string => {
    const id = ids.get(displayName);
    if (id === undefined) throw new Error(`no seeded student named ${displayName}`);
    return id;
  };
  return { nucleusId, classId, sessionId, studentIds, student };
};

/** One class, one session on `date`, and one student per name. */
export const seedSmallRoster = async (
  url: string,
  names: ReadonlyArray<string>,
  date = '2026-11-26',
): Promise<SmallRoster> => {
  const { classId, sessionId, studentIds } = await seedRoster(url, { students: names, date });
  return { classId, sessionId, studentIds };
};

/** The answer of `POST /api/v1/sync/events`, as a test reads it. */
export const SyncAnswer = t.type({
  synced: t.array(
    t.type({ eventId: t.string, serverTimestamp: t.string, status: t.string, duplicate: t.boolean }),
  ),
  conflicts: t.array(
    t.type({ aspect: t.string, policy: t.string, winnerEventId: t.string, loserEventId: t.string }),
  ),
  failed: t.array(
    t.intersection([
      t.type({ index: t.number, eventId: t.union([t.string, t.null]), reason: t.string, message: t.string }),
      t.partial({
        issues: t.array(t.type({ path: t.string, message: t.string })),
        issuesOmitted: t.number,
      }),
    ]),
  ),
});

/** Sends a batch of offline events as `token`'s user and expects a 200. */
export const syncEvents = async (
  url: string,
  events: ReadonlyArray<unknown>,
  token: string = DEV_TOKENS.DEV_CALLER_TOKEN,
): Promise<t.TypeOf<typeof SyncAnswer>> => {
  const r = await call(`${url}/api/v1/sync/events`, {
    method: 'POST',
    headers: mutationHeaders(token),
    body: JSON.stringify({ events }),
  });
  expect(r.status, r.text).to.equal(200);
  return decodeAs(SyncAnswer, r.json);
};
