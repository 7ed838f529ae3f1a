/**
 * User administration: create, change, reset password, deactivate. Every change appends an immutable
 * user event; deactivation and password resets revoke the user's sessions at once; the last active
 * ADMIN can be neither demoted nor deactivated.
 */
import { randomUUID } from 'node:crypto';
import * as E from 'fp-ts/lib/Either.js';
import { hashPassword } from '../crypto/password.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { Actor } from '../domain/principal.js';
import type { UserDoc } from '../domain/user.js';
import type { EventStore } from '../store/events.js';
import type { RoleStore } from '../store/roles.js';
import type { SessionStore } from '../store/sessions.js';
import type { NewUser, UserStore } from '../store/users.js';

export interface UserServiceDeps {
  readonly users: UserStore;
  readonly sessions: SessionStore;
  readonly roles: RoleStore;
  readonly events: EventStore;
  readonly clock: () => Date;
}

export interface CreateUser {
  readonly email: string;
  readonly displayName: string;
  readonly roles: ReadonlyArray<string>;
  readonly primaryRole?: string;
  readonly password: string;
}

export interface PatchUser {
  readonly email?: string;
  readonly displayName?: string;
  readonly roles?: ReadonlyArray<string>;
  readonly primaryRole?: string;
}

const lastAdmin = (): ApiError =>
  apiError('CONFLICT', 'This is the last active ADMIN; make another user ADMIN first.', {
    reason: 'LAST_ACTIVE_ADMIN',
  });
const notFound = (): ApiError => apiError('NOT_FOUND', 'No such user.');
const emailTaken = (): ApiError =>
  apiError('CONFLICT', 'Another user already has this email.', { reason: 'EMAIL_TAKEN' });
const invalid = (path: string, message: string): ApiError =>
  apiError('VALIDATION_FAILED', message, { issues: [{ path, message }] });

export interface UserService {
  /** Every user, ordered by email. */
  list(): Promise<UserDoc[]>;
  /** Whether any user exists: the development seed runs only on an empty database. */
  anyExists(): Promise<boolean>;
  create(actor: Actor | null, input: CreateUser): Promise<E.Either<ApiError, UserDoc>>;
  patch(actor: Actor, userId: string, input: PatchUser): Promise<E.Either<ApiError, UserDoc>>;
  resetPassword(
    actor: Actor,
    userId: string,
    password: string,
  ): Promise<E.Either<ApiError, { user: UserDoc; sessionsRevoked: number }>>;
  deactivate(actor: Actor, userId: string, reason: string | undefined): Promise<E.Either<ApiError, UserDoc>>;
}

export const userService = (deps: UserServiceDeps): UserService => {
  const now = () => deps.clock().toISOString();

  const checkRoles = async (
    roles: ReadonlyArray<string>,
    primaryRole: string,
  ): Promise<ApiError | undefined> => {
    const known = new Set((await deps.roles.list()).map((r) => r.name));
    const unknown = roles.filter((r) => !known.has(r));
    if (unknown.length > 0) return invalid('body.roles', `unknown role(s): ${unknown.join(', ')}`);
    if (!roles.includes(primaryRole))
      return invalid('body.primaryRole', 'the primary role must be one of the roles');
    return undefined;
  };

  const record = (actor: Actor | null, type: string, user: UserDoc, payload: Record<string, unknown>) =>
    deps.events.append({
      eventId: randomUUID(),
      type,
      subjectType: 'USER',
      subjectId: user.userId,
      payload,
      actor:
        actor === null
          ? { userId: 'system', role: 'SYSTEM' }
          : { userId: actor.principal.userId, role: actor.principal.primaryRole },
      deviceId: actor?.deviceId ?? null,
      clientTimestamp: now(),
      serverTimestamp: now(),
    });

  const isActiveAdmin = (u: Pick<UserDoc, 'status' | 'roles'>): boolean =>
    u.status === 'ACTIVE' && u.roles.includes('ADMIN');

  return {
    list: () => deps.users.list(),

    anyExists: async () => (await deps.users.count()) > 0,

    async create(actor, input) {
      const primaryRole = input.primaryRole ?? input.roles[0] ?? '';
      const problem = await checkRoles(input.roles, primaryRole);
      if (problem !== undefined) return E.left(problem);
      const at = now();
      const user: NewUser = {
        userId: randomUUID(),
        email: input.email.trim(),
        displayName: input.displayName,
        roles: [...input.roles],
        primaryRole,
        status: 'ACTIVE',
        passwordHash: await hashPassword(input.password),
        createdAt: at,
        updatedAt: at,
        passwordChangedAt: at,
      };
      const created = await deps.users.create(user);
      if (created === 'EMAIL_TAKEN') return E.left(emailTaken());
      if (isActiveAdmin(created)) await deps.users.changeActiveAdmins({ add: created.userId });
      await record(actor, 'USER_CREATED', created, {
        roles: created.roles,
        primaryRole: created.primaryRole,
      });
      return E.right(created);
    },

    async patch(actor, userId, input) {
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const current = await deps.users.get(userId);
        if (current === undefined) return E.left(notFound());
        const roles = input.roles === undefined ? current.roles : [...input.roles];
        const primaryRole =
          input.primaryRole ??
          (roles.includes(current.primaryRole) ? current.primaryRole : (roles[0] ?? current.primaryRole));
        const problem = await checkRoles(roles, primaryRole);
        if (problem !== undefined) return E.left(problem);
        const next: NewUser = {
          ...current,
          email: input.email?.trim() ?? current.email,
          displayName: input.displayName ?? current.displayName,
          roles,
          primaryRole,
          updatedAt: now(),
        };
        const losesAdmin = isActiveAdmin(current) && !isActiveAdmin(next);
        const gainsAdmin = !isActiveAdmin(current) && isActiveAdmin(next);
        // Removal is guarded before the write, addition recorded after it: an interruption can only
        // leave the guard more cautious than the users, never less.
        if (losesAdmin && (await deps.users.changeActiveAdmins({ remove: userId })) === 'LAST_ADMIN')
          return E.left(lastAdmin());
        const updated = await deps.users.update(current, next);
        if (updated === 'EMAIL_TAKEN' || updated === 'CONFLICT') {
          if (losesAdmin) await deps.users.changeActiveAdmins({ add: userId });
          if (updated === 'EMAIL_TAKEN') return E.left(emailTaken());
          continue;
        }
        if (gainsAdmin) await deps.users.changeActiveAdmins({ add: userId });
        const changed = (['email', 'displayName', 'roles', 'primaryRole'] as const).filter(
          (k) => input[k] !== undefined,
        );
        await record(actor, 'USER_UPDATED', updated, {
          changed,
          roles: updated.roles,
          primaryRole: updated.primaryRole,
        });
        return E.right(updated);
      }
      return E.left(apiError('CONFLICT', 'The user changed while this request ran; try again.'));
    },

    async resetPassword(actor, userId, password) {
      const passwordHash = await hashPassword(password);
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const current = await deps.users.get(userId);
        if (current === undefined) return E.left(notFound());
        const at = now();
        const updated = await deps.users.update(current, {
          ...current,
          passwordHash,
          passwordChangedAt: at,
          updatedAt: at,
        });
        if (updated === 'CONFLICT' || updated === 'EMAIL_TAKEN') continue;
        const sessionsRevoked = await deps.sessions.revokeAllForUser(userId, 'PASSWORD_RESET', at);
        await record(actor, 'USER_PASSWORD_RESET', updated, { sessionsRevoked });
        return E.right({ user: updated, sessionsRevoked });
      }
      return E.left(apiError('CONFLICT', 'The user changed while this request ran; try again.'));
    },

    async deactivate(actor, userId, reason) {
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const current = await deps.users.get(userId);
        if (current === undefined) return E.left(notFound());
        if (current.status !== 'ACTIVE')
          return E.left(
            apiError('CONFLICT', 'The user is already deactivated.', { reason: 'ALREADY_DEACTIVATED' }),
          );
        const wasAdmin = isActiveAdmin(current);
        if (wasAdmin && (await deps.users.changeActiveAdmins({ remove: userId })) === 'LAST_ADMIN')
          return E.left(lastAdmin());
        const at = now();
        const updated = await deps.users.update(current, {
          ...current,
          status: 'DEACTIVATED',
          updatedAt: at,
        });
        if (updated === 'CONFLICT' || updated === 'EMAIL_TAKEN') {
          if (wasAdmin) await deps.users.changeActiveAdmins({ add: userId });
          continue;
        }
        const sessionsRevoked = await deps.sessions.revokeAllForUser(userId, 'USER_DEACTIVATED', at);
        await record(actor, 'USER_DEACTIVATED', updated, {
          sessionsRevoked,
          ...(reason === undefined ? {} : { reason }),
        });
        return E.right(updated);
      }
      return E.left(apiError('CONFLICT', 'The user changed while this request ran; try again.'));
    },
  };
};
