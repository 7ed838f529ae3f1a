/**
 * What a signed-in user may open on the tablet, from the roles in the login answer: the desk (check-in
 * and check-out, replication) for ADMIN and CHAMADOR, the admins' view (reports) for ADMIN and
 * RELATORIOS. A custom role may have been granted either permission, which the login answer does not
 * carry: it is offered both and the server, which answers 403, stays the judge. Pure.
 */
import { mayEmergencyCheckout as serverRule } from '../../rules/checkin.js';

const SYSTEM_ROLES: ReadonlySet<string> = new Set(['ADMIN', 'CHAMADOR', 'RELATORIOS', 'CADASTRO']);

export interface Access {
  readonly desk: boolean;
  readonly reports: boolean;
}

export const accessOf = (roles: ReadonlyArray<string>): Access => {
  const custom = roles.some((r) => !SYSTEM_ROLES.has(r));
  return {
    desk: custom || roles.includes('ADMIN') || roles.includes('CHAMADOR'),
    reports: custom || roles.includes('ADMIN') || roles.includes('RELATORIOS'),
  };
};

/**
 * Emergency check-out on this tablet, by the server's own rule (`emergencyCheckoutAdminOnly`); a
 * custom role at the desk is presumed to hold the `attendance` permission that let it in.
 */
export const mayEmergencyCheckout = (roles: ReadonlyArray<string>, adminOnly: boolean): boolean =>
  serverRule(roles, accessOf(roles).desk ? ['attendance'] : [], adminOnly);
