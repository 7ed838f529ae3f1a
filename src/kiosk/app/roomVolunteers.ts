/**
 * Volunteers in a session's room, as the desk knows them. The server is the record (0042): checking a
 * volunteer in or out is a REST call, online only (there is no volunteer event a tablet could queue).
 * The roster carries, for a room with a ratio, how many were in it at the last pull; after a change at
 * this desk the count read back from the server stands until the roster changes, so the desk and its
 * admission rule see the new volunteer at once instead of a pass later.
 *
 * Names are personal data: a helper's name goes to the server and is not kept here. What the desk keeps
 * of the server's list is a count and the signed-in user's own stay (to check them out again).
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { volunteersNeeded } from '../../rules/checkin.js';
import { type ApiFailure, request } from './api.js';

// Tolerant: unknown fields (the name among them) are read past and dropped by `summarise`.
const VolunteerItem = t.type({
  volunteerId: t.string,
  userId: t.union([t.string, t.null]),
  checkedOutAt: t.union([t.string, t.null]),
});
const VolunteerList = t.type({ items: t.array(VolunteerItem) });

/** The server's list of a session's volunteers, reduced to what the desk needs. */
export interface RoomVolunteers {
  /** Volunteers in the room (no check-out yet). */
  readonly inRoom: number;
  /** The signed-in user's open stay in the room, if they are in it. */
  readonly mine: string | null;
  /** The roster's count when the list was read: a roster that differs from it is the newer word. */
  readonly rosterAtRead: number | undefined;
}

export const summarise = (
  items: ReadonlyArray<t.TypeOf<typeof VolunteerItem>>,
  userId: string | undefined,
  rosterAtRead: number | undefined,
): RoomVolunteers => {
  const open = items.filter((v) => v.checkedOutAt === null);
  return {
    inRoom: open.length,
    mine: open.find((v) => userId !== undefined && v.userId === userId)?.volunteerId ?? null,
    rosterAtRead,
  };
};

/**
 * The volunteers the desk counts: the list read here while the roster still says what it said then;
 * once a pull changes the roster's count, the roster (newer, and every door's) is what counts.
 */
export const volunteersInRoom = (
  rosterCount: number | undefined,
  read: RoomVolunteers | undefined,
): number => (read !== undefined && read.rosterAtRead === rosterCount ? read.inRoom : (rosterCount ?? 0));

/**
 * The volunteers the room's ratio asks for as it stands, null without a ratio. At least one: a room
 * with a ratio refuses its first child until somebody is in it.
 */
export const volunteersWanted = (checkedIn: number, childrenPerVolunteer: number | null): number | null => {
  const needed = volunteersNeeded(checkedIn, childrenPerVolunteer);
  return needed === null ? null : Math.max(1, needed);
};

export type VolunteerChange =
  | { readonly kind: 'me-in' }
  | { readonly kind: 'me-out'; readonly volunteerId: string }
  | { readonly kind: 'helper'; readonly name: string };

/** The call a change makes: path relative to the session's volunteers, method and body. */
export const changeRequest = (
  sessionId: string,
  change: VolunteerChange,
  userId: string,
): { readonly path: string; readonly method: 'POST' | 'DELETE'; readonly body?: string } => {
  const base = `/api/v1/sessions/${encodeURIComponent(sessionId)}/volunteers`;
  switch (change.kind) {
    case 'me-in':
      return { path: base, method: 'POST', body: JSON.stringify({ userId }) };
    case 'helper':
      return { path: base, method: 'POST', body: JSON.stringify({ name: change.name }) };
    case 'me-out':
      return { path: `${base}/${encodeURIComponent(change.volunteerId)}`, method: 'DELETE' };
  }
};

/** Whether the list read after a change shows it made, whatever the change's own answer said. */
const madeAfterAll = (change: VolunteerChange, now: RoomVolunteers): boolean =>
  change.kind === 'me-in' ? now.mine !== null : change.kind === 'me-out' ? now.mine === null : false;

export interface VolunteerBoard {
  /** The session's list as last read at this desk, if it was. */
  known(sessionId: string): RoomVolunteers | undefined;
  /** Reads the session's list from the server. */
  read(sessionId: string): Promise<E.Either<ApiFailure, RoomVolunteers>>;
  /** Makes a change, then reads the list back, which is what the desk then counts. */
  change(sessionId: string, change: VolunteerChange): Promise<E.Either<ApiFailure, RoomVolunteers>>;
  onChange(listener: () => void): void;
  /**
   * After each roster pull: a list whose roster count has changed since the read takes the roster's
   * count as its own, so the roster going back to the count it had at the read does not bring an old
   * list back.
   */
  rosterPulled(): void;
}

/**
 * `send` is the session's fetch (token, device id, refresh); `rosterCount` the roster's count for a
 * session now.
 */
export const makeVolunteerBoard = (
  send: typeof fetch,
  userId: () => string | undefined,
  rosterCount: (sessionId: string) => number | undefined,
): VolunteerBoard => {
  const lists = new Map<string, RoomVolunteers>();
  const listeners: Array<() => void> = [];

  const read = async (sessionId: string): Promise<E.Either<ApiFailure, RoomVolunteers>> => {
    const before = rosterCount(sessionId);
    const answer = await request(
      send,
      `/api/v1/sessions/${encodeURIComponent(sessionId)}/volunteers`,
      {},
      VolunteerList,
    );
    if (E.isLeft(answer)) return answer;
    const summary = summarise(answer.right.items, userId(), before);
    lists.set(sessionId, summary);
    for (const l of listeners) l();
    return E.right(summary);
  };

  return {
    known: (sessionId) => lists.get(sessionId),
    read,
    async change(sessionId, change) {
      const user = userId();
      if (user === undefined) return E.left('unauthorized');
      const call = changeRequest(sessionId, change, user);
      const made = await request(
        send,
        call.path,
        {
          method: call.method,
          headers: { 'Content-Type': 'application/json', 'Idempotency-Key': crypto.randomUUID() },
          ...(call.body === undefined ? {} : { body: call.body }),
        },
        t.unknown,
      );
      if (E.isRight(made)) return read(sessionId);
      if (made.left === 'network') return made;
      const now = await read(sessionId);
      // A 409 (already in the room, already left) means the room is as asked: the list says so.
      return E.isRight(now) && madeAfterAll(change, now.right) ? now : made;
    },
    onChange: (listener) => {
      listeners.push(listener);
    },
    rosterPulled() {
      for (const [sessionId, read] of lists) {
        const now = rosterCount(sessionId);
        if (now !== read.rosterAtRead) lists.set(sessionId, { ...read, inRoom: now ?? 0, rosterAtRead: now });
      }
    },
  };
};
