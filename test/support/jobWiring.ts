/** What a job's wiring test gives the job instead of the store and the log: an audit and a log it reads back. */
import { Writable } from 'node:stream';
import type { AuditLog, NewAuditEntry } from '../../src/domain/audit.js';
import { createLogger } from '../../src/log/logger.js';

type Logger = ReturnType<typeof createLogger>;

/** An audit log that keeps what is appended, in order; reading it back is not what these tests do. */
export const recordingAudit = (): { readonly entries: NewAuditEntry[]; readonly audit: AuditLog } => {
  const entries: NewAuditEntry[] = [];
  const audit: AuditLog = {
    append: async (entry) => {
      entries.push(entry);
    },
    appendKeyed: async () => undefined,
    query: async () => {
      throw new Error('not read here');
    },
    flush: async () => undefined,
    close: async () => undefined,
  };
  return { entries, audit };
};

/** A logger at info whose lines (JSON, one a chunk) land in `logged`. */
export const capturingLogger = (): { readonly logged: string[]; readonly logger: Logger } => {
  const logged: string[] = [];
  const logger = createLogger(
    'info',
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        logged.push(chunk.toString('utf8'));
        done();
      },
    }),
  );
  return { logged, logger };
};
