import type { NextFunction, Request, Response } from 'express';
import type { Metrics } from '../../metrics/metrics.js';
import { requestState } from '../requestContext.js';

/** The route's template without the method the log line puts before it; `unmatched` when none. */
export const routeLabel = (route: string | undefined): string =>
  route === undefined ? 'unmatched' : route.slice(route.indexOf(' ') + 1);

/**
 * Observes every answered request by method, route template and status, timed from the request's
 * start (`requestLog`, which must run first). A request whose client went away unanswered is not
 * counted, as it is not logged.
 */
export const httpMetrics =
  (metrics: Metrics) =>
  (req: Request, res: Response, next: NextFunction): void => {
    const state = requestState(req);
    res.on('finish', () => {
      metrics.httpRequest({
        method: req.method,
        route: routeLabel(state.route),
        status: res.statusCode,
        seconds: Number(process.hrtime.bigint() - state.startedAt) / 1e9,
      });
    });
    next();
  };
