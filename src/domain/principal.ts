import * as t from 'io-ts';
import { refine } from './codec.js';

export const SYSTEM_ROLES = ['ADMIN', 'CHAMADOR', 'RELATORIOS', 'CADASTRO'] as const;
export type SystemRole = (typeof SYSTEM_ROLES)[number];

/** The permission names the contract uses; custom roles are granted a subset of these. */
export const PERMISSIONS = [
  'attendance',
  'students.search',
  'students.add',
  'sessions.add',
  'sessions.edit',
  'reports',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const PermissionC = t.keyof(
  Object.fromEntries(PERMISSIONS.map((p) => [p, null])) as Record<Permission, null>,
);

/** Permissions the system roles hold (ADMIN passes every route by its role anyway). */
export const SYSTEM_ROLE_PERMISSIONS: Readonly<Record<SystemRole, ReadonlyArray<Permission>>> = {
  ADMIN: PERMISSIONS,
  CHAMADOR: ['attendance', 'students.search'],
  RELATORIOS: ['reports', 'students.search'],
  CADASTRO: ['students.search', 'students.add', 'sessions.add', 'sessions.edit'],
};

/** Role names: upper-case letters, digits and underscores, as the system roles are spelled. */
export const RoleName = refine(
  t.string,
  (s) => /^[A-Z][A-Z0-9_]{1,39}$/.test(s),
  'a role name (A-Z, 0-9, _; 2-40 characters)',
  {
    pattern: '^[A-Z][A-Z0-9_]{1,39}$',
    maxLength: 40,
  },
);
export type RoleName = t.TypeOf<typeof RoleName>;

export const isSystemRole = (name: string): name is SystemRole =>
  (SYSTEM_ROLES as ReadonlyArray<string>).includes(name);

/** Who is calling, once authentication has succeeded. */
export interface Principal {
  readonly userId: string;
  readonly roles: ReadonlyArray<string>;
  readonly primaryRole: string;
  /** What the principal's roles grant, resolved when the request is authenticated. */
  readonly permissions: ReadonlyArray<Permission>;
  /** Absent for development tokens, which have no server-side session. */
  readonly sessionId?: string;
  /** The session's CSRF token, checked against `X-CSRF-Token`. */
  readonly csrfToken?: string;
  readonly authMode: 'dev' | 'jwt' | 'agent';
  /**
   * Set for a print agent's token (0054): no roles, and only the routes of auth class `printAgent`
   * accept it, so a leaked agent token prints labels and reads nothing else.
   */
  readonly printAgentId?: string;
}

/** Who made a change, and from which device: recorded on every event. */
export interface Actor {
  readonly principal: Principal;
  readonly deviceId: string | null;
  /**
   * The keyed request the change belongs to (principal and Idempotency-Key), when a client keyed it:
   * the ids of what it creates derive from it (`src/lib/requestIds.ts`), the same on every attempt.
   */
  readonly requestKey?: string;
  /**
   * The idempotency ledger held nothing for that key when this attempt claimed it: what the ids derived
   * from it name most likely does not exist yet. A hint for skipping a read, never for a decision (an
   * attempt that failed or died with its process may have run in part).
   */
  readonly freshKey?: boolean;
}
