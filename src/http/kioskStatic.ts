/**
 * The kiosk web app (decision 0020): the Vite build in dist/kiosk/ served as static files at /kiosk/.
 * Hashed assets are immutable for a year; everything else (index.html, sw.js, the manifest) is
 * revalidated on every load, so a new build reaches tablets on their next visit online. When the app
 * has not been built, /kiosk/ answers 404 saying how to build it, and start-up logs the same.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import { apiError } from '../domain/errors.js';
import { sendError } from './middleware/errorHandler.js';

export const KIOSK_BASE = '/kiosk';
/** <repository>/dist/kiosk, from src/http (tsx) and from dist/server (the bundle) alike. */
export const KIOSK_DIR = fileURLToPath(new URL('../../dist/kiosk/', import.meta.url));
export const IMMUTABLE = 'public, max-age=31536000, immutable';
export const REVALIDATE = 'no-cache';
const NOT_BUILT = 'The kiosk app is not built: run `npm run build` (or `npm run build:kiosk`), then reload.';

/**
 * The kiosk's files allow the camera to their own origin (decision 0053: scanning a family pass); the
 * rest of the contract's policy stands, and every other response, the API's included, keeps `camera=()`.
 * A policy binds the document it came with, so this matters for index.html; the same on every kiosk
 * file keeps one rule for the folder.
 */
export const KIOSK_PERMISSIONS_POLICY = 'camera=(self), microphone=(), geolocation=(), interest-cohort=()';

export const kioskRouter = (logger: Logger, dir: string = KIOSK_DIR): Router =>
  builtAppRouter(logger, {
    base: KIOSK_BASE,
    dir,
    notBuilt: NOT_BUILT,
    permissionsPolicy: KIOSK_PERMISSIONS_POLICY,
  });

export const OFFICE_BASE = '/office';
/** <repository>/dist/office: the office web app (decision 0032), built and served like the kiosk. */
export const OFFICE_DIR = fileURLToPath(new URL('../../dist/office/', import.meta.url));

export const officeRouter = (logger: Logger, dir: string = OFFICE_DIR): Router =>
  builtAppRouter(logger, {
    base: OFFICE_BASE,
    dir,
    notBuilt: 'The office app is not built: run `npm run build` (or `npm run build:office`), then reload.',
  });

/** A Vite build served at `base`: the kiosk's rules (caching, the trailing slash, the 404 when not built). */
const builtAppRouter = (
  logger: Logger,
  app: {
    readonly base: string;
    readonly dir: string;
    readonly notBuilt: string;
    /** Replaces the contract's Permissions-Policy on the app's files; absent: the contract's stands. */
    readonly permissionsPolicy?: string;
  },
): Router => {
  const { base, dir } = app;
  const built = () => existsSync(path.join(dir, 'index.html'));
  if (!built()) logger.warn({ path: `${base}/` }, app.notBuilt);
  const assets = path.join(dir, 'assets') + path.sep;
  const r = express.Router();
  // Relative URLs (the worker's scope) need the trailing slash: /kiosk → /kiosk/.
  r.use((req: Request, res: Response, next) => {
    const [pathname, query] = req.originalUrl.split('?', 2);
    if (pathname !== base) return next();
    res.redirect(301, `${base}/${query === undefined ? '' : `?${query}`}`);
  });
  r.use(
    express.static(dir, {
      index: 'index.html',
      redirect: false,
      dotfiles: 'ignore',
      fallthrough: true,
      setHeaders: (res, filePath) => {
        res.setHeader('Cache-Control', filePath.startsWith(assets) ? IMMUTABLE : REVALIDATE);
        if (app.permissionsPolicy !== undefined) res.setHeader('Permissions-Policy', app.permissionsPolicy);
      },
    }),
  );
  r.use((req: Request, res: Response) => {
    sendError(req, res, apiError('NOT_FOUND', built() ? 'No such file.' : app.notBuilt));
  });
  return r;
};
