import * as t from 'io-ts';

export const SYSTEM_ROLES = ['ADMIN', 'CHAMADOR', 'RELATORIOS', 'CADASTRO'] as const;
export type SystemRole = (typeof SYSTEM_ROLES)[number];

/** Role names are open: custom roles exist beside the four system roles. */
export const RoleName = t.string;
export type RoleName = string;

/** Who is calling, once authentication has succeeded. */
export interface Principal {
  readonly userId: string;
  readonly roles: ReadonlyArray<RoleName>;
  readonly primaryRole: RoleName;
  /** Absent for development tokens, which have no server-side session. */
  readonly sessionId?: string;
  readonly authMode: 'dev' | 'jwt';
}
