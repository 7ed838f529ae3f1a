/**
 * The one path every request to a registered route takes:
 * authenticate → device id → authorise → decode → handle → encode. Every failure is a value turned
 * into the envelope by `sendError`; handlers never write responses themselves.
 */

import type { NextFunction, Request, Response } from 'express';
import * as E from 'fp-ts/lib/Either.js';
import { isUuid } from '../domain/codec.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { authorize } from '../rules/authorization.js';
import type { AppDeps } from './deps.js';
import { sendError } from './middleware/errorHandler.js';
import { requestState } from './requestContext.js';
import type { Route } from './route.js';

const BEARER_RE = /^Bearer ([\x21-\x7e]{1,8192})$/;

const bearerToken = (req: Request): string | undefined => {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  return BEARER_RE.exec(header)?.[1];
};

const deviceIdOf = (req: Request): E.Either<ApiError, string> => {
  const value = req.headers['x-device-id'];
  if (typeof value !== 'string' || value === '') {
    return E.left(
      apiError('VALIDATION_FAILED', 'The X-Device-Id header is required.', {
        issues: [{ path: 'headers.x-device-id', message: 'required' }],
      }),
    );
  }
  if (!isUuid(value)) {
    return E.left(
      apiError('VALIDATION_FAILED', 'The X-Device-Id header must be a UUID.', {
        issues: [{ path: 'headers.x-device-id', message: 'expected a UUID' }],
      }),
    );
  }
  return E.right(value.toLowerCase());
};

const authenticateRequest = async (
  route: Route,
  req: Request,
  deps: AppDeps,
): Promise<E.Either<ApiError, { principal: Principal | null; deviceId: string | null }>> => {
  if (route.auth === 'none') return E.right({ principal: null, deviceId: null });
  const token = bearerToken(req);
  if (token === undefined) return E.left(apiError('UNAUTHORIZED', 'A bearer access token is required.'));
  const principal = await deps.authenticator.authenticate(token);
  if (E.isLeft(principal)) return principal;
  const state = requestState(req);
  state.principal = principal.right;
  const deviceId = deviceIdOf(req);
  if (E.isLeft(deviceId)) return deviceId;
  state.deviceId = deviceId.right;
  const access = authorize(route.auth, principal.right);
  if (E.isLeft(access))
    return E.left(apiError(access.left === 'FORBIDDEN_ROLE' ? 'FORBIDDEN_ROLE' : 'UNAUTHORIZED'));
  return E.right({ principal: principal.right, deviceId: deviceId.right });
};

export const routeHandler =
  (route: Route, deps: AppDeps, routes: ReadonlyArray<Route>) =>
  async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const state = requestState(req);
    state.route = `${route.method.toUpperCase()} ${route.path}`;
    try {
      const auth = await authenticateRequest(route, req, deps);
      if (E.isLeft(auth)) {
        sendError(req, res, auth.left);
        return;
      }
      const reply = await route.run(
        { params: req.params, query: req.query, body: req.body },
        { ...auth.right, correlationId: state.correlationId, deps, routes },
      );
      if (E.isLeft(reply)) {
        sendError(req, res, reply.left);
        return;
      }
      const { status, headers, body, mediaType } = reply.right;
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
      res.status(status);
      if (mediaType === 'text/plain') res.type('text/plain; charset=utf-8').send(String(body));
      else res.json(body);
    } catch (e) {
      next(e);
    }
  };
