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
export const CORS_EXPOSED_HEADERS = [
  'X-Correlation-Id',
  'Location',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
] as const;

export const PREFLIGHT_MAX_AGE_SECONDS = 86_400;

/**
 * Reflects the request origin only when it is on the configured list; never `*`, and never the
 * `null` origin (sandboxed frames and file: pages send it, and it cannot be told apart from an attacker).
 * The `cors` package does the allowed case. For a refused origin it does nothing at all, so two things
 * of decision 0006 are added around it: `Vary: Origin` on every response (a shared cache must not
 * serve one origin's answer to another), and a refused preflight answered 204 with no
 * `Access-Control-Allow-*` header (the browser then blocks the request) instead of falling through to
 * the 404 handler.
 */
export const corsMiddleware = (allowedOrigins: ReadonlyArray<string>): RequestHandler => {
  const allowed = new Set(allowedOrigins);
  const library = cors({
    origin: (origin, callback) =>
      callback(null, origin !== undefined && origin !== 'null' && allowed.has(origin)),
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: [...CORS_ALLOWED_HEADERS],
    exposedHeaders: [...CORS_EXPOSED_HEADERS],
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    optionsSuccessStatus: 204,
    preflightContinue: false,
  });
  return (req, res, next) => {
    res.vary('Origin');
    library(req, res, (error?: unknown) => {
      // `cors` calls back with null, not undefined, when it lets a request through.
      if (error !== undefined && error !== null) {
        next(error);
        return;
      }
      if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
        res.statusCode = 204;
        res.setHeader('Content-Length', '0');
        res.end();
        return;
      }
      next();
    });
  };
};
