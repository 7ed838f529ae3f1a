import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { beginRequest, CORRELATION_HEADER } from '../requestContext.js';

/**
 * Starts the request's state and logs one line when it ends. The line names the route template,
 * never the URL or body, so search strings and personal data stay out of the logs.
 */
export const requestLog =
  (logger: Logger, clock?: () => Date) =>
  (req: Request, res: Response, next: NextFunction): void => {
    const state = beginRequest(req, clock);
    res.setHeader(CORRELATION_HEADER, state.correlationId);
    res.on('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - state.startedAt) / 1e6;
      logger.info(
        {
          correlationId: state.correlationId,
          method: req.method,
          route: state.route ?? '(unmatched)',
          status: res.statusCode,
          durationMs: Math.round(durationMs * 10) / 10,
          userId: state.principal?.userId,
          deviceId: state.deviceId,
        },
        'request',
      );
    });
    next();
  };
