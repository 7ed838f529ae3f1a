import { expect } from 'chai';
import { type RefreshPlan, refreshPlan, type TokenTimes } from '../../src/kiosk/app/sessionEnd.js';

const NOW = Date.parse('2026-11-26T20:00:00.000Z');
const at = (minutes: number) => new Date(NOW + minutes * 60_000).toISOString();

describe('kiosk: refreshing within a session that ends', () => {
  const table: ReadonlyArray<[string, TokenTimes, RefreshPlan]> = [
    [
      'an access token with minutes to live is left alone',
      { accessTokenExpiresAt: at(10), sessionExpiresAt: at(600) },
      'none',
    ],
    [
      'an access token about to expire, well inside the session, is refreshed ahead',
      { accessTokenExpiresAt: at(0.5), sessionExpiresAt: at(600) },
      'refresh-ahead',
    ],
    [
      "an access token that expires with the session is not refreshed: no refresh outlives the session's end",
      { accessTokenExpiresAt: at(0.5), sessionExpiresAt: at(0.5) },
      'none',
    ],
    [
      'past the session’s end the kiosk asks for a sign-in without calling the server',
      { accessTokenExpiresAt: at(-1), sessionExpiresAt: at(-1) },
      'session-ended',
    ],
    [
      'tokens stored by an older kiosk (no session end) refresh ahead as before',
      { accessTokenExpiresAt: at(0.5) },
      'refresh-ahead',
    ],
  ];
  for (const [name, times, plan] of table) it(name, () => expect(refreshPlan(times, NOW)).to.equal(plan));
});
