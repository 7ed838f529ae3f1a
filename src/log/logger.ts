import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../config/config.js';
import { personalStudentFields } from '../domain/student.js';

/**
 * Structured JSON logs. Call sites log ids, codes and timings only; the redaction list is a second
 * line of defence for secrets and personal fields that must never reach a log even if a call site slips.
 */
export const createLogger = (level: LogLevel, destination?: DestinationStream): Logger =>
  pino(
    {
      level,
      base: { service: 'chamada' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'authorization',
          'headers.authorization',
          'headers.cookie',
          'password',
          'refreshToken',
          'accessToken',
          '*.password',
          // Personal and sensitive student fields, from the classification beside their codecs.
          ...personalStudentFields().flatMap((f) => [f, `*.${f}`]),
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
