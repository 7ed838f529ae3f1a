import type { NextFunction, Request, Response } from 'express';

/** The contract's security headers, exact values, set before anything else so every response has them. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Strict-Transport-Security': 'max-age=63072000; includeSubDomains; preload',
  'Content-Security-Policy': "default-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'self'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'X-XSS-Protection': '0',
  'Referrer-Policy': 'strict-origin-when-cross-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), interest-cohort=()',
};

export const securityHeaders = (req: Request, res: Response, next: NextFunction): void => {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
  // API responses carry personal data: no cache, shared or private, may keep them.
  if (req.path.startsWith('/api/')) res.setHeader('Cache-Control', 'no-store');
  next();
};
