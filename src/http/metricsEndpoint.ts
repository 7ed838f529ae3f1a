/**
 * `GET /metrics` (decision 0021): the Prometheus text format, outside `/api/v1` because it is not part
 * of the contract. A request from an address of METRICS_ALLOW, or bearing METRICS_TOKEN, reads it;
 * with neither setting the endpoint is not mounted and answers the 404 of any unknown path, so its
 * existence is not advertised.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import type { Request, Response } from 'express';
import * as E from 'fp-ts/lib/Either.js';
import type { MetricsAccess } from '../config/config.js';
import { equalBytes, sha256 } from '../crypto/bytes.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { Metrics } from '../metrics/metrics.js';
import { sendError } from './middleware/errorHandler.js';
import { requestState } from './requestContext.js';
import { bearerToken } from './runRoute.js';

export const METRICS_PATH = '/metrics';

/**
 * The client address is `req.ip`: the socket's address unless TRUST_PROXY names the proxies allowed to
 * say otherwise (as for rate limits), so a forged X-Forwarded-For cannot open the endpoint.
 */
export const metricsAccessCheck = (access: MetricsAccess): ((req: Request) => E.Either<ApiError, void>) => {
  const allowed = new BlockList();
  for (const range of access.allow) allowed.addSubnet(range.network, range.prefix, range.family);
  const expected = access.token === undefined ? undefined : sha256(access.token);
  const fromAllowedAddress = (address: string | undefined): boolean =>
    address !== undefined &&
    (isIPv4(address) || isIPv6(address)) &&
    allowed.check(address, isIPv6(address) ? 'ipv6' : 'ipv4');
  return (req) => {
    if (fromAllowedAddress(req.ip ?? req.socket.remoteAddress)) return E.right(undefined);
    if (expected === undefined)
      return E.left(apiError('FORBIDDEN_ROLE', 'This address may not read the metrics.'));
    const sent = bearerToken(req);
    // Digests have one length, so the comparison takes the same time whatever was sent.
    if (sent !== undefined && equalBytes(sha256(sent), expected)) return E.right(undefined);
    return E.left(apiError('UNAUTHORIZED', 'A valid metrics token is required.'));
  };
};

export const metricsEndpoint = (access: MetricsAccess, metrics: Metrics) => {
  const check = metricsAccessCheck(access);
  return async (req: Request, res: Response): Promise<void> => {
    requestState(req).route = `GET ${METRICS_PATH}`;
    const allowed = check(req);
    if (E.isLeft(allowed)) {
      sendError(req, res, allowed.left);
      return;
    }
    const body = await metrics.scrape();
    res.status(200).setHeader('Cache-Control', 'no-store').type(metrics.contentType).send(body);
  };
};
