/** The process entry point: configuration from the environment, the service, and a graceful stop. */
import { totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import * as E from 'fp-ts/lib/Either.js';
import type { Logger } from 'pino';
import { decodeConfig } from './config/config.js';
import { BESIDE_HEAP_MB, memoryShortfall, semiSpaceMbOf } from './config/runtime.js';
import { createLogger } from './log/logger.js';
import { startService } from './service.js';
import { onDatabaseState } from './store/guardedLevel.js';
import { isIndexWriteRefusal } from './store/storeErrors.js';

/**
 * pouchdb-find brings an index up to date batch by batch, and starts saving a batch without awaiting
 * it before it reads the next (pouchdb-abstract-mapreduce 9.0.0, `updateViewInQueue`:
 * `queue.add(processChange(…))` then `processNextBatch()`; apache/pouchdb#9265, open). A save that fails
 * (the index database is full, or refuses writes after an I/O error) rejects while nothing holds it,
 * for as long as the next read takes, and Node ends the process on it. There is no hook: the promise
 * lives in a queue inside the library; the same failure also reaches the query (through the queue's
 * end), and the guard has marked the index database failed before the rejection existed
 * (`guardedLevel.ts`), so the query is answered 503 and the index caught up after the reopen. Only
 * such a refusal is let through here; any other unhandled rejection still ends the process, as Node
 * does without a listener.
 */
const surviveIndexWriteRefusals = (logger: Logger): void => {
  process.on('unhandledRejection', (reason) => {
    if (isIndexWriteRefusal(reason)) {
      logger.warn(
        { errorName: 'StoreFailedError' },
        'an index update failed where pouchdb-find does not await it; the index database refuses writes until it is reopened',
      );
      return;
    }
    throw reason instanceof Error
      ? reason
      : new Error('a promise rejected with a non-error value, unhandled');
  });
};

const logDatabaseStates = (logger: Logger): void => {
  onDatabaseState(({ database, state, detail }) => {
    if (state === 'open') logger.info({ database }, 'database reopened; it accepts writes again');
    else if (state === 'lost')
      logger.error(
        { database, detail },
        'database reopened without its last acknowledged write; it refuses writes until a restart',
      );
    else if (state === 'failed')
      logger.warn(
        { database, detail },
        'database failed on an I/O error; refusing writes until it is reopened',
      );
    else if (state === 'down') logger.warn({ database, detail }, 'database could not be reopened; retrying');
  });
};

const main = async (): Promise<void> => {
  const decoded = decodeConfig(process.env);
  if (E.isLeft(decoded)) {
    process.stderr.write(
      `chamada: invalid configuration\n${decoded.left.map((l) => `  - ${l}`).join('\n')}\n`,
    );
    process.exit(2);
  }
  const config = decoded.right;
  const logger = createLogger(config.logLevel);
  surviveIndexWriteRefusals(logger);
  logDatabaseStates(logger);
  const service = await startService(config, { logger });
  logger.info(
    { url: service.url, store: service.store.backend, authMode: config.authMode, nodeEnv: config.nodeEnv },
    'chamada listening',
  );
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  const short = memoryShortfall(
    getHeapStatistics().heap_size_limit,
    semiSpaceMbOf(flags),
    process.constrainedMemory(),
    totalmem(),
  );
  if (short !== undefined)
    logger.warn(
      { ...short, besideHeapMb: BESIDE_HEAP_MB },
      'the memory limit leaves too little beside the heap limit: under a large import the process may be killed; raise the limit or lower --max-old-space-size (decision 0077)',
    );
  let signalled = false;
  const stop = (signal: NodeJS.Signals) => {
    if (signalled) return;
    signalled = true;
    logger.info({ signal }, 'stopping');
    service.stop().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (e: unknown) => {
        logger.error({ errorName: e instanceof Error ? e.name : typeof e }, 'error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
};

main().catch((e: unknown) => {
  process.stderr.write(`chamada: failed to start: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
