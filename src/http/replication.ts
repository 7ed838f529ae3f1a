/**
 * The part of the CouchDB replication protocol a PouchDB 9 replicator uses, behind the service's own
 * authentication, at `/api/v1/replication/{roster|events}`:
 * - `roster` (pull only): database info, `_local` checkpoints, `_changes` (normal and longpoll; `since`,
 *   `limit`, `style`, `filter=_doc_ids`, `filter=_selector`), `_bulk_get`, and the per-document
 *   `GET ?open_revs=` fallback;
 * - `events` (push only): database info, `_local` checkpoints, `_revs_diff`, `_bulk_docs` with
 *   `new_edits: false`, each document judged like an event of `POST /sync/events`.
 * Nothing else answers (no `_all_dbs`, no database creation or deletion, no design documents): 404 in
 * the envelope. Callers need a bearer token, an `X-Device-Id`, and ADMIN, CHAMADOR or `attendance`.
 */
import { type NextFunction, type Request, type Response, Router } from 'express';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import type { NewAuditEntry } from '../domain/audit.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { Actor } from '../domain/principal.js';
import { authorize } from '../rules/authorization.js';
// biome-ignore lint/style/noRestrictedImports: the replication router passes the tablets' _changes query to the replica source as is (a type only); issue #22 (part 4) declares these routes like the others.
import type { ChangesQuery } from '../store/replicaSource.js';
import type { AppDeps } from './deps.js';
import { countCaller } from './rateLimit.js';
import { renderError, sendRendered } from './render.js';
import { requestState, routeNamed } from './requestContext.js';
import { bearerToken, deviceIdOf } from './runRoute.js';

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

const locals = new WeakMap<Request, Actor>();
const actorOf = (req: Request): Actor => {
  const actor = locals.get(req);
  if (actor === undefined) throw new Error('replication handler reached without authentication');
  return actor;
};

const authenticate =
  (deps: AppDeps) =>
  async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const token = bearerToken(req);
    if (token === undefined) {
      sendError(req, res, apiError('UNAUTHORIZED', 'A bearer access token is required.'));
      return;
    }
    const principal = await deps.authenticator.authenticate(token);
    if (E.isLeft(principal)) {
      sendError(req, res, principal.left);
      return;
    }
    const state = requestState(req);
    state.principal = principal.right;
    const deviceId = deviceIdOf(req);
    if (E.isLeft(deviceId)) {
      sendError(req, res, deviceId.left);
      return;
    }
    state.deviceId = deviceId.right;
    // The same bucket as the device's REST calls: one principal on one tablet, whatever it calls.
    const limited = countCaller(req, deps, {
      userId: principal.right.userId,
      deviceId: deviceId.right,
    });
    for (const [name, value] of Object.entries(state.rateLimitHeaders ?? {})) res.setHeader(name, value);
    if (E.isLeft(limited)) {
      sendError(req, res, limited.left);
      return;
    }
    if (E.isLeft(authorize('chamador', principal.right, 'attendance'))) {
      sendError(
        req,
        res,
        apiError('FORBIDDEN_ROLE', 'Replication is for ADMIN, CHAMADOR and roles with `attendance`.'),
      );
      return;
    }
    locals.set(req, { principal: principal.right, deviceId: deviceId.right });
    next();
  };

/** Express 5 hands async errors to the error handler; this only keeps handlers short. */
const handle =
  (fn: (req: Request, res: Response) => Promise<E.Either<ApiError, void>>) =>
  async (req: Request, res: Response): Promise<void> => {
    const out = await fn(req, res);
    if (E.isLeft(out)) sendError(req, res, out.left);
  };

const json = (res: Response, status: number, body: unknown): E.Either<ApiError, void> => {
  res.status(status).json(body);
  return E.right(undefined);
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

/** A route's template, in the registry's form, for its log line and metrics. */
const named = (template: string) => routeNamed(`${REPLICATION_BASE}${template}`);

export const replicationRouter = (deps: AppDeps): Router => {
  const r = Router();
  const rep = deps.replication;
  const audit = (
    req: Request,
    endpoint: string,
    details: Record<string, unknown>,
    action: NewAuditEntry['action'],
  ) => {
    const actor = actorOf(req);
    void deps.audit
      .append({
        correlation_id: requestState(req).correlationId,
        actor_user_id: actor.principal.userId,
        actor_role: actor.principal.primaryRole,
        endpoint,
        outcome: 'SUCCESS',
        details,
        subject_id: null,
        action,
      })
      .catch((e: unknown) =>
        deps.logger.warn(
          { errorName: e instanceof Error ? e.name : typeof e },
          'replication audit entry failed',
        ),
      );
  };
  const scope = (req: Request, database: string) => {
    const actor = actorOf(req);
    // The device id was checked by `authenticate`; an actor here always has one.
    return { userId: actor.principal.userId, deviceId: actor.deviceId ?? '', database };
  };

  r.use(authenticate(deps));

  r.get(
    '/',
    named('/'),
    handle(async (_req, res) =>
      json(res, 200, {
        couchdb: 'Welcome',
        uuid: rep.instanceId,
        vendor: { name: 'Chamada' },
        version: '3.4.0',
      }),
    ),
  );

  for (const name of ['roster', 'events'] as const) {
    r.get(
      [`/${name}`, `/${name}/`],
      named(`/${name}`),
      handle(async (_req, res) => {
        const info = name === 'roster' ? await rep.roster.info() : await rep.eventsInfo();
        return json(res, 200, { ...info, instance_start_time: '0' });
      }),
    );
    r.get(
      `/${name}/_local/:id`,
      named(`/${name}/_local/{id}`),
      handle(async (req, res) => {
        const id = String(req.params.id);
        const found = await rep.checkpoints.get(scope(req, name), id);
        if (found === undefined) return E.left(apiError('NOT_FOUND', 'No such checkpoint.'));
        return json(res, 200, { ...found.body, _id: `_local/${id}`, _rev: found.rev });
      }),
    );
    r.put(
      `/${name}/_local/:id`,
      named(`/${name}/_local/{id}`),
      handle(async (req, res) => {
        const id = String(req.params.id);
        const body = LocalBody.decode(req.body);
        if (E.isLeft(body) || JSON.stringify(body.right).length > 64_000)
          return E.left(invalid('body', 'expected a JSON object of at most 64 kB'));
        const { _id: _i, _rev: _r, ...rest } = body.right;
        const rev = await rep.checkpoints.put(scope(req, name), id, rest);
        return json(res, 201, { ok: true, id: `_local/${id}`, rev });
      }),
    );
  }

  const changes = handle(async (req, res) => {
    const q = changesQuery(req);
    if (E.isLeft(q)) return q;
    const { longpoll, ...query } = q.right;
    let answer = await rep.roster.changes(query);
    if (longpoll && answer.results.length === 0) {
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
      if (aborted.signal.aborted) return E.right(undefined);
      answer = await rep.roster.changes(query);
      res.end(JSON.stringify(answer));
      return E.right(undefined);
    }
    return json(res, 200, answer);
  });
  r.get('/roster/_changes', named('/roster/_changes'), changes);
  r.post('/roster/_changes', named('/roster/_changes'), changes);

  r.post(
    '/roster/_bulk_get',
    named('/roster/_bulk_get'),
    handle(async (req, res) => {
      const body = BulkGetBody.decode(req.body);
      if (E.isLeft(body) || body.right.docs.length > MAX_BULK)
        return E.left(invalid('body.docs', `expected at most ${MAX_BULK} {id, rev}`));
      const answer = await rep.roster.bulkGet(body.right.docs, {
        revs: queryString(req, 'revs') === 'true',
        latest: queryString(req, 'latest') === 'true',
      });
      deps.metrics.replicationPulled(body.right.docs.length);
      audit(
        req,
        `POST ${REPLICATION_BASE}/roster/_bulk_get`,
        { docs: body.right.docs.length },
        'READ_SENSITIVE',
      );
      return json(res, 200, answer);
    }),
  );

  r.get(
    '/roster/:docId',
    named('/roster/{docId}'),
    handle(async (req, res) => {
      const id = String(req.params.docId);
      if (id.startsWith('_')) return E.left(apiError('NOT_FOUND', 'No such route.'));
      const revs = queryString(req, 'revs') === 'true';
      const openRevsRaw = queryString(req, 'open_revs');
      try {
        if (openRevsRaw === undefined) {
          const doc = await rep.roster.get(id, { revs });
          deps.metrics.replicationPulled(1);
          audit(req, `GET ${REPLICATION_BASE}/roster/{docId}`, { docs: 1 }, 'READ_SENSITIVE');
          return json(res, 200, doc);
        }
        const openRevs = openRevsRaw === 'all' ? 'all' : parseJson(openRevsRaw);
        if (openRevs !== 'all' && (!t.array(t.string).is(openRevs) || openRevs.length > MAX_BULK))
          return E.left(invalid('query.open_revs', 'expected "all" or a JSON list of revisions'));
        const docs = await rep.roster.openRevs(id, openRevs, {
          revs,
          latest: queryString(req, 'latest') === 'true',
        });
        deps.metrics.replicationPulled(1);
        audit(req, `GET ${REPLICATION_BASE}/roster/{docId}`, { docs: 1 }, 'READ_SENSITIVE');
        return json(res, 200, docs);
      } catch (e) {
        if (typeof e === 'object' && e !== null && 'status' in e && e.status === 404)
          return E.left(apiError('NOT_FOUND', 'No such document.'));
        throw e;
      }
    }),
  );

  r.post(
    '/events/_revs_diff',
    named('/events/_revs_diff'),
    handle(async (req, res) => {
      const body = RevsDiffBody.decode(req.body);
      if (E.isLeft(body) || Object.keys(body.right).length > MAX_BULK)
        return E.left(invalid('body', `expected {docId: [rev]} for at most ${MAX_BULK} documents`));
      const ids = Object.keys(body.right).filter((id) => id.startsWith('event:'));
      // Events never change: an event the server holds, under any revision, is not missing.
      const held = await rep.events.getMany(ids.map((id) => id.slice('event:'.length)));
      const missing: Record<string, { missing: string[] }> = {};
      for (const [id, revs] of Object.entries(body.right)) {
        if (id.startsWith('event:') && held.has(id.slice('event:'.length))) continue;
        missing[id] = { missing: revs };
      }
      return json(res, 200, missing);
    }),
  );

  r.post(
    '/events/_bulk_docs',
    named('/events/_bulk_docs'),
    handle(async (req, res) => {
      const body = BulkDocsBody.decode(req.body);
      if (E.isLeft(body) || body.right.docs.length > MAX_BULK)
        return E.left(invalid('body.docs', `expected at most ${MAX_BULK} documents`));
      const errors: Array<{ id: string; error: string; reason: string }> = [];
      const events: unknown[] = [];
      const ids: string[] = [];
      for (const doc of body.right.docs) {
        const id = typeof doc._id === 'string' ? doc._id : '';
        const { _id: _i, _rev: _r, _revisions: _v, docType: _d, ...event } = doc;
        if (doc._deleted === true) {
          errors.push({ id, error: 'forbidden', reason: 'events are never deleted' });
        } else if (typeof event.eventId !== 'string' || id !== `event:${event.eventId}`) {
          errors.push({ id, error: 'forbidden', reason: 'the _id must be event:<eventId>' });
        } else {
          events.push(event);
          ids.push(id);
        }
      }
      const result = await rep.sync.sync(actorOf(req), events, { settle: false });
      for (const f of result.failed) {
        errors.push({ id: ids[f.index] ?? '', error: 'forbidden', reason: `${f.reason}: ${f.message}` });
      }
      deps.metrics.replicationPushed(result.synced.length, errors.length);
      audit(
        req,
        `POST ${REPLICATION_BASE}/events/_bulk_docs`,
        { stored: result.synced.length, refused: errors.length },
        'MUTATION',
      );
      // As CouchDB with new_edits=false: only the documents that were not stored are listed.
      return json(res, 201, errors);
    }),
  );

  r.use((req: Request, res: Response) => {
    sendError(req, res, apiError('NOT_FOUND', 'No such route.'));
  });
  return r;
};
