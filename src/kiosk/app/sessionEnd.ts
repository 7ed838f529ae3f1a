/**
 * When the kiosk refreshes its access token, and when it stops trying. Pure.
 *
 * A session ends SESSION_TTL after sign-in however often the tokens are refreshed (decision 0013),
 * and the server caps the access token's expiry at that end. Refreshing ahead of an expiry that is the
 * session's own would only rotate tokens every call in the last minute (and meet the refresh limit),
 * so the kiosk does not; once the end has passed it marks the session expired without asking, keeps
 * its outbox, and asks for a sign-in of the same user.
 */
export interface TokenTimes {
  readonly accessTokenExpiresAt: string;
  /** Absent in what a kiosk stored before the server sent it: treated as unknown, never as ended. */
  readonly sessionExpiresAt?: string | undefined;
}

export type RefreshPlan = 'none' | 'refresh-ahead' | 'session-ended';

export const REFRESH_MARGIN_MS = 60_000;

export const refreshPlan = (times: TokenTimes, nowMs: number): RefreshPlan => {
  const sessionEnd = times.sessionExpiresAt === undefined ? Number.NaN : Date.parse(times.sessionExpiresAt);
  if (nowMs >= sessionEnd) return 'session-ended';
  const accessEnd = Date.parse(times.accessTokenExpiresAt);
  // A token that dies with the session cannot be replaced by a longer one: no refresh would help.
  if (accessEnd >= sessionEnd) return 'none';
  return accessEnd - nowMs < REFRESH_MARGIN_MS ? 'refresh-ahead' : 'none';
};
