/**
 * The two rate limiters: the store-backed one of login and refresh, and the per-device one of every
 * authenticated route (in memory, its counts exchanged with the other instances where there are any).
 * Both fail open on a store failure: counted, logged, and the request goes on.
 */
import { hkdfSync } from 'node:crypto';
import type { Logger } from 'pino';
import type { Disposers } from '../lib/disposers.js';
import type { Metrics } from '../metrics/metrics.js';
import type { BackendProfile } from '../store/backendProfile.js';
import { type CallerRateLimiter, callerRateLimiter } from '../store/callerRateLimiter.js';
import { type RateLimiter, rateLimiter } from '../store/rateLimiter.js';
import type { Store } from '../store/store.js';

export interface RateLimitsWiring {
  readonly store: Store;
  readonly profile: BackendProfile;
  /** Every instance of one deployment shares it, so they name the same caller's buckets alike. */
  readonly jwtSecret: string;
  readonly exchangeMs: number;
  readonly clock: () => Date;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly opened: Disposers;
}

export const wireRateLimits = (
  w: RateLimitsWiring,
): { readonly rateLimiter: RateLimiter; readonly callers: CallerRateLimiter } => {
  const clientKeySecret = new Uint8Array(
    hkdfSync('sha256', w.jwtSecret, 'chamada', 'rate-limit client key', 32),
  );
  const failedOpen =
    (source: 'rate_limiter' | 'rate_limit_exchange', message: string) =>
    (e: unknown): void => {
      w.metrics.storeError(source);
      w.logger.warn({ errorName: e instanceof Error ? e.name : typeof e }, message);
    };
  const callers = callerRateLimiter(w.profile.rateLimitShareOf(w.store.db.requests), {
    clock: w.clock,
    clientKeySecret,
    onExchangeFailure: failedOpen(
      'rate_limit_exchange',
      'rate-limit exchange failed; counting this instance alone',
    ),
  });
  callers.startExchange(w.exchangeMs);
  w.opened.add('rate-limit exchange', () => callers.stop());
  return {
    rateLimiter: rateLimiter(w.store.db.requests, {
      clock: w.clock,
      clientKeySecret,
      onStoreFailure: failedOpen('rate_limiter', 'rate-limit store failed; allowing (fail open)'),
    }),
    callers,
  };
};
