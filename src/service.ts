/**
 * Starting and stopping the whole service: store, app and HTTP server. `main.ts` calls it with the
 * process environment; black-box tests call it with their own configuration and a loopback port.
 */

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from './config/config.js';
import { resolveJwtSecret } from './config/jwtSecret.js';
import { makeApp } from './http/app.js';
import { type Authenticator, devAuthenticator, jwtAuthenticator, jwtKey } from './http/authenticate.js';
import type { AppDeps } from './http/deps.js';
import { DEFAULT_IDEMPOTENCY_SETTINGS, type IdempotencySettings } from './http/idempotency.js';
import { routes as defaultRoutes } from './http/registry.js';
import type { Route } from './http/route.js';
import { idempotencyPurge$ } from './jobs/idempotencyPurge.js';
import { createLogger } from './log/logger.js';
import { idempotencyLedger } from './store/idempotencyLedger.js';
import { openStore, type Store, type StoreLocation } from './store/store.js';

export interface RunningService {
  readonly url: string;
  readonly server: Server;
  readonly store: Store;
  readonly deps: AppDeps;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes the store. */
  stop(graceMs?: number): Promise<void>;
}

export interface ServiceOptions {
  readonly logger?: Logger;
  readonly clock?: () => Date;
  readonly routes?: ReadonlyArray<Route>;
  readonly idempotency?: Partial<IdempotencySettings>;
}

export const storeLocation = (config: Config): StoreLocation =>
  config.couchdbUrl === undefined
    ? { kind: 'embedded', dataDir: config.dataDir, prefix: config.dbPrefix }
    : { kind: 'couchdb', url: config.couchdbUrl, prefix: config.dbPrefix };

const makeAuthenticator = (config: Config & { jwtSecret: string }, clock: () => Date): Authenticator =>
  config.authMode === 'dev'
    ? devAuthenticator(config.devTokens)
    : jwtAuthenticator({ key: jwtKey(config.jwtSecret), clock });

export const startService = async (
  unresolved: Config,
  options: ServiceOptions = {},
): Promise<RunningService> => {
  const config = await resolveJwtSecret(unresolved);
  const logger = options.logger ?? createLogger(config.logLevel);
  const clock = options.clock ?? (() => new Date());
  const store = await openStore(storeLocation(config));
  const deps: AppDeps = {
    config,
    store,
    authenticator: makeAuthenticator(config, clock),
    logger,
    clock,
    idempotency: {
      ledger: idempotencyLedger(store.db.private),
      settings: { ...DEFAULT_IDEMPOTENCY_SETTINGS, ...options.idempotency },
    },
  };
  const purges = idempotencyPurge$((now) => deps.idempotency.ledger.purgeExpired(now), clock).subscribe(
    (run) => {
      if (run.ok) logger.info({ purged: run.purged }, 'idempotency ledger purged');
      else logger.warn({ errorName: run.error }, 'idempotency ledger purge failed');
    },
  );
  const app = makeApp(deps, options.routes ?? defaultRoutes);
  const server = createServer(app);
  // Slow or idle clients must not hold sockets for ever (tablets on bad Wi-Fi open many).
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  server.keepAliveTimeout = 5_000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    purges.unsubscribe();
    await store.close();
    throw e;
  }
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the server has no TCP address');
  const { port } = address satisfies AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  let stopping: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    server,
    store,
    deps,
    stop(graceMs = 10_000) {
      stopping ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        await closed;
        clearTimeout(timer);
        purges.unsubscribe();
        await store.close();
      })();
      return stopping;
    },
  };
};
