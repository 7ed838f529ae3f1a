/**
 * The events database on CouchDB without a guard (decision 0063). Earlier versions installed a
 * `validate_doc_update` function (`_design/immutable-events`) that refused any change of a stored
 * event but three marked writes; CouchDB ran it in its JavaScript engine for every document written,
 * which cost the import about half its CPU. What keeps the log immutable now:
 * - the store API is the only writer: it has no update or delete of an event but the marked
 *   withdrawal (`quorumWrites.ts`), retirement and anonymisation (`events.ts`), as on the embedded
 *   store, which never ran the guard; tablets' pushes reach the database only through the service,
 *   which judges each event (`http/replication.ts`);
 * - the database's `_security` admits only CouchDB's admins (the service's own account), set at start
 *   where it admits everyone (`ensureEventsSecurity`);
 * - the pipeline, which reads every change of the database, reports a change it did not make (an
 *   event rewritten, deleted unmarked, or stored under another id) as a quarantine: a metric, a log
 *   line and a QUARANTINE entry in the audit log (`eventPipeline.ts`, `isSanctionedRevision`).
 * A CouchDB admin could always delete the guard; the pipeline's report is what tells of such a write.
 */

import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { isRemote } from './docs.js';
import type { Database } from './pouch.js';
import { isConflict, isNotFound } from './storeErrors.js';

/** The guard's design document in databases an earlier version started on: removed at start. */
export const EVENTS_DESIGN_ID = '_design/immutable-events';

const Design = t.type({ _id: t.string, _rev: t.string });

/**
 * Removes the guard an earlier version installed; answers whether this call removed it (once per
 * database: a later start finds none, and of instances starting at once one removes it).
 */
export const removeEventsGuard = async (db: Database): Promise<boolean> => {
  const found: unknown = await db.get(EVENTS_DESIGN_ID).catch((e: unknown) => {
    if (isNotFound(e)) return undefined;
    throw e;
  });
  const design = Design.decode(found);
  if (E.isLeft(design)) return false;
  try {
    await db.put({ _id: EVENTS_DESIGN_ID, _rev: design.right._rev, _deleted: true });
    return true;
  } catch (e) {
    // Another instance removed it at the same moment.
    if (isConflict(e) || isNotFound(e)) return false;
    throw e;
  }
};

/** Members no one but CouchDB's admins has: the database answers its admins only. */
export const ADMINS_ONLY = {
  admins: { names: [], roles: [] },
  members: { names: [], roles: ['_admin'] },
} as const;

/**
 * What the start found of the events database's `_security`:
 * - `set`: it admitted everyone (no members), and now names `_admin` as its only member role;
 * - `admins only`: it admitted CouchDB's admins only already;
 * - `members`: it names members an operator set (a user or a role beside `_admin`), left as they are:
 *   they can write events past the service, which the pipeline would report;
 * - `unknown`: the server did not answer `_security` (a CouchDB-protocol server that has none).
 */
export type EventsSecurity = 'set' | 'admins only' | 'members' | 'unknown';

const Names = t.partial({ names: t.array(t.string), roles: t.array(t.string) });
const Security = t.partial({ admins: Names, members: Names });

interface FetchingDatabase {
  fetch(path: string, init: RequestInit): Promise<unknown>;
}
const canFetch = (db: object): db is FetchingDatabase => 'fetch' in db && typeof db.fetch === 'function';
const JsonAnswer = t.type({ ok: t.boolean, json: t.Function });

const call = async (
  db: FetchingDatabase,
  init: RequestInit,
): Promise<{ readonly ok: boolean; readonly body: unknown }> => {
  const answer: unknown = await db.fetch('_security', init);
  if (!JsonAnswer.is(answer)) return { ok: false, body: undefined };
  const body: unknown = await Reflect.apply(answer.json, answer, []).catch(() => undefined);
  return { ok: answer.ok, body };
};

/**
 * Makes the events database answer CouchDB's admins only when it admitted everyone: CouchDB 3 creates
 * databases admin-only (`[couchdb] default_security = admin_only`), but a server set to `everyone`, or a
 * database an operator opened, would let any user write events past the service.
 */
export const ensureEventsSecurity = async (db: Database): Promise<EventsSecurity> => {
  if (!isRemote(db) || !canFetch(db)) return 'unknown';
  const current = await call(db, { method: 'GET' });
  const security = Security.decode(current.body);
  if (!current.ok || E.isLeft(security)) return 'unknown';
  const members = security.right.members;
  const names = members?.names ?? [];
  const roles = members?.roles ?? [];
  if (names.length > 0 || roles.some((r) => r !== '_admin')) return 'members';
  if (roles.includes('_admin')) return 'admins only';
  const set = await call(db, {
    method: 'PUT',
    headers: new Headers({ 'content-type': 'application/json' }),
    body: JSON.stringify({ ...security.right, members: ADMINS_ONLY.members }),
  });
  return set.ok ? 'set' : 'unknown';
};
