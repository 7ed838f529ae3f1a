/**
 * Volunteers checked in to a session's room and out again (`/api/v1/sessions/{sessionId}/volunteers`):
 * the admission rule's ratio counts those in the room, and the headcount shows them.
 */
import { randomUUID } from 'node:crypto';
import * as E from 'fp-ts/lib/Either.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { Actor } from '../domain/principal.js';
import type { AddVolunteerBody, VolunteerDoc } from '../domain/volunteers.js';
import { keyedLock } from '../lib/keyedLock.js';
import type { ClassStore } from '../store/classes.js';
import type { UserStore } from '../store/users.js';
import type { VolunteerStore } from '../store/volunteers.js';

/** Roles whose holders may stand in a room as staff. */
const STAFF_ROLES = ['ADMIN', 'CHAMADOR', 'CADASTRO'];

export interface VolunteerService {
  add(actor: Actor, sessionId: string, body: AddVolunteerBody): Promise<E.Either<ApiError, VolunteerDoc>>;
  leave(actor: Actor, sessionId: string, volunteerId: string): Promise<E.Either<ApiError, VolunteerDoc>>;
  list(sessionId: string): Promise<E.Either<ApiError, VolunteerDoc[]>>;
  /** How many are in the room now (no session check: the caller has the session). */
  inRoom(sessionId: string): Promise<number>;
}

const inRoomNow = (v: VolunteerDoc): boolean => v.checkedOutAt === null;

export const volunteerService = (deps: {
  readonly volunteers: VolunteerStore;
  readonly classes: Pick<ClassStore, 'getSession'>;
  readonly users: Pick<UserStore, 'get'>;
  readonly clock: () => Date;
}): VolunteerService => {
  // One change of a room's volunteers at a time in this process, so the same user is not checked in
  // twice by a double tap (another instance can still race; the list then shows both stays).
  const locks = keyedLock();
  const noSession = () => apiError('NOT_FOUND', 'No such session.');
  const sessionExists = async (sessionId: string) => (await deps.classes.getSession(sessionId)) !== undefined;

  return {
    async add(actor, sessionId, body) {
      if (!(await sessionExists(sessionId))) return E.left(noSession());
      let name = body.name;
      const userId = body.userId ?? null;
      if (userId !== null) {
        const user = await deps.users.get(userId);
        if (
          user === undefined ||
          user.status !== 'ACTIVE' ||
          !user.roles.some((r) => STAFF_ROLES.includes(r))
        )
          return E.left(
            apiError('VALIDATION_FAILED', 'No active staff user with this id.', {
              issues: [
                { path: 'body.userId', message: 'an active staff user (ADMIN, CHAMADOR or CADASTRO)' },
              ],
            }),
          );
        name = user.displayName;
      }
      if (name === undefined)
        return E.left(apiError('VALIDATION_FAILED', 'Give exactly one of userId or name.'));
      const volunteerName = name;
      return locks.run(sessionId, async () => {
        if (
          userId !== null &&
          (await deps.volunteers.ofSession(sessionId)).some((v) => v.userId === userId && inRoomNow(v))
        )
          return E.left(
            apiError('CONFLICT', 'This user is already in the room.', { reason: 'ALREADY_IN_ROOM' }),
          );
        return E.right(
          await deps.volunteers.create({
            volunteerId: randomUUID(),
            sessionId,
            userId,
            name: volunteerName,
            checkedInAt: deps.clock().toISOString(),
            checkedInBy: actor.principal.userId,
            checkedOutAt: null,
            checkedOutBy: null,
          }),
        );
      });
    },

    async leave(actor, sessionId, volunteerId) {
      return locks.run(sessionId, async () => {
        for (let attempt = 0; attempt < 5; attempt += 1) {
          const current = (await deps.volunteers.ofSession(sessionId)).find(
            (v) => v.volunteerId === volunteerId,
          );
          if (current === undefined)
            return E.left(apiError('NOT_FOUND', 'No such volunteer at this session.'));
          if (!inRoomNow(current))
            return E.left(
              apiError('CONFLICT', 'The volunteer has already left the room.', { reason: 'ALREADY_LEFT' }),
            );
          const { _id: _i, _rev: _r, docType: _d, ...fields } = current;
          const left = await deps.volunteers.update(current, {
            ...fields,
            checkedOutAt: deps.clock().toISOString(),
            checkedOutBy: actor.principal.userId,
          });
          if (left !== 'CONFLICT') return E.right(left);
        }
        return E.left(
          apiError('CONFLICT', 'The volunteer changed too often while this request ran; try again.'),
        );
      });
    },

    async list(sessionId) {
      if (!(await sessionExists(sessionId))) return E.left(noSession());
      return E.right(await deps.volunteers.ofSession(sessionId));
    },

    inRoom: async (sessionId) => (await deps.volunteers.ofSession(sessionId)).filter(inRoomNow).length,
  };
};
