/** Users: stored records (private database), API shapes and request bodies. */
import * as t from 'io-ts';
import { boundedArray, boundedString, IsoInstant, object, PathId, refine, ShortText, Uuid } from './codec.js';
import { RoleName } from './principal.js';

export const UserStatus = t.keyof({ ACTIVE: null, DEACTIVATED: null });
export type UserStatus = t.TypeOf<typeof UserStatus>;

const EMAIL_RE = /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{2,63}$/;
export const Email = refine(t.string, (s) => s.length <= 254 && EMAIL_RE.test(s), 'an email address', {
  format: 'email',
  maxLength: 254,
  classification: 'personal',
});

/** At least 12 characters (NIST SP 800-63B asks for length, not composition rules); at most 256. */
export const NewPassword = boundedString(12, 256, {
  description: 'At least 12 characters.',
  format: 'password',
});

export const DisplayName = boundedString(1, 120, { classification: 'personal' });

/** Roles one user may hold: far more than any deployment defines, few enough to bound a token. */
export const MAX_USER_ROLES = 50;

const Roles = refine(
  t.array(RoleName),
  (a) => a.length > 0 && a.length <= MAX_USER_ROLES && new Set(a).size === a.length,
  `a non-empty list of at most ${MAX_USER_ROLES} distinct roles`,
  {
    minItems: 1,
    maxItems: MAX_USER_ROLES,
  },
);

export const UserDoc = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('user'),
  userId: t.string,
  email: t.string,
  displayName: t.string,
  roles: t.array(t.string),
  primaryRole: t.string,
  status: UserStatus,
  passwordHash: t.string,
  createdAt: t.string,
  updatedAt: t.string,
  passwordChangedAt: t.string,
});
export type UserDoc = t.TypeOf<typeof UserDoc>;

export const User = object(
  'User',
  {
    userId: Uuid,
    email: Email,
    displayName: DisplayName,
    role: ShortText,
    roles: boundedArray(ShortText, MAX_USER_ROLES),
    primaryRole: ShortText,
    status: UserStatus,
    createdAt: IsoInstant,
    updatedAt: IsoInstant,
  },
  {},
  { description: '`role` is the primary role, kept for clients of the single-role contract.' },
);
export type User = t.TypeOf<typeof User>;

export const toUser = (doc: UserDoc): User => ({
  userId: doc.userId,
  email: doc.email,
  displayName: doc.displayName,
  role: doc.primaryRole,
  roles: doc.roles,
  primaryRole: doc.primaryRole,
  status: doc.status,
  createdAt: doc.createdAt,
  updatedAt: doc.updatedAt,
});

export const UserList = object('UserList', { items: t.array(User) });

export const CreateUserBody = object(
  'CreateUserBody',
  { email: Email, displayName: DisplayName, roles: Roles, password: NewPassword },
  { primaryRole: RoleName },
  { description: '`primaryRole` defaults to the first role and must be one of `roles`.' },
);

export const PatchUserBody = object(
  'PatchUserBody',
  {},
  { email: Email, displayName: DisplayName, roles: Roles, primaryRole: RoleName },
  { description: 'Any subset of the fields. Status and password have their own endpoints.' },
);

export const ResetPasswordBody = object(
  'ResetPasswordBody',
  { password: NewPassword },
  {},
  {
    description:
      'The new password, chosen by the ADMIN and handed to the user; every session of the user is revoked.',
  },
);

export const PasswordReset = object('PasswordReset', {
  userId: Uuid,
  passwordChangedAt: IsoInstant,
  sessionsRevoked: t.number,
});

export const DeactivateUserBody = object('DeactivateUserBody', {}, { reason: boundedString(1, 500) });

export const UserIdParams = object('UserIdParams', { userId: PathId });
