import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { type ApiError, ApiErrorException, apiError, isApiError } from '../../domain/errors.js';
import { stackFrames } from '../../lib/stackFrames.js';
import type { Metrics } from '../../metrics/metrics.js';
import { isStoreUnavailable } from '../../store/storeErrors.js';
import { renderError, sendRendered } from '../render.js';
import { requestState } from '../requestContext.js';

/** The only place that writes an error envelope. */
export const sendError = (req: Request, res: Response, error: ApiError): void => {
  sendRendered(res, renderError(error, requestState(req).correlationId));
};

interface HttpishError {
  readonly status: number;
  readonly type?: string;
  /** body-parser's limit in bytes, on `entity.too.large` (not checked by the guard: read with care). */
  readonly limit?: unknown;
}

const isHttpishError = (e: unknown): e is HttpishError =>
  typeof e === 'object' && e !== null && 'status' in e && typeof e.status === 'number';

const sizeText = (bytes: number): string =>
  bytes >= 1 << 20 ? `${Math.round(bytes / (1 << 20))} MiB` : `${bytes} bytes`;

/** body-parser and the router raise errors with a `status`; map them onto the catalogue. */
const fromHttpishError = (e: HttpishError): ApiError | undefined => {
  switch (e.type) {
    case 'entity.parse.failed':
      return apiError('VALIDATION_FAILED', 'The request body is not valid JSON.', {
        issues: [{ path: 'body', message: 'malformed JSON' }],
      });
    case 'entity.too.large':
      return apiError(
        'PAYLOAD_TOO_LARGE',
        typeof e.limit === 'number' ? `The request body is larger than ${sizeText(e.limit)}.` : undefined,
      );
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return apiError('UNSUPPORTED_MEDIA_TYPE');
    default:
      if (e.status === 413) return apiError('PAYLOAD_TOO_LARGE');
      if (e.status >= 400 && e.status < 500) return apiError('VALIDATION_FAILED');
      return undefined;
  }
};

export const errorHandler =
  (logger: Logger, metrics: Metrics) =>
  (err: unknown, req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const known =
      err instanceof ApiErrorException
        ? err.error
        : isApiError(err)
          ? err
          : isHttpishError(err)
            ? fromHttpishError(err)
            : undefined;
    if (known !== undefined) {
      sendError(req, res, known);
      return;
    }
    const { correlationId } = requestState(req);
    if (isStoreUnavailable(err)) {
      logger.warn(
        { correlationId, errorName: err instanceof Error ? err.name : typeof err, stack: stackFrames(err) },
        'store unavailable',
      );
      metrics.storeError('request');
      sendError(req, res, apiError('STORE_UNAVAILABLE'));
      return;
    }
    // Only the error's name and frames: messages of store errors may quote document content.
    logger.error(
      {
        correlationId,
        errorName: err instanceof Error ? err.name : typeof err,
        stack: stackFrames(err),
      },
      'unhandled error',
    );
    sendError(req, res, apiError('INTERNAL_ERROR'));
  };
