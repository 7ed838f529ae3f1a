/**
 * The pouchdb-find indexes each database needs, created at start when missing. An index that exists
 * is left alone: PouchDB's `createIndex` brings an existing index up to date before it returns, which
 * made every start pay for indexing everything written since the last query of each index (about 12 s
 * after a few thousand check-ins). Indexes are brought up to date by the queries that use them.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import canonicalize from 'canonicalize';
import * as t from 'io-ts';
import { patiently } from './boundedFetch.js';
import { isRemote } from './docs.js';
import type { Database } from './pouch.js';
import type { DatabaseName } from './store.js';
import { isConflict, isNotFound, isStoreTimeout, QuorumNotMetError } from './storeErrors.js';

export interface IndexSpec {
  readonly name: string;
  readonly fields: ReadonlyArray<string>;
}

export const indexSpecs: Readonly<Record<DatabaseName, ReadonlyArray<IndexSpec>>> = {
  // Every stored document carries `docType`; listing one kind of record is the common query.
  roster: [{ name: 'by-docType', fields: ['docType'] }],
  // No `by-docType`: every event is of one kind, and no query asked for it (`retiredIndexes`).
  events: [
    { name: 'by-subject-and-time', fields: ['subjectId', 'clientTimestamp'] },
    // Conflict resolution reads every event of one aspect.
    { name: 'by-aspect', fields: ['aspect'] },
  ],
  private: [
    { name: 'by-docType', fields: ['docType'] },
    // Refresh finds its session by the token's hash; revocation finds every session of a user.
    { name: 'by-docType-refreshTokenHash', fields: ['docType', 'refreshTokenHash'] },
    { name: 'by-docType-userId', fields: ['docType', 'userId'] },
    // A subject's image consents, current and history.
    { name: 'by-docType-subject_id', fields: ['docType', 'subject_id'] },
    // A child's pickup entries and temporary grants.
    { name: 'by-docType-studentId', fields: ['docType', 'studentId'] },
  ],
  requests: [
    // The idempotency purge asks for entries whose retention has ended.
    { name: 'by-docType-expiresAt', fields: ['docType', 'expiresAt'] },
    // The rate limiter's cleanup asks for hits older than every window.
    { name: 'by-docType-at', fields: ['docType', 'at'] },
    // The print worker's unfinished jobs (0051).
    { name: 'by-docType-status', fields: ['docType', 'status'] },
  ],
  audit: [
    { name: 'by-created_at', fields: ['created_at'] },
    // A data subject's entries, newest first by id (the export, and the audit log filtered by subject).
    { name: 'by-subject_id', fields: ['subject_id', '_id'] },
  ],
  projections: [
    // Attendance reports read one kind of aspect by day (and filter sessions in memory).
    { name: 'by-docType-kind-day', fields: ['docType', 'kind', 'day'] },
    // The conflict report pages by detection time; ties break on the document id.
    { name: 'by-docType-detectedAt', fields: ['docType', 'detectedAt'] },
  ],
};

/**
 * Indexes no longer kept, by database: removed where a store still has them, since CouchDB goes on
 * indexing every design document it holds (ken, after writes) whether a query reads it or not.
 */
export const retiredIndexes: Readonly<Record<DatabaseName, ReadonlyArray<string>>> = {
  roster: [],
  events: ['by-docType'],
  private: [],
  requests: [],
  audit: [],
  projections: [],
};

/** The field names of an index definition as `getIndexes` reports them (`[{ field: 'asc' }]`). */
const fieldNames = (fields: ReadonlyArray<Record<string, string>>): string[] =>
  fields.flatMap((f) => Object.keys(f));

/** How often creating the indexes is tried, another instance writing their design documents too. */
const DESIGN_TRIES = 5;

/** A design document's write withdrawn short of its quorum (decision 0023): read again and retried. */
const isQuorumNotMet = (e: unknown): boolean => e instanceof QuorumNotMetError;

/** CouchDB's answer to an index creation whose design document another writer changed meanwhile. */
const refusedDesignWrite = (e: unknown): boolean =>
  isConflict(e) || (typeof e === 'object' && e !== null && 'error' in e && e.error === 'error_saving_ddoc');

type ListedIndex = PouchDB.Find.GetIndexesResponse<object>['indexes'][number];

/** Each design document's index fields, as `ensureIndexes` compares them with the specs. */
const byDesign = (listed: ReadonlyArray<ListedIndex>): Map<string | null, string> =>
  new Map(listed.map((i) => [i.ddoc, fieldNames(i.def.fields).join('\u0000')]));
const fieldsByDesign = async (db: Database) => byDesign((await db.getIndexes()).indexes);

/**
 * A database whose indexes share one design document, by the database's name (its URL on CouchDB):
 * that document's id without `_design/`. Set by `ensureIndexes`; a database not named here has one
 * design document an index.
 */
const groupedIndexes = new Map<string, string>();

/**
 * What a query names in `use_index` for the index `name` of this database: its own design document,
 * or its place in the database's shared one.
 */
export const indexIn = (db: Database, name: string): string | [string, string] => {
  const group = groupedIndexes.get(db.name);
  return group === undefined ? `idx-${name}` : [group, name];
};

/** The design document a database's indexes share on CouchDB (`idx-private`, ...). */
export const indexGroupOf = (database: string): string => `idx-${database}`;

/**
 * One index of a shared design document, as CouchDB's `_index` writes it (a Mango JSON index: the
 * fields ascending, no partial filter, `_count`). Written so by hand, the query planner lists and
 * uses it as one it made.
 */
const mangoView = (fields: ReadonlyArray<string>) => ({
  map: { fields: Object.fromEntries(fields.map((f) => [f, 'asc'])), partial_filter_selector: {} },
  reduce: '_count',
  options: { def: { fields: [...fields] } },
});

const View = t.type({ options: t.type({ def: t.type({ fields: t.array(t.string) }) }) });
const SharedDesign = t.type({ _id: t.string, _rev: t.string, views: t.record(t.string, t.unknown) });

/**
 * Writes the shared design document so that it holds every index of `specs` with its fields, keeps
 * what else it holds (a later version's index, during a rolling upgrade) but the retired ones, and
 * changes nothing when it is so already. One write of the whole document, through the database's
 * quorum writes: CouchDB's `_index` adds one index a write after reading the document, and on a fresh
 * three-node cluster a creation after another read a copy that lacked the one before, and the
 * document lost an index (twenty-seventh session, decision 0064). Two instances writing the same
 * document at once write the same revision (CouchDB derives it from the content); one that read an
 * older revision is refused, reads again and finds it done.
 */
const writeSharedDesign = async (
  db: Database,
  id: string,
  specs: ReadonlyArray<IndexSpec>,
  retired: ReadonlyArray<string>,
): Promise<void> => {
  for (let attempt = 1; ; attempt += 1) {
    const held: unknown = await db.get(id).catch((e: unknown) => {
      if (isNotFound(e)) return undefined;
      throw e;
    });
    const current = SharedDesign.is(held) ? held : undefined;
    const views: Record<string, unknown> = { ...(current?.views ?? {}) };
    for (const name of retired) delete views[name];
    for (const spec of specs) {
      const view: unknown = views[spec.name];
      if (!View.is(view) || view.options.def.fields.join('\u0000') !== spec.fields.join('\u0000'))
        views[spec.name] = mangoView(spec.fields);
    }
    if (current !== undefined && canonicalize(views) === canonicalize(current.views)) return;
    try {
      const design = { _id: id, ...(current === undefined ? {} : { _rev: current._rev }), language: 'query' };
      // Defined after: PouchDB's types take a design document's `views` for map functions' text, and
      // a Mango index's map is an object. Enumerable, so it is written like any other field.
      await db.put(Object.defineProperty(design, 'views', { value: views, enumerable: true }));
      return;
    } catch (e: unknown) {
      if (!(isConflict(e) || isQuorumNotMet(e)) || attempt === DESIGN_TRIES) throw e;
      await sleep(20 + Math.random() * 200);
    }
  }
};

export const ensureIndexes = async (
  db: Database,
  specs: ReadonlyArray<IndexSpec>,
  retired: ReadonlyArray<string> = [],
  /**
   * On CouchDB, the design document the indexes share (`indexGroupOf`). CouchDB builds one design
   * document's indexes in one pass, reading each written document once: five indexes of the private
   * database in five design documents cost 4 times the CPU of the same five in one (0.82–1.00 against
   * 0.19–0.24 ms a document, 10,000 students, `bench/indexGroupProbe.ts`, decision 0064). A database
   * that already has its indexes one a design document keeps them so at the start, and answers true:
   * `moveIntoSharedDesign` moves them while the service runs (it rebuilds them over every record). The
   * embedded store keeps one design document an index.
   */
  group?: string,
): Promise<boolean> => {
  const listed = (await db.getIndexes()).indexes;
  const existing = byDesign(listed);
  // Another instance starting at the same moment may remove it first: gone is what was asked.
  await settledAll(
    listed
      .filter((i) => i.ddoc !== null && retired.some((name) => i.ddoc === `_design/idx-${name}`))
      .map((i) =>
        db.deleteIndex({ ddoc: i.ddoc ?? '', name: i.name, type: i.type }).catch((e: unknown) => {
          if (!isNotFound(e)) throw e;
        }),
      ),
  );
  const ownDocuments = specs.some((spec) => existing.has(`_design/idx-${spec.name}`));
  const sharing = isRemote(db) && specs.length > 1 && group !== undefined;
  const shared = sharing && !ownDocuments ? group : undefined;
  if (shared === undefined) groupedIndexes.delete(db.name);
  else {
    groupedIndexes.set(db.name, shared);
    await writeSharedDesign(db, `_design/${shared}`, specs, retired);
    return false;
  }
  // Another instance starting at the same moment writes the same design documents, and CouchDB
  // refuses the later of two writes of one (`error_saving_ddoc`, or a conflict; seen with two
  // instances' stores opened at once on three nodes): read again, create what is still missing.
  for (let attempt = 1; ; attempt += 1) {
    const present = attempt === 1 ? existing : await fieldsByDesign(db);
    // Same design document, same fields: nothing to create (a changed definition is created again).
    const missing = specs.filter(
      (spec) => present.get(`_design/idx-${spec.name}`) !== spec.fields.join('\u0000'),
    );
    try {
      // Each in a design document of its own, so they go at once: on a CouchDB cluster each is a
      // quorum write of about 50 ms, and a fresh service's sixteen one after the other were most of
      // its start.
      await settledAll(
        missing.map((spec) =>
          db.createIndex({ index: { name: spec.name, ddoc: `idx-${spec.name}`, fields: [...spec.fields] } }),
        ),
      );
      return sharing;
    } catch (e: unknown) {
      if (!refusedDesignWrite(e) || attempt === DESIGN_TRIES) throw e;
      await sleep(20 + Math.random() * 200);
    }
  }
};

/** Tries of a step of a move that failed otherwise than by the silence limit (a copy still behind). */
const MOVE_TRIES = 5;

/**
 * Moves the indexes of a CouchDB database laid out one a design document (a deployment made before
 * the shared design documents) into its shared one, while the service runs on the old ones:
 * 1. writes the shared document with every index (`writeSharedDesign`);
 * 2. waits until CouchDB has built it: a query through one of its indexes answers only once the
 *    index holds every write, silent meanwhile, so it waits `patiently` and is sent again while the
 *    silence limit cuts it (CouchDB builds on; a roll of 250,000 takes minutes);
 * 3. points this instance's queries at it (`indexIn`), then removes the old design documents.
 * Another instance still naming an old one meanwhile is answered by CouchDB through the shared one,
 * which has the same fields (CouchDB 3.4 falls back to an index that fits, with a warning). A move cut
 * short (a stop, a failure) leaves both layouts; the next start sees the old documents, keeps them,
 * and moves again. True when this call moved the database; false when there was nothing to move or
 * `signal` stopped it first.
 */
export const moveIntoSharedDesign = async (
  db: Database,
  specs: ReadonlyArray<IndexSpec>,
  retired: ReadonlyArray<string>,
  group: string,
  signal: AbortSignal,
): Promise<boolean> => {
  if (!isRemote(db) || specs.length < 2) return false;
  const own = (await db.getIndexes()).indexes.filter(
    (i): i is ListedIndex & { ddoc: string } =>
      i.ddoc !== null && specs.some((spec) => i.ddoc === `_design/idx-${spec.name}`),
  );
  if (own.length === 0 || signal.aborted) return false;
  const id = `_design/${group}`;
  await writeSharedDesign(db, id, specs, retired);
  const [probe] = specs;
  const [field] = probe?.fields ?? [];
  if (probe === undefined || field === undefined) return false;
  // Every index of a design document is built in the same pass: one query waits for all of them.
  for (let failures = 0; !signal.aborted; ) {
    try {
      await patiently(() =>
        db.find({ selector: { [field]: { $gt: null } }, use_index: [group, probe.name], limit: 1 }),
      );
      break;
    } catch (e) {
      if (isStoreTimeout(e)) continue;
      failures += 1;
      if (failures >= MOVE_TRIES) throw e;
      await sleep(200 * failures, undefined, { signal }).catch(() => undefined);
    }
  }
  if (signal.aborted) return false;
  groupedIndexes.set(db.name, group);
  // Another instance moving the same database may remove one first: gone is what was asked.
  await settledAll(
    own.map((i) =>
      db.deleteIndex({ ddoc: i.ddoc, name: i.name, type: i.type }).catch((e: unknown) => {
        if (!isNotFound(e)) throw e;
      }),
    ),
  );
  return true;
};

/**
 * `Promise.all` that answers only once every promise settled, with the first rejection if any: what
 * fails is then cleaned up (the store closes its databases) with nothing of it still in flight.
 */
export const settledAll = async <A>(promises: ReadonlyArray<Promise<A>>): Promise<A[]> => {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  return settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
};
