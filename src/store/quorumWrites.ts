/**
 * Writes to a CouchDB cluster count only when a quorum of copies took them (decision 0023).
 *
 * A clustered CouchDB writes each document to its n copies and answers once w of them (2 of 3 by
 * default) agree. When fewer took the write, it still answers `ok`, flagged `accepted: true` in a
 * `_bulk_docs` result (202 for a single document). That is what two concurrent creates of one id
 * through two nodes look like: each copy takes the first create it sees, so one writer reaches the
 * quorum and the other is merely "accepted", and once the copies sync the document holds both as
 * conflicting revisions, either of which may become the one read. Every "create is the claim" and
 * every compare-and-swap of this service (idempotency claims, aspects, check-in records, the
 * last-admin guard) relied on the loser hearing 409; on a cluster it heard `ok` (measured: 2 of 20
 * concurrent claims of one key won, on three nodes).
 *
 * So, on CouchDB: a write that did not reach the quorum is looked at again (by the rule its database
 * is opened with, `QuorumWriteOptions`; the default is described here): every leaf of the document,
 * as the copies that answer know them. When another live revision is there, it may have reached the
 * quorum: ours is withdrawn (a deletion of that leaf, so it
 * can never win over it) and tried again, and what still finds no quorum is `QuorumNotMetError` (503;
 * nothing was acknowledged, the client sends it again). When ours is there alone, it stands: the same
 * bytes written by another writer make the same revision, and withdrawing it would delete theirs.
 * `put` and `remove` go through `_bulk_docs`, where the flag is visible. Replicated writes
 * (`new_edits: false`) and `_local` documents (never clustered) are left as they are, and so is the
 * audit database (store.ts): append-only, its keyed entries are the same bytes whoever writes them
 * (so the same revision: no conflict) and the others have ids of their own. An event is withdrawn too
 * (a deletion marked `withdrawn`, which the pipeline does not report, decision 0063): the copies of one event stored
 * by two instances differ in their server time, which projections and conflict records carry.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import canonicalize from 'canonicalize';
import * as t from 'io-ts';
import { detached } from '../lib/deadline.js';
import { copiesOf } from './copies.js';
import type { Database } from './pouch.js';
import { isConflict, QuorumNotMetError } from './storeErrors.js';

type BulkResult = PouchDB.Core.Response | PouchDB.Core.Error;
type NewDoc = PouchDB.Core.PutDocument<object>;
type PutDoc = NewDoc & { readonly _id: string };

const isOk = (r: BulkResult | undefined): boolean => r !== undefined && 'ok' in r && r.ok === true;

const isAccepted = (r: BulkResult): r is PouchDB.Core.Response =>
  'ok' in r && r.ok === true && 'accepted' in r && r.accepted === true;

// A `_bulk_docs` result carries CouchDB's error name but no status (PouchDB then says 500); a `PUT`
// answers with the status itself. A single write keeps the status its `PUT` would have had.
const STATUS_OF_ERROR: Readonly<Record<string, number>> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
};

const text = (o: object, key: string): string | undefined => {
  const v: unknown = Reflect.get(o, key);
  return typeof v === 'string' ? v : undefined;
};

/** One element of a `_bulk_docs` body PouchDB threw: a refusal, or `ok` with its revision. */
const perDocument = (v: unknown): BulkResult => {
  const o = typeof v === 'object' && v !== null ? v : {};
  const id = text(o, 'id');
  const rev = text(o, 'rev');
  if (Reflect.get(o, 'ok') === true && id !== undefined && rev !== undefined)
    return { ok: true, id, rev, ...(Reflect.get(o, 'accepted') === true ? { accepted: true } : {}) };
  const error = text(o, 'error') ?? 'unknown_error';
  return { id, error, name: error, reason: text(o, 'reason') ?? error, message: text(o, 'reason') ?? error };
};

/** What a copy on top that withdrew the copies below it answers: 409, though it stands. */
const storedByAnotherToo = (r: PouchDB.Core.Response): PouchDB.Core.Error => ({
  id: r.id,
  error: 'conflict',
  name: 'conflict',
  status: 409,
  reason: 'Stored by another writer too; this copy stands.',
  message: 'Stored by another writer too; this copy stands.',
});

/** A refused single write is thrown the way PouchDB's `put` throws it: the result object itself. */
const single = (result: BulkResult | undefined, id: string): PouchDB.Core.Response => {
  if (result === undefined) throw new QuorumNotMetError(id);
  if ('ok' in result && result.ok === true) return result;
  const name = 'error' in result && typeof result.error === 'string' ? result.error : undefined;
  const status = name === undefined ? undefined : STATUS_OF_ERROR[name];
  throw status === undefined ? result : Object.assign(result, { status });
};

/**
 * The deletion that withdraws a copy short of its quorum, marked so that the pipeline does not report
 * it (decision 0063). Also what the pipeline writes for a copy its writer left behind.
 */
export const withdrawal = (id: string, rev: string) =>
  ({ _id: id, _rev: rev, _deleted: true, withdrawn: WITHDRAWN }) as const;

/** The mark of a withdrawal (`withdrawn`), which the pipeline checks for. */
export const WITHDRAWN = 'quorum-not-met';

/** Attempts of a write that every writer lost (a split: no copy-majority for anyone). */
const ATTEMPTS = 3;
/** Attempts of a withdrawal that no copy took. */
const WITHDRAWAL_ATTEMPTS = 3;

export interface QuorumWriteOptions {
  /**
   * Which of two writers that split the copies of a document keeps its write. `alone` (the default):
   * a write short of its quorum stands only as the one live leaf, so of two claims one at most
   * stands; two writers that each took one copy (a node away, or too slow to answer) then both
   * withdraw, and an update withdrawn by both leaves the document with no live revision: its content
   * gone, and the next writer, reading it as absent, starts it again from nothing
   * (`casSplit.couchdb.ts`: 247 of 408 acknowledged changes lost that way, node 3 down).
   * `winner`, for documents whose forks are merged by their readers (projection documents, decision
   * 0038): a write short of its quorum is withdrawn only below a live leaf that sorts above it in
   * CouchDB's order (generation, then revision), so the leaf on top is never withdrawn by its writer
   * and the document always keeps one. What that costs: when the other writer did reach the quorum
   * and sorts below, both stand, a fork its reader merges.
   */
  readonly keep?: 'alone' | 'winner';
  /**
   * With `winner`, for documents any live copy of which is as good as another (an event, stored by
   * two instances with their own server times): the leaf on top also withdraws the other live leaves
   * it sees, so the document is left with one at once rather than after the pipeline's grace. Their
   * writers may have kept them (a write that reached the quorum is never withdrawn by its own writer);
   * what they stored stands in the copy on top.
   */
  readonly withdrawBelow?: boolean;
}

/** The live leaves of an `open_revs=all` answer (each `{ ok: doc }`), with their revisions. */
export const liveLeaves = (answer: unknown): Array<{ readonly rev: string; readonly doc: object }> =>
  (Array.isArray(answer) ? answer : []).flatMap((leaf: unknown) => {
    const doc: unknown = typeof leaf === 'object' && leaf !== null ? Reflect.get(leaf, 'ok') : undefined;
    if (typeof doc !== 'object' || doc === null || Reflect.get(doc, '_deleted') === true) return [];
    const rev: unknown = Reflect.get(doc, '_rev');
    return typeof rev === 'string' ? [{ rev, doc }] : [];
  });

const generationOf = (rev: string): number => Number.parseInt(rev, 10);

/** Whether CouchDB makes live leaf `x` the winner over live leaf `y`: the longer branch, then the higher revision. */
export const sortsAbove = (x: string, y: string): boolean =>
  generationOf(x) !== generationOf(y) ? generationOf(x) > generationOf(y) : x > y;

const Membership = t.type({ all_nodes: t.array(t.string), cluster_nodes: t.array(t.string) });

/** Documents a `_bulk_get` asks for at most: a bulk write's refusals, with room. */
const LEAF_READS_PER_REQUEST = 200;

const BulkGetAnswer = t.type({
  results: t.array(t.type({ id: t.string, docs: t.array(t.UnknownRecord) })),
});

/**
 * `refusedLeaves` of `withQuorumWrites`: each document's leaves, as `GET {id}?open_revs=all&revs=true`
 * answers them (a list of `{ ok: doc }`, a deleted leaf included), read for every call made in one
 * turn of the event loop by one `_bulk_get?revs=true&r=…`. A document with no leaf reads as none, as
 * a missing one does; any other error of a document (a copy timed out) rejects its call alone, as its
 * own `GET` would have failed. PouchDB (no `fetch`: one copy) reads each with `get`.
 */
const leafReader = (db: Database, copies: () => Promise<number>): ((id: string) => Promise<unknown>) => {
  const raw: unknown = Reflect.get(db, 'fetch');
  if (typeof raw !== 'function') return (id) => db.get(id, { open_revs: 'all', revs: true });
  type Waiter = { resolve: (leaves: unknown) => void; reject: (e: unknown) => void };
  let queued = new Map<string, Waiter[]>();
  const read = async (ids: ReadonlyArray<string>): Promise<Map<string, unknown[] | Error>> => {
    const answer: unknown = await Reflect.apply(raw, db, [
      `_bulk_get?revs=true&r=${await copies()}`,
      {
        method: 'POST',
        // Headers objects: PouchDB's fetch sets the credentials of the database address on them, and
        // with a plain object it threw (every write short of its quorum then read as "leaves unknown").
        headers: new Headers({ Accept: 'application/json', 'Content-Type': 'application/json' }),
        body: JSON.stringify({ docs: ids.map((id) => ({ id })) }),
      },
    ]);
    // Duck-typed: PouchDB answers with the Response of the fetch it was given, or else of node-fetch.
    const json: unknown =
      typeof answer === 'object' && answer !== null ? Reflect.get(answer, 'json') : undefined;
    if (Reflect.get(Object(answer), 'ok') !== true || typeof json !== 'function')
      throw new Error(`_bulk_get of ${ids.length} documents: no answer`);
    const body: unknown = await Reflect.apply(json, answer, []);
    if (!BulkGetAnswer.is(body)) throw new Error('_bulk_get answered something else than its results');
    const byId = new Map<string, unknown[] | Error>();
    for (const { id, docs } of body.results) {
      const failed = docs.flatMap((d) => {
        const error: unknown = 'error' in d ? d.error : undefined;
        // CouchDB nests the error (`{ error: { id, rev, error, reason } }`); express-pouchdb does not.
        const name: unknown =
          typeof error === 'object' && error !== null ? Reflect.get(error, 'error') : error;
        return error === undefined || name === 'not_found' ? [] : [String(name)];
      });
      byId.set(
        id,
        failed.length > 0
          ? new Error(`leaves of ${id}: ${failed.join(', ')}`)
          : docs.filter((d) => 'ok' in d),
      );
    }
    return byId;
  };
  const flush = () => {
    const batch = queued;
    queued = new Map();
    const ids = [...batch.keys()];
    for (let from = 0; from < ids.length; from += LEAF_READS_PER_REQUEST) {
      const part = ids.slice(from, from + LEAF_READS_PER_REQUEST);
      read(part).then(
        (byId) => {
          for (const id of part) {
            const leaves = byId.get(id) ?? new Error(`leaves of ${id}: not in the answer`);
            for (const w of batch.get(id) ?? [])
              if (leaves instanceof Error) w.reject(leaves);
              else w.resolve(leaves);
          }
        },
        (e: unknown) => {
          for (const id of part) for (const w of batch.get(id) ?? []) w.reject(e);
        },
      );
    }
  };
  return (id) =>
    new Promise((resolve, reject) => {
      // After the microtasks of this turn: a `Promise.all` over a batch's documents asks for every one
      // of them before the read goes.
      if (queued.size === 0) setImmediate(flush);
      const waiters = queued.get(id);
      if (waiters === undefined) queued.set(id, [{ resolve, reject }]);
      else waiters.push({ resolve, reject });
    });
};

export const withQuorumWrites = (db: Database, options: QuorumWriteOptions = {}): Database => {
  const keepWinner = options.keep === 'winner';
  const bulkDocs = db.bulkDocs.bind(db);
  const put = db.put.bind(db);
  const get = db.get.bind(db);
  /**
   * `_bulk_docs` through PouchDB, whose refusals stay per document. A cluster answers a request whose
   * documents a validation function refused with an error status (a node answers 201), and PouchDB
   * then throws the body, the list of per-document results, instead of returning it.
   */
  const bulk = (docs: NewDoc[]): Promise<BulkResult[]> =>
    bulkDocs(docs).catch((e: unknown) => {
      if (!Array.isArray(e) || e.length !== docs.length) throw e;
      return e.map(perDocument);
    });
  let copies: Promise<number> | undefined;
  const copiesNow = () => {
    copies ??= copiesOf(db);
    return copies;
  };
  /**
   * Every leaf of a document as all its live copies hold them: `open_revs=all` merges the revision
   * trees of the copies that answer, and `r` = every copy makes that all of them (a dead node's copy
   * fails at once and is not waited for; a slow one is, bounded by the store timeout). The default
   * r = 2 of 3 is not enough when two writers each reached one copy and the third copy had taken
   * neither yet: each then read its own copy and the empty one, found itself alone, and both kept
   * their claim (the two-instance row after a node came back: one key executed twice).
   */
  const allLeaves = async (id: string): Promise<unknown> => {
    const raw: unknown = Reflect.get(db, 'fetch');
    if (typeof raw !== 'function') return get(id, { open_revs: 'all', revs: true });
    const answer: unknown = await Reflect.apply(raw, db, [
      `${encodeURIComponent(id)}?open_revs=all&revs=true&r=${await copiesNow()}`,
      // A Headers object: PouchDB's fetch sets the credentials of the database address on it, and
      // with a plain object it threw (every write short of its quorum then read as "leaves unknown").
      { headers: new Headers({ Accept: 'application/json' }) },
    ]);
    // Duck-typed: PouchDB answers with the Response of the fetch it was given, or else of node-fetch.
    const json: unknown =
      typeof answer === 'object' && answer !== null ? Reflect.get(answer, 'json') : undefined;
    if (Reflect.get(Object(answer), 'ok') !== true || typeof json !== 'function')
      throw new Error(`open_revs of ${id}: no answer`);
    return Reflect.apply(json, answer, []);
  };
  /**
   * `allLeaves` of the documents of refused writes (409), read together: the reads asked for in one
   * turn of the event loop go as one `_bulk_get`, which takes the same `r`. A batch of 100 refused
   * claims was 100 requests, each spawning its own workers on every copy (the two-instance row on
   * three nodes: 10,367 such reads in 150 s, 257 ms each on average). A write short of its quorum is
   * still read at once, alone (`judge`): how soon it is looked at decides whether the other writer's
   * copy is there yet, and a shared, later read left a claim split between its copies for seconds
   * (auditLog.test.ts on three nodes, 2 runs of 16).
   */
  const refusedLeaves = leafReader(db, copiesNow);
  /**
   * Writes `leaf` (a revision as `allLeaves` read it, with its history) again to every copy, as a
   * replicated write: the copies that lacked it take it as it is, and then refuse a compare-and-swap
   * on its parent. True when a quorum of copies holds it now (201); false when the cluster still lacks
   * them (202) or did not answer. Where the database speaks no HTTP (PouchDB) it has one copy: true.
   */
  const spread = async (leaf: object): Promise<boolean> => {
    const raw: unknown = Reflect.get(db, 'fetch');
    if (typeof raw !== 'function') {
      await bulkDocs([leaf], { new_edits: false });
      return true;
    }
    try {
      const answer: unknown = await Reflect.apply(raw, db, [
        '_bulk_docs',
        {
          method: 'POST',
          headers: new Headers({ Accept: 'application/json', 'Content-Type': 'application/json' }),
          body: JSON.stringify({ docs: [leaf], new_edits: false }),
        },
      ]);
      return Reflect.get(Object(answer), 'status') === 201;
    } catch {
      return false;
    }
  };
  /**
   * Whether a write short of its quorum must be withdrawn. Every leaf of the document is read from
   * every copy (`allLeaves`). A plain quorum read is not enough: when the two copies that answer first
   * disagree, CouchDB answers the copy whose revision sorts highest, with only the conflicts that copy
   * knows of, and that is this write's own copy about one time in three (measured: 22 of 67 short
   * writes read as alone while the other writer had heard 201).
   * Kept when this very revision is the only live leaf: either no other writer reached the quorum
   * (the cluster is short of nodes, and this copy is what readers get, as CouchDB's own 202 means), or
   * another writer wrote the same bytes and so the same revision (two pipelines projecting one aspect,
   * two instances storing one event in the same millisecond), and deleting it would delete that
   * writer's acknowledged write too. Kept alone only once the copies that lacked it hold it too
   * (`stillAlone`). Withdrawn when another live leaf is there: it may have reached
   * the quorum, and this one must never win over it. That is the `alone` rule; under `winner`
   * (`QuorumWriteOptions`) only a live leaf above this one withdraws it, and with `withdrawBelow` the
   * leaves below it are withdrawn in turn.
   */
  const judge = async (
    r: PouchDB.Core.Response,
    wasDeletion: boolean,
  ): Promise<{ readonly self: boolean; readonly below: ReadonlyArray<string> }> => {
    const keep = { self: false, below: [] };
    if (wasDeletion) return keep;
    const leaves: unknown = await allLeaves(r.id).catch(() => undefined);
    // Keeping the winner, only a leaf seen above this one withdraws it: a copy withdrawn for want of
    // an answer may be the one the other writer withdrew for.
    if (!Array.isArray(leaves)) return keepWinner ? keep : { self: true, below: [] };
    const live = liveLeaves(leaves).map((l) => l.rev);
    if (!keepWinner) {
      const alone = live.length === 1 && live[0] === r.rev;
      return { self: !alone || !(await stillAlone(r, leaves)), below: [] };
    }
    if (live.some((rev) => rev !== r.rev && sortsAbove(rev, r.rev))) return { self: true, below: [] };
    return { self: false, below: options.withdrawBelow === true ? live.filter((rev) => rev !== r.rev) : [] };
  };
  /**
   * Whether a write short of its quorum, the only live leaf of its document, is still alone once the
   * copies that lacked it hold it. Alone, it stands, but on one copy: a compare-and-swap on its parent
   * through the copies that lack it reaches their quorum, and the stale write is answered as written
   * (three nodes, once: a volunteer's check-out on a stale revision). So it is first written to
   * every copy (`spread`), and its leaves read again: another live leaf now, with every node
   * connected, is a write that got in before it and reached its quorum; this one is withdrawn, and
   * tried again it meets a conflict. Where the copies that lacked it cannot take it (down, or not answering) it stands as
   * before, as CouchDB's own 202 means; a leaf with attachments too (a leaf read back carries stubs).
   */
  const stillAlone = async (r: PouchDB.Core.Response, leaves: ReadonlyArray<unknown>): Promise<boolean> => {
    const leaf = liveLeaves(leaves).find((l) => l.rev === r.rev)?.doc;
    if (leaf === undefined || '_attachments' in leaf || !(await spread(leaf))) return true;
    const again: unknown = await allLeaves(r.id).catch(() => undefined);
    if (!Array.isArray(again) || liveLeaves(again).every((l) => l.rev === r.rev)) return true;
    // With a node away the other leaf may be short of its quorum too, its writer withdrawing it on
    // seeing this one: both withdrawn, an update would leave the document with no live revision. This
    // one then stands, as it did before it was spread.
    return splitPossible();
  };
  /**
   * Whether two writers may each have taken part of the copies, neither reaching the quorum: a node
   * of the cluster not connected (`_membership`). Unknown (no answer) counts as possible.
   */
  const splitPossible = async (): Promise<boolean> => {
    const raw: unknown = Reflect.get(db, 'fetch');
    if (typeof raw !== 'function') return true;
    try {
      const answer: unknown = await Reflect.apply(raw, db, [
        '/_membership',
        { headers: new Headers({ Accept: 'application/json' }) },
      ]);
      const json: unknown =
        typeof answer === 'object' && answer !== null ? Reflect.get(answer, 'json') : undefined;
      if (Reflect.get(Object(answer), 'ok') !== true || typeof json !== 'function') return true;
      const m: unknown = await Reflect.apply(json, answer, []);
      return !Membership.is(m) || m.cluster_nodes.some((node) => !m.all_nodes.includes(node));
    } catch {
      return true;
    }
  };
  /**
   * Deletes the leaves of `withdrawals`, again after a short pause for those no copy took: a copy
   * short of its quorum may sit on a single node, and the coordinator of the deletion may ask copies
   * that have not heard of that revision yet (they refuse it as a conflict) until internal
   * replication brings it to them. Best effort in the end: a copy that still cannot be withdrawn (the
   * cluster is short of nodes) stays a conflicting leaf, and the caller hears 503 either way.
   */
  const withdraw = async (withdrawals: NewDoc[]): Promise<void> => {
    let left = withdrawals;
    for (let n = 0; n < WITHDRAWAL_ATTEMPTS && left.length > 0; n += 1) {
      if (n > 0) await sleep(20 + Math.random() * 80);
      const results = await bulk(left).catch(() => undefined);
      left = results === undefined ? left : left.filter((_, i) => !isOk(results[i]));
    }
  };
  /**
   * The copy a refused write left behind, if it left one. A cluster answers 409 once two copies
   * refused a write, and the third may have taken it: two writers on one revision (or two creates of
   * one id), each first at a different copy, the loser first at one. Nobody withdraws that copy, and
   * once the copies sync it is a second live leaf: a fork of a claim or a check-in record (two
   * writers each holding what they wrote), a fork the pipeline settles for an aspect, and for an event
   * a document the pipeline waits on for its grace (15 s) before it withdraws the copy itself (the
   * two-instance row on three nodes: up to ten such waits in a row, and a keyed check-in unanswered
   * for 120 s behind them). So the refused write reads every leaf of its document, and withdraws the
   * live leaf that holds exactly what it wrote when another live leaf is there: the write that
   * reached the quorum. Only on a cluster (one copy cannot take a write it refused), and only for
   * documents without attachments (a leaf read back does not carry their bytes to compare).
   */
  const leftBehind = async (doc: NewDoc): Promise<string | undefined> => {
    copies ??= copiesOf(db);
    if ((await copies) < 2 || doc._id === undefined || '_attachments' in doc) return undefined;
    const leaves: unknown = await refusedLeaves(doc._id).catch(() => undefined);
    if (!Array.isArray(leaves)) return undefined;
    const { _id, _rev, ...mine } = doc;
    const wrote = canonicalize(mine);
    const live = liveLeaves(leaves).map(({ rev, doc: d }) => {
      const body = Object.fromEntries(Object.entries(d).filter(([k]) => !k.startsWith('_')));
      return { rev, ours: canonicalize(body) === wrote };
    });
    const ours = live.find((l) => l.ours);
    return ours !== undefined && live.some((l) => !l.ours) ? ours.rev : undefined;
  };
  /** Writes `docs`; a write short of its quorum is withdrawn and comes back as `undefined`. */
  const attempt = async (docs: NewDoc[]): Promise<Array<BulkResult | undefined>> => {
    const results = await bulk(docs);
    const refused = results.flatMap((r, i) => {
      const doc = docs[i];
      return doc !== undefined && isConflict(r) && Reflect.get(doc, '_deleted') !== true ? [doc] : [];
    });
    if (refused.length > 0) {
      const behind = await Promise.all(refused.map(leftBehind));
      const withdrawals = refused.flatMap((doc, i) => {
        const rev = behind[i];
        return rev === undefined || doc._id === undefined ? [] : [withdrawal(doc._id, rev)];
      });
      if (withdrawals.length > 0) await withdraw(withdrawals);
    }
    if (!results.some(isAccepted)) return results;
    const verdicts = await Promise.all(
      results.map(async (r, i) =>
        isAccepted(r) ? judge(r, Reflect.get(docs[i] ?? {}, '_deleted') === true) : undefined,
      ),
    );
    const withdrawn = results.flatMap((r, i) => {
      const v = verdicts[i];
      if (v === undefined || !isAccepted(r)) return [];
      return [...(v.self ? [withdrawal(r.id, r.rev)] : []), ...v.below.map((rev) => withdrawal(r.id, rev))];
    });
    if (withdrawn.length > 0) await withdraw(withdrawn);
    // A copy on top that withdrew others stands. With every node connected, a copy below it had
    // reached the quorum and its writer was told so: this writer hears 409, as it would had that copy
    // stood, so of two instances storing one event exactly one answers "stored" (the two-instance row:
    // 72 of 600 answered "stored" by both before this). With a node away the writers may have split
    // the copies, and the one below, short of its quorum too, withdraws its own and hears 409 itself
    // (eventSplit.couchdb.ts: 298 of 750 events answered "duplicate" by both, had this one heard 409
    // too). Only the answer depends on the membership read; what stays stored does not.
    const toldOthers = verdicts.some((v) => v !== undefined && v.below.length > 0);
    const split = toldOthers && (await splitPossible());
    return results.map((r, i) => {
      const v = verdicts[i];
      if (v?.self === true) return undefined;
      return !split && v !== undefined && v.below.length > 0 && isAccepted(r) ? storedByAnotherToo(r) : r;
    });
  };
  const judged = async (docs: NewDoc[], options: PouchDB.Core.BulkDocsOptions): Promise<BulkResult[]> => {
    if (options.new_edits === false) return bulkDocs(docs, options);
    const results: Array<BulkResult | undefined> = await attempt(docs);
    // Withdrawn, a write is as if never made, so the same write may be tried again: it then reaches
    // the quorum, or meets the write that did (409), or splits again. Two writers that split the
    // copies between them (one node of three down, each took one) both lose, and a short random
    // pause before the next attempt lets one of them win it.
    // Keeping the winner, a write is withdrawn only below a live leaf that stays: tried again, a create
    // would start a new branch over its own withdrawal, a generation above that leaf, and an update
    // would meet 409. The caller reads what stands instead.
    for (let n = 1; n < (keepWinner ? 1 : ATTEMPTS) && results.includes(undefined); n += 1) {
      await sleep(5 + Math.random() * 45);
      const again = docs.filter((_, i) => results[i] === undefined);
      const retried = await attempt(again);
      let k = 0;
      for (const [i, r] of results.entries()) if (r === undefined) results[i] = retried[k++];
    }
    return results.map((r, i) => r ?? new QuorumNotMetError(docs[i]?._id ?? '(unknown)'));
  };
  /**
   * A write and what it takes to know whether it stands run outside the caller's request deadline
   * (decision 0046: a write is followed to its end). The reads after it, of its document's leaves, are
   * part of that end: cut at the deadline, a refused write's copy left behind was never withdrawn
   * (`leftBehind` read nothing), nor one below the copy on top (`judge` kept it), and each such event
   * held every instance's pipeline for its grace, 15 s (a likely source of the holds in the
   * two-instance row on three nodes, under load: 178 requests answered at their deadline, 8 holds,
   * both pipelines 149 s behind; reliability.md). The caller has been answered at its deadline all
   * the same.
   */
  const judgedToTheEnd = (docs: NewDoc[], options: PouchDB.Core.BulkDocsOptions) =>
    detached(() => judged(docs, options));
  return Object.assign(db, {
    bulkDocs: (docs: NewDoc[], options: PouchDB.Core.BulkDocsOptions = {}) => judgedToTheEnd(docs, options),
    put: async (doc: PutDoc, options: PouchDB.Core.PutOptions = {}) =>
      doc._id.startsWith('_local/') || Object.keys(options).length > 0
        ? put(doc, options)
        : single((await judgedToTheEnd([doc], {}))[0], doc._id),
    remove: async (id: string, rev: string) =>
      single((await judgedToTheEnd([{ _id: id, _rev: rev, _deleted: true }], {}))[0], id),
  });
};
