/**
 * The part of the CouchDB replication protocol a PouchDB 9 replicator uses, behind the service's own
 * authentication, at `/api/v1/replication/{roster|events}`:
 * - `roster` (pull only): database info, `_local` checkpoints, `_changes` (normal and longpoll; `since`,
 *   `limit`, `style`, `filter=_doc_ids`, `filter=_selector`), `_bulk_get`, and the per-document
 *   `GET ?open_revs=` fallback;
 * - `events` (push only): database info, `_local` checkpoints, `_revs_diff`, `_bulk_docs` with
 *   `new_edits: false`, each document judged like an event of `POST /sync/events`.
 * Nothing else answers (no `_all_dbs`, no database creation or deletion, no design documents): 404 in
 * the envelope. Callers need a bearer token, an `X-Device-Id`, and ADMIN, CHAMADOR or `attendance`:
 * declared once (`REPLICATION_ACCESS`) and checked by the same chain as every registered route
 * (`authenticateCaller`); each endpoint declares its audit action, written by the same `auditCall`.
 *
 * Every endpoint but `_changes` answers within the request's deadline (decision 0046), as registered
 * routes do: PouchDB's replicator takes the 503 like any failed call and tries again from its
 * checkpoint. `_changes` has its own bound: a longpoll waits for a change by design (at most 60 s, a
 * newline every heartbeat), and each of its reads is bounded by the store's silence limit.
 */
import { type NextFunction, type Request, type Response, Router } from 'express';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { type ApiError, apiError } from '../domain/errors.js';
import type { Actor } from '../domain/principal.js';
import { runWithin } from '../lib/deadline.js';
import type { ChangesQuery, ReplicatedDatabase } from '../sync/replicationService.js';
import { requestDeadline } from './deadline.js';
import type { AppDeps } from './deps.js';
import { renderError, sendRendered } from './render.js';
import { requestState, routeNamed } from './requestContext.js';
import { type AuditFacts, expressPath } from './route.js';
import {
  type Access,
  type AuditDeclaration,
  answerAtDeadline,
  auditCall,
  authenticateCaller,
} from './runRoute.js';

export const REPLICATION_BASE = '/api/v1/replication';
const MAX_BULK = 1000;
const MAX_LONGPOLL_MS = 60_000;
const DEFAULT_HEARTBEAT_MS = 10_000;

const invalid = (path: string, message: string): ApiError =>
  apiError('VALIDATION_FAILED', message, { issues: [{ path, message }] });

const COUCH_NAMES: Readonly<Record<number, string>> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  413: 'too_large',
  503: 'service_unavailable',
};

/**
 * The spec's envelope, plus CouchDB's top-level `name` and `reason`: PouchDB's replicator reads the
 * error's name as a string (and stops for good on `unauthorized` and `forbidden` instead of retrying).
 */
const sendError = (req: Request, res: Response, error: ApiError): void => {
  sendRendered(
    res,
    renderError(error, requestState(req).correlationId, {
      name: COUCH_NAMES[error.status] ?? 'unknown_error',
      reason: error.message,
    }),
  );
};

/**
 * Who may replicate, declared once. No CSRF check: PouchDB's replicator sends only the bearer token
 * and the device id it is given, never an ambient cookie, so there is no cross-site request to tell
 * apart; the refusal names who may, since the replicator stops for good on `forbidden`.
 */
export const REPLICATION_ACCESS: Access = {
  auth: 'chamador',
  permission: 'attendance',
  csrf: false,
  forbidden: apiError('FORBIDDEN_ROLE', 'Replication is for ADMIN, CHAMADOR and roles with `attendance`.'),
};

const locals = new WeakMap<Request, Actor>();
const actorOf = (req: Request): Actor => {
  const actor = locals.get(req);
  if (actor === undefined) throw new Error('replication handler reached without authentication');
  return actor;
};

/** The feed, with its own bound (see above); every other endpoint answers within the deadline. */
const CHANGES_PATH = '/roster/_changes';

/** Tells `answerAtDeadline` how the work of a request answered at its deadline ended (its status). */
const lateWork = new WeakMap<Request, (ended: Promise<number>) => void>();

/**
 * Runs the rest of the request under its deadline; when the deadline comes first, answers 503 in
 * CouchDB's shape, and the endpoint's own answer, once it comes, is not sent (`answered`).
 */
const withinDeadline =
  (deps: AppDeps) =>
  (req: Request, res: Response, next: NextFunction): void => {
    if (req.path === CHANGES_PATH) {
      next();
      return;
    }
    const limitMs = deps.config.requestDeadlineMs;
    const deadline = requestDeadline(req, limitMs);
    res.once('finish', deadline.end);
    res.once('close', deadline.end);
    let ended: (outcome: Promise<number>) => void = () => undefined;
    const late = new Promise<number>((resolve) => {
      ended = resolve;
    });
    lateWork.set(req, (outcome) => ended(outcome));
    void deadline.passed.then(() => {
      if (res.headersSent) return;
      answerAtDeadline(
        req,
        deps,
        limitMs,
        late,
        (error) => sendError(req, res, error),
        (status) => status,
      );
    });
    runWithin(deadline, () => next());
  };

/**
 * True when the request was already answered at its deadline: the endpoint's answer (its status, or
 * its failure) is then only reported, never sent.
 */
const answered = (req: Request, res: Response, outcome: () => Promise<number>): boolean => {
  if (!res.headersSent) return false;
  lateWork.get(req)?.(outcome());
  return true;
};

/** Runs the one authentication chain with the declared access, then hands on or refuses in CouchDB's shape. */
const authenticate =
  (deps: AppDeps) =>
  async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    let caller: Awaited<ReturnType<typeof authenticateCaller>>;
    try {
      caller = await authenticateCaller(REPLICATION_ACCESS, req, deps);
    } catch (e) {
      // After the deadline's answer a failure is only reported; before it, the error handler answers.
      if (answered(req, res, () => Promise.reject(e))) return;
      throw e;
    }
    if (E.isLeft(caller)) {
      if (!answered(req, res, () => Promise.resolve(caller.left.status))) sendError(req, res, caller.left);
      return;
    }
    if (!res.headersSent)
      for (const [name, value] of Object.entries(requestState(req).rateLimitHeaders ?? {}))
        res.setHeader(name, value);
    const { principal, deviceId } = caller.right;
    // Only `auth: 'none'` passes without a principal, and replication never declares it.
    if (principal === null) throw new Error('replication reached without a principal');
    locals.set(req, { principal, deviceId });
    next();
  };

/** A protocol answer: CouchDB's status and body, and what the audit entry adds to its details. */
interface CouchReply {
  readonly status: number;
  readonly body: unknown;
  readonly auditDetails?: AuditFacts;
}

/** A longpoll that waited has written its answer itself, a line at a time. */
const STREAMED = 'STREAMED';

type Answer = E.Either<ApiError, CouchReply> | typeof STREAMED;

const reply = (status: number, body: unknown, auditDetails?: AuditFacts): Answer =>
  E.right(auditDetails === undefined ? { status, body } : { status, body, auditDetails });

/** One endpoint, declared: its method, its path template, its audit action and its handler. */
interface ReplicationEndpoint {
  readonly method: 'get' | 'post' | 'put';
  /** The path under the replication base, in the registry's `{param}` form. */
  readonly path: string;
  /** Further paths answered the same way (a trailing slash). */
  readonly aliases?: ReadonlyArray<string>;
  /** Mutations are audited whatever their outcome, sensitive reads when they succeed; none otherwise. */
  readonly audit?: 'MUTATION' | 'READ_SENSITIVE';
  readonly handler: (req: Request, res: Response) => Promise<Answer>;
}

const mount = (r: Router, deps: AppDeps, endpoint: ReplicationEndpoint): void => {
  const template = `${REPLICATION_BASE}${endpoint.path}`;
  const declared: AuditDeclaration = {
    endpoint: `${endpoint.method.toUpperCase()} ${template}`,
    action: endpoint.audit,
  };
  const paths = [endpoint.path, ...(endpoint.aliases ?? [])].map(expressPath);
  r[endpoint.method](paths, routeNamed(template), async (req: Request, res: Response) => {
    let answer: Answer;
    try {
      answer = await endpoint.handler(req, res);
      if (answer !== STREAMED)
        await auditCall(
          declared,
          req,
          deps,
          E.isLeft(answer)
            ? { status: answer.left.status, errorCode: answer.left.code }
            : { status: answer.right.status },
          {
            principal: actorOf(req).principal,
            ...(E.isRight(answer) && answer.right.auditDetails !== undefined
              ? { details: answer.right.auditDetails }
              : {}),
          },
        );
    } catch (e) {
      // After the deadline's answer a failure is only reported; before it, the error handler answers.
      if (answered(req, res, () => Promise.reject(e))) return;
      throw e;
    }
    if (answer === STREAMED) return;
    const status = E.isLeft(answer) ? answer.left.status : answer.right.status;
    if (answered(req, res, () => Promise.resolve(status))) return;
    if (E.isLeft(answer)) sendError(req, res, answer.left);
    else res.status(answer.right.status).json(answer.right.body);
  });
};

const Since = t.union([t.string, t.number]);
const LocalBody = t.UnknownRecord;
const BulkGetBody = t.type({
  docs: t.array(t.intersection([t.type({ id: t.string }), t.partial({ rev: t.string })])),
});
const ChangesBody = t.partial({ doc_ids: t.array(t.string), selector: t.UnknownRecord });
const RevsDiffBody = t.record(t.string, t.array(t.string));
const BulkDocsBody = t.intersection([
  t.type({ docs: t.array(t.UnknownRecord) }),
  t.partial({ new_edits: t.boolean }),
]);

/** A bulk body, decoded and held to at most `MAX_BULK` items (CouchDB's own bodies have no bound). */
const decodeBulk = <A>(
  codec: t.Decoder<unknown, A>,
  body: unknown,
  count: (decoded: A) => number,
  refusal: () => ApiError,
): E.Either<ApiError, A> => {
  const decoded = codec.decode(body);
  return E.isRight(decoded) && count(decoded.right) <= MAX_BULK ? E.right(decoded.right) : E.left(refusal());
};

const queryString = (req: Request, name: string): string | undefined => {
  const v = req.query[name];
  return typeof v === 'string' ? v : undefined;
};

const intParam = (req: Request, name: string): E.Either<ApiError, number | undefined> => {
  const v = queryString(req, name);
  if (v === undefined) return E.right(undefined);
  return /^\d{1,9}$/.test(v)
    ? E.right(Number(v))
    : E.left(invalid(`query.${name}`, 'expected a non-negative integer'));
};

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** `_changes` parameters from the query string and (for POST) the body, validated. */
const changesQuery = (req: Request): E.Either<ApiError, ChangesQuery & { longpoll: boolean }> => {
  const sinceRaw = queryString(req, 'since') ?? '0';
  const since = /^\d+$/.test(sinceRaw) ? Number(sinceRaw) : sinceRaw;
  if (!Since.is(since) || sinceRaw.length > 200) return E.left(invalid('query.since', 'invalid sequence'));
  const limit = intParam(req, 'limit');
  if (E.isLeft(limit)) return limit;
  const style = queryString(req, 'style');
  if (style !== undefined && style !== 'all_docs' && style !== 'main_only')
    return E.left(invalid('query.style', 'expected all_docs or main_only'));
  const feed = queryString(req, 'feed') ?? 'normal';
  if (feed !== 'normal' && feed !== 'longpoll')
    return E.left(invalid('query.feed', 'expected normal or longpoll'));
  const body: E.Either<t.Errors, t.TypeOf<typeof ChangesBody>> = req.method === 'POST'
    ? ChangesBody.decode(req.body ?? {})
    : E.right({});
  if (E.isLeft(body)) return E.left(invalid('body', 'expected doc_ids or selector'));
  const filter = queryString(req, 'filter');
  let docIds: ReadonlyArray<string> | undefined;
  let selector: Record<string, unknown> | undefined;
  if (filter === '_doc_ids') {
    const fromQuery = queryString(req, 'doc_ids');
    const ids = body.right.doc_ids ?? (fromQuery === undefined ? undefined : parseJson(fromQuery));
    if (!t.array(t.string).is(ids) || ids.length > MAX_BULK)
      return E.left(invalid('doc_ids', `expected at most ${MAX_BULK} document ids`));
    docIds = ids;
  } else if (filter === '_selector') {
    if (body.right.selector === undefined)
      return E.left(invalid('body.selector', 'required with filter=_selector'));
    selector = body.right.selector;
  } else if (filter !== undefined) {
    return E.left(invalid('query.filter', 'only _doc_ids and _selector'));
  }
  return E.right({
    since,
    ...(limit.right === undefined ? {} : { limit: Math.min(limit.right, 10_000) }),
    ...(style === undefined ? {} : { style }),
    ...(docIds === undefined ? {} : { docIds }),
    ...(selector === undefined ? {} : { selector }),
    longpoll: feed === 'longpoll',
  });
};

export const replicationRouter = (deps: AppDeps): Router => {
  const r = Router();
  const rep = deps.replication.service;
  const scope = (req: Request, database: ReplicatedDatabase) => {
    const actor = actorOf(req);
    // The device id was checked by `authenticate`; an actor here always has one.
    return { userId: actor.principal.userId, deviceId: actor.deviceId ?? '', database };
  };

  const changes = async (req: Request, res: Response): Promise<Answer> => {
    const q = changesQuery(req);
    if (E.isLeft(q)) return q;
    const { longpoll, ...query } = q.right;
    const answer = await rep.roster.changes(query);
    if (!longpoll || answer.results.length > 0) return reply(200, answer);
    const timeout = intParam(req, 'timeout');
    const heartbeat = intParam(req, 'heartbeat');
    if (E.isLeft(timeout)) return timeout;
    if (E.isLeft(heartbeat)) return heartbeat;
    // Headers go out now; newlines keep proxies from closing an idle longpoll (as CouchDB does).
    res.status(200).type('application/json');
    res.flushHeaders();
    const every = Math.max(1000, heartbeat.right ?? DEFAULT_HEARTBEAT_MS);
    const beat = setInterval(() => res.write('\n'), every);
    const aborted = new AbortController();
    const onClose = () => aborted.abort();
    res.on('close', onClose);
    try {
      await rep.roster.waitForChange(
        query,
        Math.min(timeout.right ?? MAX_LONGPOLL_MS, MAX_LONGPOLL_MS),
        aborted.signal,
      );
    } finally {
      clearInterval(beat);
      res.off('close', onClose);
    }
    if (!aborted.signal.aborted) res.end(JSON.stringify(await rep.roster.changes(query)));
    return STREAMED;
  };

  const endpoints: ReadonlyArray<ReplicationEndpoint> = [
    {
      method: 'get',
      path: '/',
      handler: async () =>
        reply(200, {
          couchdb: 'Welcome',
          uuid: rep.instanceId,
          vendor: { name: 'Chamada' },
          version: '3.4.0',
        }),
    },
    ...(['roster', 'events'] as const).flatMap((name): ReplicationEndpoint[] => [
      {
        method: 'get',
        path: `/${name}`,
        aliases: [`/${name}/`],
        handler: async () => reply(200, { ...(await rep.info(name)), instance_start_time: '0' }),
      },
      {
        method: 'get',
        path: `/${name}/_local/{id}`,
        handler: async (req) => {
          const id = String(req.params.id);
          const found = await rep.checkpoints.get(scope(req, name), id);
          if (found === undefined) return E.left(apiError('NOT_FOUND', 'No such checkpoint.'));
          return reply(200, { ...found.body, _id: `_local/${id}`, _rev: found.rev });
        },
      },
      {
        method: 'put',
        path: `/${name}/_local/{id}`,
        handler: async (req) => {
          const id = String(req.params.id);
          const body = LocalBody.decode(req.body);
          if (E.isLeft(body) || JSON.stringify(body.right).length > 64_000)
            return E.left(invalid('body', 'expected a JSON object of at most 64 kB'));
          const { _id: _i, _rev: _r, ...rest } = body.right;
          const rev = await rep.checkpoints.put(scope(req, name), id, rest);
          return reply(201, { ok: true, id: `_local/${id}`, rev });
        },
      },
    ]),
    { method: 'get', path: '/roster/_changes', handler: changes },
    { method: 'post', path: '/roster/_changes', handler: changes },
    {
      method: 'post',
      path: '/roster/_bulk_get',
      audit: 'READ_SENSITIVE',
      handler: async (req) => {
        const body = decodeBulk(
          BulkGetBody,
          req.body,
          (b) => b.docs.length,
          () => invalid('body.docs', `expected at most ${MAX_BULK} {id, rev}`),
        );
        if (E.isLeft(body)) return body;
        const answer = await rep.roster.bulkGet(body.right.docs, {
          revs: queryString(req, 'revs') === 'true',
          latest: queryString(req, 'latest') === 'true',
        });
        deps.metrics.replicationPulled(body.right.docs.length);
        return reply(200, answer, { docs: body.right.docs.length });
      },
    },
    {
      method: 'get',
      path: '/roster/{docId}',
      audit: 'READ_SENSITIVE',
      handler: async (req) => {
        const id = String(req.params.docId);
        if (id.startsWith('_')) return E.left(apiError('NOT_FOUND', 'No such route.'));
        const revs = queryString(req, 'revs') === 'true';
        const openRevsRaw = queryString(req, 'open_revs');
        try {
          if (openRevsRaw === undefined) {
            const doc = await rep.roster.get(id, { revs });
            deps.metrics.replicationPulled(1);
            return reply(200, doc, { docs: 1 });
          }
          const openRevs = openRevsRaw === 'all' ? 'all' : parseJson(openRevsRaw);
          if (openRevs !== 'all' && (!t.array(t.string).is(openRevs) || openRevs.length > MAX_BULK))
            return E.left(invalid('query.open_revs', 'expected "all" or a JSON list of revisions'));
          const docs = await rep.roster.openRevs(id, openRevs, {
            revs,
            latest: queryString(req, 'latest') === 'true',
          });
          deps.metrics.replicationPulled(1);
          return reply(200, docs, { docs: 1 });
        } catch (e) {
          if (typeof e === 'object' && e !== null && 'status' in e && e.status === 404)
            return E.left(apiError('NOT_FOUND', 'No such document.'));
          throw e;
        }
      },
    },
    {
      method: 'post',
      path: '/events/_revs_diff',
      handler: async (req) => {
        const body = decodeBulk(
          RevsDiffBody,
          req.body,
          (b) => Object.keys(b).length,
          () => invalid('body', `expected {docId: [rev]} for at most ${MAX_BULK} documents`),
        );
        if (E.isLeft(body)) return body;
        return reply(200, await rep.revsDiff(body.right));
      },
    },
    {
      method: 'post',
      path: '/events/_bulk_docs',
      audit: 'MUTATION',
      handler: async (req) => {
        const body = decodeBulk(
          BulkDocsBody,
          req.body,
          (b) => b.docs.length,
          () => invalid('body.docs', `expected at most ${MAX_BULK} documents`),
        );
        if (E.isLeft(body)) return body;
        const pushed = await rep.push(actorOf(req), body.right.docs);
        deps.metrics.replicationPushed(pushed.stored, pushed.refused.length);
        // As CouchDB with new_edits=false: only the documents that were not stored are listed.
        return reply(201, pushed.refused, { stored: pushed.stored, refused: pushed.refused.length });
      },
    },
  ];

  r.use(withinDeadline(deps));
  r.use(authenticate(deps));
  for (const endpoint of endpoints) mount(r, deps, endpoint);
  r.use((req: Request, res: Response) => {
    if (!answered(req, res, () => Promise.resolve(404)))
      sendError(req, res, apiError('NOT_FOUND', 'No such route.'));
  });
  return r;
};
