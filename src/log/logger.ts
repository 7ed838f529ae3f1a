import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../config/config.js';
import { personalStudentFields } from '../domain/student.js';
import { compileRedaction } from './redaction.js';

export const REDACTED = '[redacted]';

/** Secrets and personal fields, at the top level of a line and one object down. */
export const redactedPaths = (): string[] => [
  'authorization',
  'headers.authorization',
  'headers.cookie',
  'password',
  'refreshToken',
  'accessToken',
  '*.password',
  // Personal and sensitive student fields, from the classification beside their codecs.
  ...personalStudentFields().flatMap((f) => [f, `*.${f}`]),
];

/**
 * Structured JSON logs. Call sites log ids, codes and timings only; the redaction is a second line
 * of defence for secrets and personal fields that must never reach a log even if a call site slips.
 * It runs as pino's `log` and `bindings` formatters rather than pino's `redact` option, which
 * re-parses its paths on every line (src/log/redaction.ts).
 */
export const createLogger = (level: LogLevel, destination?: DestinationStream): Logger => {
  const redact = compileRedaction(redactedPaths(), REDACTED);
  return pino(
    {
      level,
      base: { service: 'chamada' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { log: redact, bindings: redact },
    },
    destination,
  );
};
