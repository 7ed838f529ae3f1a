import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../config/config.js';

/**
 * Structured JSON logs. Call sites log ids, codes and timings only; the redaction list is a second
 * line of defence for header values that must never reach a log even if a call site slips.
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
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
