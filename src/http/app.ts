/** `makeApp` builds the Express application from its dependencies and the route registry; it never listens. */
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { BytesType } from '../domain/codec.js';
import { apiError } from '../domain/errors.js';
import type { AppDeps } from './deps.js';
import { KIOSK_BASE, kioskRouter, OFFICE_BASE, officeRouter } from './kioskStatic.js';
import { METRICS_PATH, metricsEndpoint } from './metricsEndpoint.js';
import { corsMiddleware } from './middleware/cors.js';
import { errorHandler, sendError } from './middleware/errorHandler.js';
import { httpMetrics } from './middleware/httpMetrics.js';
import { requestLog } from './middleware/requestLog.js';
import { securityHeaders } from './middleware/securityHeaders.js';
import { routes as defaultRoutes } from './registry.js';
import { REPLICATION_BASE, replicationRouter } from './replication.js';
import { routeNamed } from './requestContext.js';
import { expressPath, type Route } from './route.js';
import { routeHandler } from './runRoute.js';

/** Every JSON body; routes whose body is a file take it as bytes up to their codec's `maxBytes`. */
export const BODY_LIMIT = '1mb';

export const makeApp = (deps: AppDeps, routes: ReadonlyArray<Route> = defaultRoutes): Express => {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');
  // The client IP (rate limits) comes from the socket unless proxies are trusted explicitly, so a
  // forged X-Forwarded-For cannot reset a counter.
  app.set('trust proxy', deps.config.trustProxy === false ? false : deps.config.trustProxy);
  app.use(requestLog(deps.logger, deps.clock));
  // Observed only where someone may read them (0021): otherwise not even a listener per request.
  const metricsAccess = deps.config.metrics;
  if (metricsAccess !== undefined) app.use(httpMetrics(deps.metrics));
  app.use(securityHeaders);
  app.use(corsMiddleware(deps.config.corsOrigins));
  if (metricsAccess !== undefined) app.get(METRICS_PATH, metricsEndpoint(metricsAccess, deps.metrics));
  // The tablet app (0020): static files, same origin as the API it calls.
  app.use(KIOSK_BASE, routeNamed(`${KIOSK_BASE}/*`), kioskRouter(deps.logger));
  // The office web app (0032): the same way, for the coordinators' desks.
  app.use(OFFICE_BASE, routeNamed(`${OFFICE_BASE}/*`), officeRouter(deps.logger));
  app.use(
    express.json({ limit: BODY_LIMIT, strict: true, type: ['application/json', 'application/*+json'] }),
  );
  // The CouchDB-protocol endpoints for tablets: their own router (CouchDB's shapes, not the registry's).
  app.use(REPLICATION_BASE, routeNamed(`${REPLICATION_BASE}/*`), replicationRouter(deps));
  for (const route of routes) {
    const body = route.body;
    if (body instanceof BytesType) {
      // Only this route's own media type is read as bytes; any other body reaches the codec as
      // whatever the JSON parser made of it, and is refused there (400) with the expected type.
      app[route.method](
        expressPath(route.path),
        express.raw({ type: [...body.mediaTypes], limit: body.maxBytes }),
        routeHandler(route, deps, routes),
      );
    } else app[route.method](expressPath(route.path), routeHandler(route, deps, routes));
  }
  app.use((req: Request, res: Response, _next: NextFunction) => {
    sendError(req, res, apiError('NOT_FOUND', 'No such route.'));
  });
  app.use(errorHandler(deps.logger, deps.metrics));
  return app;
};
