import { randomUUID } from 'node:crypto';
/** Starts the real service on a loopback port with a temp data dir, for black-box HTTP tests. */
import { Writable } from 'node:stream';
import * as E from 'fp-ts/lib/Either.js';
import type { Config } from '../../src/config/config.js';
import { decodeConfig } from '../../src/config/config.js';
import type { IdempotencySettings } from '../../src/http/idempotency.js';
import type { Route } from '../../src/http/route.js';
import { createLogger } from '../../src/log/logger.js';
import type { Notifier } from '../../src/notify/notifier.js';
import { type RunningService, startService } from '../../src/service.js';
import type { LevelDownFactory } from '../../src/store/guardedLevel.js';
import { startCouchServer } from './couchServer.js';
import { fixture } from './hooks.js';
import { call, type HttpResult } from './http.js';
import { forgetContract } from './openApiContract.js';
import { makeTempDir, removeDir } from './tempDir.js';

export const DEV_TOKENS = {
  DEV_ADMIN_TOKEN: 'dev-admin-token-0123456789',
  DEV_CALLER_TOKEN: 'dev-caller-token-0123456789',
  DEV_REPORTS_TOKEN: 'dev-reports-token-0123456789',
  DEV_CADASTRO_TOKEN: 'dev-cadastro-token-0123456789',
} as const;

export const DEVICE_ID = '6f1c2a8e-9d3b-4c5e-8f7a-1b2c3d4e5f60';

export const testConfig = (env: Record<string, string>): Config => {
  const decoded = decodeConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env });
  if (E.isLeft(decoded)) throw new Error(decoded.left.join('; '));
  return decoded.right;
};

export interface TestService extends RunningService {
  /** Every log line written so far, parsed. */
  readonly logLines: () => ReadonlyArray<Record<string, unknown>>;
  readonly rawLog: () => string;
  dispose(): Promise<void>;
}

export interface TestServiceOptions {
  readonly env?: Record<string, string>;
  readonly routes?: ReadonlyArray<Route>;
  readonly clock?: () => Date;
  readonly idempotency?: Partial<IdempotencySettings>;
  readonly notifier?: Notifier;
  readonly settleTimeoutMs?: number;
  readonly levelDown?: LevelDownFactory;
}

/**
 * `TEST_SERVICE_COUCHDB_URL` set: every service a test starts without a CouchDB of its own runs on
 * that one, in databases of its own (a fresh prefix), so a suite written for the embedded store runs
 * unchanged on CouchDB (decision 0056: the students' list and search, on both backends).
 */
const onTestServiceCouch = (): Record<string, string> => {
  const url = process.env.TEST_SERVICE_COUCHDB_URL;
  if (url === undefined || url === '') return {};
  return { COUCHDB_URL: url, DB_PREFIX: `t${randomUUID().replaceAll('-', '').slice(0, 12)}_` };
};

export const startTestService = async (options: TestServiceOptions = {}): Promise<TestService> => {
  const dataDir = await makeTempDir('svc');
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  const config = testConfig({
    DATA_DIR: dataDir,
    AUTH_MODE: 'dev',
    ...DEV_TOKENS,
    ...onTestServiceCouch(),
    ...options.env,
  });
  const service = await startService(config, {
    logger: createLogger('info', sink),
    ...(options.routes === undefined ? {} : { routes: options.routes }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.idempotency === undefined ? {} : { idempotency: options.idempotency }),
    ...(options.notifier === undefined ? {} : { notifier: options.notifier }),
    ...(options.settleTimeoutMs === undefined ? {} : { settleTimeoutMs: options.settleTimeoutMs }),
    ...(options.levelDown === undefined ? {} : { levelDown: options.levelDown }),
  });
  const rawLog = () => chunks.join('');
  return {
    ...service,
    rawLog,
    logLines: () =>
      rawLog()
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l): Record<string, unknown> => JSON.parse(l)),
    async dispose() {
      forgetContract(service.url);
      await service.stop(1000);
      await removeDir(dataDir);
    },
  };
};

export const authHeaders = (token: string): Record<string, string> => ({
  Authorization: `Bearer ${token}`,
  'X-Device-Id': DEVICE_ID,
});

/** Headers of a mutation: authentication, device id and a fresh Idempotency-Key. */
export const mutationHeaders = (token: string, key: string = randomUUID()): Record<string, string> => ({
  ...authHeaders(token),
  'Content-Type': 'application/json',
  'Idempotency-Key': key,
});

/** A mutation as clients send it: a fresh Idempotency-Key and a JSON body (none when `body` is undefined). */
export const mutate = (url: string, method: string, body: unknown, token: string): Promise<HttpResult> =>
  call(url, {
    method,
    headers: mutationHeaders(token),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

/**
 * Two instances of one deployment on one CouchDB-protocol server (express-pouchdb, or the real CouchDB
 * of npm run test:couchdb), started in a mocha `before` and stopped in its `after`; the function gives
 * them. `env` is added to what the two share (the server and the JWT secret).
 */
export const twoInstancesOnOneCouch = (
  env: Record<string, string> = {},
): (() => { readonly a: TestService; readonly b: TestService }) => {
  const current = fixture(
    'file',
    async () => {
      const couch = await startCouchServer();
      const shared = {
        COUCHDB_URL: couch.url,
        // Instances of one deployment share the secret the bucket names are keyed with.
        JWT_SECRET: 'one-deployment-shares-this-secret-0123456789',
        ...env,
      };
      return {
        couch,
        a: await startTestService({ env: shared }),
        b: await startTestService({ env: shared }),
      };
    },
    async ({ couch, a, b }) => {
      await a.dispose();
      await b.dispose();
      await couch.dispose();
    },
  );
  return () => {
    const { a, b } = current();
    return { a, b };
  };
};
