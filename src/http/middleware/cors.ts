import cors from 'cors';
import type { RequestHandler } from 'express';

export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'X-Device-Id',
  'X-Csrf-Token',
  'X-Idempotency-Key',
  'Idempotency-Key',
] as const;

/** Headers a browser client needs to read: tracing, created resources, back-off. */
export const CORS_EXPOSED_HEADERS = ['X-Correlation-Id', 'Location', 'Retry-After'] as const;

export const PREFLIGHT_MAX_AGE_SECONDS = 86_400;

/**
 * Reflects the request origin only when it is on the configured list; never `*`, and never the
 * `null` origin (sandboxed frames and file: pages send it, and it cannot be told apart from an attacker).
 */
export const corsMiddleware = (allowedOrigins: ReadonlyArray<string>): RequestHandler => {
  const allowed = new Set(allowedOrigins);
  return cors({
    origin: (origin, callback) =>
      callback(null, origin !== undefined && origin !== 'null' && allowed.has(origin)),
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: [...CORS_ALLOWED_HEADERS],
    exposedHeaders: [...CORS_EXPOSED_HEADERS],
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    optionsSuccessStatus: 204,
    preflightContinue: false,
  });
};
