/**
 * Where a signed-in user lands: the sessions of the desk, or the admins' view when the address asks
 * for it (`#/admin/...`) or the account has no desk (RELATORIOS).
 */
import { accessOf } from '../access.js';
import { adminRoute } from '../adminModel.js';
import type { Kiosk, Screen } from '../kiosk.js';
import { adminScreen } from './admin.js';
import { selfServiceOn, selfServiceScreen } from './selfService.js';
import { sessionsScreen } from './sessions.js';
import { signInScreen } from './signIn.js';

export const homeScreen = (kiosk: Kiosk, hash = ''): Screen => {
  const auth = kiosk.session.current();
  if (auth === undefined) return signInScreen;
  // Self-service keeps the tablet's sign-in; a family sees only its start.
  if (selfServiceOn()) return selfServiceScreen;
  const access = accessOf(auth.user.roles);
  const tab = adminRoute(hash);
  if (access.reports && (tab !== undefined || !access.desk)) return adminScreen(tab ?? 'conflicts');
  return sessionsScreen;
};
