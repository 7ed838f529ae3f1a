import * as E from 'fp-ts/lib/Either.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { Actor } from '../domain/principal.js';
import type { HandlerContext } from './route.js';

/** The actor of an authenticated route's request (its auth class guarantees a principal). */
export const actorOf = (
  ctx: Pick<HandlerContext<unknown, unknown, unknown>, 'principal' | 'deviceId'> & {
    readonly requestKey?: string | undefined;
    readonly freshKey?: boolean;
  },
): E.Either<ApiError, Actor> =>
  ctx.principal === null
    ? E.left(apiError('UNAUTHORIZED'))
    : E.right({
        principal: ctx.principal,
        deviceId: ctx.deviceId,
        ...(ctx.requestKey === undefined ? {} : { requestKey: ctx.requestKey }),
        ...(ctx.requestKey !== undefined && ctx.freshKey === true ? { freshKey: true } : {}),
      });
