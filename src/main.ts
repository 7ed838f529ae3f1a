/** The process entry point: configuration from the environment, the service, and a graceful stop. */
import * as E from 'fp-ts/lib/Either.js';
import { decodeConfig } from './config/config.js';
import { createLogger } from './log/logger.js';
import { startService } from './service.js';

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
  const service = await startService(config, { logger });
  logger.info(
    { url: service.url, store: service.store.backend, authMode: config.authMode, nodeEnv: config.nodeEnv },
    'chamada listening',
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
