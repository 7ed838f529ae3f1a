/**
 * The one path every request to a registered route takes:
 * rate limit (public routes, per IP) → authenticate → device id → rate limit (per principal and device)
 * → authorise → CSRF → Idempotency-Key → decode → (claim) → handle
 * → encode → (record).
 * Every failure is a value turned into the envelope; handlers never write responses themselves.
 */
import type { NextFunction, Request, Response } from 'express';
import * as E from 'fp-ts/lib/Either.js';
import { isUuid } from '../domain/codec.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { Permission, Principal } from '../domain/principal.js';
import { requestKeyOf } from '../lib/requestIds.js';
import { type AuthClass, authorize } from '../rules/authorization.js';
import { deadlineError, raceDeadline, requestDeadline } from './deadline.js';
import type { AppDeps } from './deps.js';
import { executeIdempotently, idempotencyKeyOf, REPLAY_HEADER, requestFingerprint } from './idempotency.js';
import { countCaller, countRequest } from './rateLimit.js';
import { type RenderedResponse, renderError, renderReply, sendRendered } from './render.js';
import { CORRELATION_HEADER, requestState } from './requestContext.js';
import { type AuditFacts, MUTATING_METHODS, needsIdempotencyKey, type Route } from './route.js';

const BEARER_RE = /^Bearer ([\x21-\x7e]{1,8192})$/;

export const bearerToken = (req: Request): string | undefined => {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  return BEARER_RE.exec(header)?.[1];
};

export const deviceIdOf = (req: Request): E.Either<ApiError, string> => {
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

interface Caller {
  readonly principal: Principal | null;
  readonly deviceId: string | null;
}

/**
 * Who may call, as declared: what the one authentication chain checks before any handler runs. Every
 * registered route gives it from its declaration; the CouchDB-protocol replication router declares its
 * own (`src/http/replication.ts`).
 */
export interface Access {
  readonly auth: AuthClass;
  readonly permission?: Permission | undefined;
  /** Whether the call must pass the CSRF check (every mutation of a registered route). */
  readonly csrf: boolean;
  /** The refusal when the principal's roles do not reach the route: the catalogue's own otherwise. */
  readonly forbidden?: ApiError;
}

const accessOf = (route: Route): Access => ({
  auth: route.auth,
  permission: route.permission,
  csrf: MUTATING_METHODS.has(route.method),
});

/**
 * The one authentication chain: bearer token → principal → X-Device-Id → the caller's rate limit →
 * auth class or permission → CSRF. The principal and the device id are recorded on the request
 * state as soon as they are known.
 */
export const authenticateCaller = async (
  access: Access,
  req: Request,
  deps: AppDeps,
): Promise<E.Either<ApiError, Caller>> => {
  if (access.auth === 'none') return E.right({ principal: null, deviceId: null });
  const token = bearerToken(req);
  if (token === undefined) return E.left(apiError('UNAUTHORIZED', 'A bearer access token is required.'));
  const principal = await deps.authenticator.authenticate(token);
  if (E.isLeft(principal)) return principal;
  const state = requestState(req);
  state.principal = principal.right;
  const deviceId = deviceIdOf(req);
  if (E.isLeft(deviceId)) return deviceId;
  state.deviceId = deviceId.right;
  // Counted once the caller is known and before anything it may not do, so refusals count too.
  const limited = countCaller(req, deps, { userId: principal.right.userId, deviceId: deviceId.right });
  if (E.isLeft(limited)) return limited;
  const granted = authorize(access.auth, principal.right, access.permission);
  if (E.isLeft(granted))
    return E.left(
      access.forbidden ?? apiError(granted.left === 'FORBIDDEN_ROLE' ? 'FORBIDDEN_ROLE' : 'UNAUTHORIZED'),
    );
  const csrf = checkCsrf(access, req, principal.right, deps);
  if (E.isLeft(csrf)) return csrf;
  return E.right({ principal: principal.right, deviceId: deviceId.right });
};

/**
 * Cookie mode: every mutation carries the session's CSRF token in X-CSRF-Token. Bearer mode: the
 * header is optional, but when sent it must match (an extra per-session check the contract allows).
 */
const checkCsrf = (
  access: Access,
  req: Request,
  principal: Principal,
  deps: AppDeps,
): E.Either<ApiError, void> => {
  if (principal.csrfToken === undefined || !access.csrf) return E.right(undefined);
  const sent = req.headers['x-csrf-token'];
  if (sent === undefined && deps.config.sessionMode === 'bearer') return E.right(undefined);
  return sent === principal.csrfToken ? E.right(undefined) : E.left(apiError('CSRF_TOKEN_INVALID'));
};

/** Counted before anything else, so a flood of malformed requests is limited like any other. */
const checkRateLimit = async (
  route: Route,
  req: Request,
  deps: AppDeps,
): Promise<E.Either<ApiError, void>> =>
  route.rateLimit === undefined
    ? E.right(undefined)
    : countRequest(req, deps, {
        scope: route.rateLimit.scope,
        clientKey: req.ip ?? req.socket.remoteAddress ?? 'unknown',
        policy: route.rateLimit.policy,
      });

/** What the audit entry learns while the request runs. */
export interface Seen {
  principal: Principal | null;
  subjectId?: string;
  details?: AuditFacts;
}

interface Outcome {
  readonly rendered: RenderedResponse;
  /** Set when this is the stored response of an earlier request with the same key. */
  readonly replayOf?: string;
  /** Settles once the idempotency ledger holds the response; awaited before the answer is sent. */
  readonly recorded?: Promise<void>;
}

/** Everything up to the response, as a value: the caller audits and sends it. */
const respond = async (
  route: Route,
  req: Request,
  deps: AppDeps,
  routes: ReadonlyArray<Route>,
  seen: Seen,
): Promise<Outcome> => {
  const state = requestState(req);
  const fail = (error: ApiError): Outcome => ({ rendered: renderError(error, state.correlationId) });
  const limited = await checkRateLimit(route, req, deps);
  if (E.isLeft(limited)) return fail(limited.left);
  const caller = await authenticateCaller(accessOf(route), req, deps);
  if (E.isLeft(caller)) return fail(caller.left);
  seen.principal = caller.right.principal;
  const idempotent = needsIdempotencyKey(route);
  const key = idempotent ? idempotencyKeyOf(req) : E.right('');
  if (E.isLeft(key)) return fail(key.left);
  const prepared = route.prepare({ params: req.params, query: req.query, body: req.body });
  if (E.isLeft(prepared)) return fail(prepared.left);

  const run = async (freshKey = false): Promise<RenderedResponse> => {
    const reply = await prepared.right({
      ...caller.right,
      correlationId: state.correlationId,
      requestKey:
        idempotent && caller.right.principal !== null
          ? requestKeyOf(caller.right.principal.userId, key.right)
          : undefined,
      freshKey,
      receivedAt: state.receivedAt,
      headers: req.headers,
      deps,
      routes,
    });
    if (E.isLeft(reply)) return renderError(reply.left, state.correlationId);
    if (reply.right.auditSubjectId !== undefined) seen.subjectId = reply.right.auditSubjectId;
    if (reply.right.auditDetails !== undefined) seen.details = reply.right.auditDetails;
    return renderReply(reply.right);
  };

  if (!idempotent || caller.right.principal === null) return { rendered: await run() };

  const fingerprint = requestFingerprint({
    method: route.method,
    route: route.path,
    params: req.params,
    query: req.query,
    body: req.body,
  });
  if (E.isLeft(fingerprint)) return fail(fingerprint.left);
  const outcome = await executeIdempotently({
    ledger: deps.idempotency.ledger,
    settings: deps.idempotency.settings,
    clock: deps.clock,
    key: key.right,
    principalId: caller.right.principal.userId,
    fingerprint: fingerprint.right,
    correlationId: state.correlationId,
    run,
    onStoreFailure: (what) => {
      deps.metrics.storeError('idempotency_ledger');
      deps.logger.warn({ correlationId: state.correlationId, what }, 'idempotency ledger write failed');
    },
  });
  switch (outcome.kind) {
    case 'rejected':
      return fail(outcome.error);
    case 'fresh':
      return { rendered: outcome.response, recorded: outcome.recorded };
    case 'replay':
      deps.metrics.idempotentReplay(route.path);
      return { rendered: outcome.response, replayOf: outcome.correlationId };
  }
};

const ID_PARAMS = [
  'studentId',
  'userId',
  'consentId',
  'classId',
  'nucleusId',
  'sessionId',
  'printerId',
  'name',
] as const;

/** The subject an audit entry is about: what the handler named, else the id in the path. */
const subjectOf = (req: Request, seen: { subjectId?: string }): string | null => {
  if (seen.subjectId !== undefined) return seen.subjectId;
  for (const p of ID_PARAMS) {
    const v = req.params[p];
    if (typeof v === 'string' && v.length <= 200) return v;
  }
  return null;
};

/** The error code of a rendered envelope, for the audit details (never the message or the body). */
const errorCodeOf = (rendered: RenderedResponse): string | undefined => {
  if (rendered.status < 400 || typeof rendered.body !== 'string') return undefined;
  const match = /^\{"error":\{"code":"([A-Z_]+)"/.exec(rendered.body);
  return match?.[1];
};

/** What an endpoint declares about its audit entries: its name and what kind of call it is. */
export interface AuditDeclaration {
  /** `METHOD /path/{template}`, as the audit log names endpoints. */
  readonly endpoint: string;
  /** Mutations are audited whatever their outcome; reads only when declared sensitive. */
  readonly action: 'MUTATION' | 'READ_SENSITIVE' | 'EXPORT' | undefined;
}

/** How a call ended, as far as its audit entry tells. */
export interface AuditedOutcome {
  readonly status: number;
  readonly errorCode?: string | undefined;
  readonly replayOf?: string | undefined;
}

/**
 * Mutations are audited whatever their outcome (awaited: the record of a change is part of the
 * change); successful reads of personal or sensitive data are audited in the background.
 */
export const auditCall = async (
  declared: AuditDeclaration,
  req: Request,
  deps: AppDeps,
  outcome: AuditedOutcome,
  seen: Seen,
): Promise<void> => {
  const mutation = declared.action === 'MUTATION';
  const sensitiveRead = declared.action !== undefined && !mutation && outcome.status < 300;
  if (!mutation && !sensitiveRead) return;
  const state = requestState(req);
  const written = deps.audit.append({
    correlation_id: state.correlationId,
    actor_user_id: seen.principal?.userId ?? null,
    actor_role: seen.principal?.primaryRole ?? null,
    endpoint: declared.endpoint,
    outcome: outcome.status < 400 ? 'SUCCESS' : 'FAILURE',
    details: {
      // The handler's facts first: the framework's own fields are never overwritten by them.
      ...seen.details,
      status: outcome.status,
      ...(outcome.errorCode === undefined ? {} : { errorCode: outcome.errorCode }),
      ...(outcome.replayOf === undefined ? {} : { replayOf: outcome.replayOf }),
      ...(state.deviceId === undefined ? {} : { deviceId: state.deviceId }),
    },
    subject_id: subjectOf(req, seen),
    action: declared.action ?? 'READ_SENSITIVE',
  });
  const report = (e: unknown) =>
    deps.logger.error(
      { correlationId: state.correlationId, errorName: e instanceof Error ? e.name : typeof e },
      'audit write failed',
    );
  if (mutation) await written.catch(report);
  else written.catch(report);
};

const audit = (route: Route, req: Request, deps: AppDeps, outcome: Outcome, seen: Seen) =>
  auditCall(
    {
      endpoint: `${route.method.toUpperCase()} ${route.path}`,
      action: MUTATING_METHODS.has(route.method) ? 'MUTATION' : route.auditRead,
    },
    req,
    deps,
    { status: outcome.rendered.status, errorCode: errorCodeOf(outcome.rendered), replayOf: outcome.replayOf },
    seen,
  );

/** The route's bound: REQUEST_DEADLINE_MS, or its own when that is longer (decision 0046). */
const deadlineOf = (route: Route, deps: AppDeps): number =>
  Math.max(deps.config.requestDeadlineMs, route.deadline?.ms ?? 0);

/**
 * Answers 503 at the deadline, and says what the request went on to: its late answer is never sent.
 * A mutation's is in the idempotency ledger (when final) for the client's retry; its audit entry was
 * written as for any answer.
 */
export const answerAtDeadline = <A>(
  req: Request,
  deps: AppDeps,
  limitMs: number,
  late: Promise<A>,
  send: (error: ApiError) => void,
  statusOf: (value: A) => number,
): void => {
  const state = requestState(req);
  deps.metrics.storeError('deadline');
  deps.logger.warn(
    { correlationId: state.correlationId, route: state.route, deadlineMs: limitMs },
    'request answered 503 at its deadline',
  );
  send(deadlineError(limitMs));
  const startedAt = Date.now();
  late.then(
    (value) =>
      deps.logger.info(
        { correlationId: state.correlationId, status: statusOf(value), lateMs: Date.now() - startedAt },
        'a request answered at its deadline has ended',
      ),
    (e: unknown) =>
      deps.logger.warn(
        {
          correlationId: state.correlationId,
          errorName: e instanceof Error ? e.name : typeof e,
          lateMs: Date.now() - startedAt,
        },
        'a request answered at its deadline has failed',
      ),
  );
};

export const routeHandler =
  (route: Route, deps: AppDeps, routes: ReadonlyArray<Route>) =>
  async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const state = requestState(req);
    state.route = `${route.method.toUpperCase()} ${route.path}`;
    const limitMs = deadlineOf(route, deps);
    try {
      const seen: Seen = { principal: null };
      const raced = await raceDeadline(requestDeadline(req, limitMs), async () => {
        const outcome = await respond(route, req, deps, routes, seen);
        // The ledger's copy of the response and the audit entry are written side by side; the answer
        // goes out once both are stored.
        await Promise.all([outcome.recorded, audit(route, req, deps, outcome, seen)]);
        return outcome;
      });
      if (raced.kind === 'passed') {
        answerAtDeadline(
          req,
          deps,
          limitMs,
          raced.late,
          (error) => {
            for (const [name, value] of Object.entries(state.rateLimitHeaders ?? {}))
              res.setHeader(name, value);
            sendRendered(res, renderError(error, state.correlationId));
          },
          (outcome) => outcome.rendered.status,
        );
        return;
      }
      const outcome = raced.value;
      if (outcome.replayOf !== undefined) {
        deps.logger.info(
          { correlationId: state.correlationId, replayOf: outcome.replayOf },
          'idempotent replay',
        );
        // A replay is the original response: its status, headers, body and correlation id.
        res.setHeader(CORRELATION_HEADER, outcome.replayOf);
        res.setHeader(REPLAY_HEADER, 'true');
      }
      for (const [name, value] of Object.entries(state.rateLimitHeaders ?? {})) res.setHeader(name, value);
      sendRendered(res, outcome.rendered, (e) =>
        deps.logger.error(
          { correlationId: state.correlationId, errorName: e instanceof Error ? e.name : typeof e },
          'response stream failed; connection cut',
        ),
      );
    } catch (e) {
      next(e);
    }
  };
