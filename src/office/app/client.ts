/**
 * The office's transport (src/client/transport.ts): its device id in localStorage, its sign-in in
 * sessionStorage, so closing the office's tab signs out. A refresh the server refuses forgets the
 * sign-in, and the next page drawn is the sign-in page.
 */
import * as t from 'io-ts';
import { apiOf } from '../../client/endpoints.js';
import { deviceIdIn, keptIn } from '../../client/storage.js';
import { createTransport } from '../../client/transport.js';
import { PermissionC } from '../../domain/principal.js';

/** What the office keeps of a sign-in: the tokens, and what the user's roles grant (it offers pages by it). */
const Auth = t.type({
  accessToken: t.string,
  refreshToken: t.string,
  user: t.type({ displayName: t.string, roles: t.array(t.string), permissions: t.array(PermissionC) }),
});
export type Auth = t.TypeOf<typeof Auth>;

const kept = keptIn(sessionStorage, 'chamada-office-auth', Auth);

export const transport = createTransport<Auth>({
  // Called unbound, as the browser's fetch may not be.
  fetch: (input, init) => fetch(input, init),
  deviceId: deviceIdIn(localStorage, 'chamada-office-device'),
  load: kept.load,
  save: kept.save,
  // The refresh answer names the user again: a role changed since sign-in shows in the pages offered.
  keep: (a) => ({
    accessToken: a.accessToken,
    refreshToken: a.refreshToken,
    user: { displayName: a.user.displayName, roles: a.user.roles, permissions: a.user.permissions },
  }),
});

/** The endpoints (src/client/endpoints.ts) over the office's transport: what every page calls. */
export const api = apiOf(transport);
