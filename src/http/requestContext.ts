/**
 * Per-request state kept beside the request object (not in `res.locals`, whose type is `any`).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isUuid } from '../domain/codec.js';
import type { Principal } from '../domain/principal.js';

export interface RequestState {
  readonly correlationId: string;
  readonly startedAt: bigint;
  /** When the request arrived, by the service's clock (which tests may set). */
  readonly receivedAt: Date;
  /** The route template that matched (never the raw URL, whose query may carry personal data). */
  route?: string;
  principal?: Principal;
  deviceId?: string;
  /** `RateLimit` and `RateLimit-Policy` of the limit that counted this request (set on any answer). */
  rateLimitHeaders?: Readonly<Record<string, string>>;
}

const states = new WeakMap<IncomingMessage, RequestState>();

export const CORRELATION_HEADER = 'X-Correlation-Id';

/**
 * A client may send its own correlation id (a UUID) so a tablet can match its retry logs with ours;
 * anything else is replaced by a fresh UUID.
 */
export const beginRequest = (req: IncomingMessage, clock: () => Date = () => new Date()): RequestState => {
  const incoming = req.headers['x-correlation-id'];
  const correlationId =
    typeof incoming === 'string' && isUuid(incoming) ? incoming.toLowerCase() : randomUUID();
  const state: RequestState = { correlationId, startedAt: process.hrtime.bigint(), receivedAt: clock() };
  states.set(req, state);
  return state;
};

export const requestState = (req: IncomingMessage): RequestState => states.get(req) ?? beginRequest(req);

/**
 * Names the route of a request no registry route serves (replication, the kiosk's files) by its
 * template, for its log line and its metrics: never the URL, whose document ids are unbounded.
 */
export const routeNamed =
  (template: string) =>
  (req: IncomingMessage, _res: unknown, next: () => void): void => {
    requestState(req).route = `${req.method ?? 'GET'} ${template}`;
    next();
  };
