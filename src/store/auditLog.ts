/**
 * The audit log (`audit_logs`) in the audit database. Append-only: there is no update or delete here
 * on purpose. `append` gives an entry a fresh id, so its write never conflicts; `appendKeyed` takes
 * the time and id its caller derived from the decision the entry records, and a conflict on that id
 * means the same entry is already stored (another instance, or a replay, wrote it), which counts as
 * stored: one decision, one entry.
 *
 * Appends go through the batching writer of `src/lib/batchWriter.ts` (a generic RxJS stream that
 * imports nothing from the store); `append` resolves once its batch's bulk write stored the entry.
 *
 * Reads page newest first by keyset on the `_id`, which sorts by `created_at` and then `audit_id`: a
 * page reads ids strictly below the previous page's last id, so an entry appended while a client pages
 * sorts above the cursor (with a forward-moving clock) and is never listed twice, and nothing that
 * existed when paging started is skipped. A keyed entry carries the time of the decision it records
 * (for a pipeline conflict, when the server received the later event), usually milliseconds before
 * it is written; after a backlog (a restart, a rebuild) it can be older, and a client paging at that
 * moment finds it on its next listing rather than the current one. A subject filter reads through the
 * `by-subject_id` index (subject, then id: the same order); the other filters are applied in memory
 * while scanning in batches (the range, or the subject's entries). Entries of the same millisecond
 * order by `audit_id`.
 *
 * `query` returns `Left(InvalidAuditCursor)` for a cursor that is not one this module issued, which
 * the route turns into a 400; every other failure is a rejected promise.
 */
import { Buffer } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import {
  AuditDoc,
  AuditEntry,
  type AuditFilter,
  type AuditLog,
  type AuditPage,
  auditDocId,
  type InvalidAuditCursor,
  MAX_AUDIT_PAGE_SIZE,
  type NewAuditEntry,
  toAuditEntry,
} from '../domain/audit.js';
import { type BatchingOptions, batchWriter, type ItemResult } from '../lib/batchWriter.js';
import { decodeDoc } from './docs.js';
import { sentAgainAfterSilence } from './docWrites.js';
import { indexIn } from './indexes.js';
import type { Database } from './pouch.js';
import { liveLeaves, withdrawal } from './quorumWrites.js';
import { isConflict, isShortOfQuorum, isStored } from './storeErrors.js';

export interface AuditLogOptions extends BatchingOptions {
  readonly clock: () => Date;
  /**
   * Where keyed entries claim their decision first, when other instances write the log too (CouchDB):
   * a database with quorum writes, so one claim of a decision stands (`quorumWrites.ts`). Undefined
   * where this process is the log's one writer.
   */
  readonly claims?: Database;
  /** `CLAIM_FORK_GRACE_MS` unless given (tests shorten it). */
  readonly claimForkGraceMs?: number;
}

/**
 * The claim of a keyed entry's decision: its time, as the first writer derived it. A keyed entry's id
 * holds its time, and two writers of one decision can derive different times: the time is the server
 * time of a copy of an event, and on a cluster two pipelines can each project a different copy of one
 * event (two instances stored it at once and neither copy reached the quorum; both are withdrawn and
 * the client sends it again), so the same decision was audited twice (the two-instance row with a node
 * killed: 1,480 entries written twice). With a claim keyed by the decision alone, every writer takes
 * the time the claim holds, and writes the same document.
 *
 * Each send of a claim carries a `claimant` of its own. A send refused (409) or short of its quorum
 * never stood, so a leaf with its claimant is this writer's own copy left behind, safe to withdraw and
 * to leave out. The time cannot tell that: a replay, or another writer that derived the same time,
 * holds the claim that stood at that very time, and taking it for a refused copy would withdraw the
 * claim that stood. Claims written before this field have none, and read as another writer's.
 */
const ClaimLeaf = t.intersection([
  t.type({ _rev: t.string, created_at: t.string }),
  t.partial({ claimant: t.string, _conflicts: t.array(t.string) }),
]);
type ClaimLeaf = t.TypeOf<typeof ClaimLeaf>;
/** A row of a read by keys that found its document (a missing one has an error, no value). */
const LiveRow = t.type({
  key: t.string,
  value: t.intersection([t.type({ rev: t.string }), t.partial({ deleted: t.boolean })]),
});
const claimId = (auditId: string): string => `auditClaim:${auditId}`;
/** Rounds of a claim short of its quorum before its entry is refused (the caller retries it later). */
const CLAIM_ATTEMPTS = 3;
/** Mean pause before a claim short of its quorum is tried again: one writer of a split may then win it. */
const CLAIM_PAUSE_MS = 40;
/**
 * How long a claim forked between other writers' times, with no entry at any of them, is waited on
 * before its earliest time is taken: as long as the pipeline waits on an event's copy left behind.
 */
const CLAIM_FORK_GRACE_MS = 15_000;

// The interface lives in the domain, so the HTTP layer names it without importing the store.
export type { AuditLog, InvalidAuditCursor };

/** Names the invalid fields only: their values may be exactly the personal data the log must not hold. */
export class InvalidAuditEntry extends Error {
  constructor(readonly fields: ReadonlyArray<string>) {
    super(`invalid audit entry: ${fields.join(', ')}`);
    this.name = 'InvalidAuditEntry';
  }
}

export class AuditEntryNotStored extends Error {
  constructor(readonly reason: string) {
    super(`audit entry not stored: ${reason}`);
    this.name = 'AuditEntryNotStored';
  }
}

type NewAuditDoc = Omit<AuditDoc, '_rev'>;

interface Queued {
  readonly doc: NewAuditDoc;
  /** Its id was derived by its caller: a conflict means this very entry is stored already. */
  readonly keyed: boolean;
}

const ID_PREFIX = 'audit:';
// Above every id of the prefix in both orders the reads meet: `_all_docs` compares ids by code point,
// but a Mango index on CouchDB collates with ICU, where ';' sorts before ':' (a sentinel of ':' + 1
// left the last millisecond of a range out of the subject's pages). CouchDB's own advice: '\ufff0'.
const HIGH = '\ufff0';
const AFTER_PREFIX = `${ID_PREFIX}${HIGH}`;
const AUDIT_ID_RE =
  /^audit:\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const BASE64URL_RE = /^[A-Za-z0-9_-]+$/;
const SCAN_BATCH = 250;

export const encodeAuditCursor = (id: string): string => Buffer.from(id, 'utf8').toString('base64url');

/** The entry id a cursor stands for, or undefined when the cursor is not one this log issues. */
export const decodeAuditCursor = (cursor: string): string | undefined => {
  if (!BASE64URL_RE.test(cursor)) return undefined;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  // Node's decoder skips what it cannot read; only a cursor that re-encodes to itself is ours.
  return AUDIT_ID_RE.test(id) && encodeAuditCursor(id) === cursor ? id : undefined;
};

/**
 * An instant as the millisecond key the ids carry. Ids hold milliseconds, so an inclusive lower bound
 * with finer digits rounds up and an inclusive upper bound rounds down (which is what `Date` does).
 */
const msKey = (iso: string, round: 'up' | 'down'): string => {
  const ms = Date.parse(iso);
  const fraction = /\.\d{3}(\d+)Z$/.exec(iso)?.[1] ?? '';
  const extra = round === 'up' && /[1-9]/.test(fraction) ? 1 : 0;
  return new Date(ms + extra).toISOString();
};

const fieldsOf = (errors: t.Errors): string[] => [
  ...new Set(
    errors.map(
      (e) =>
        e.context
          .map((c) => c.key)
          .filter((k) => k !== '')
          .join('.') || '(entry)',
    ),
  ),
];

const matches =
  (f: AuditFilter) =>
  (doc: AuditDoc): boolean =>
    (f.actor === undefined || doc.actor_user_id === f.actor) &&
    (f.endpoint === undefined || doc.endpoint === f.endpoint) &&
    (f.outcome === undefined || doc.outcome === f.outcome) &&
    (f.subjectId === undefined || doc.subject_id === f.subjectId);

const describeFailure = (r: unknown): string =>
  typeof r === 'object' && r !== null && 'name' in r && typeof r.name === 'string' ? r.name : 'unknown';

/** Throws `InvalidAuditEntry`; the time is read at the call, not when the batch is written. */
const newAuditDoc = (entry: NewAuditEntry, at: Date, auditId: string): NewAuditDoc => {
  const createdAt = at.toISOString();
  // Closed decode: a field the codec does not name (personal data passed by mistake) is refused.
  const decoded = AuditEntry.decode({ ...entry, audit_id: auditId, created_at: createdAt });
  if (E.isLeft(decoded)) throw new InvalidAuditEntry(fieldsOf(decoded.left));
  const fields: AuditEntry = decoded.right;
  return {
    _id: auditDocId(createdAt, auditId),
    docType: 'audit',
    ...fields,
    // The write happens up to a window later; a caller changing its object meanwhile must not change the entry.
    details: structuredClone(fields.details),
  };
};

export const auditLog = (db: Database, options: AuditLogOptions): AuditLog => {
  const forkGraceMs = options.claimForkGraceMs ?? CLAIM_FORK_GRACE_MS;
  /** When this log first found each claim forked between other writers' times, by claim id. */
  const forkedSince = new Map<string, number>();

  /**
   * The live leaves of refused claims, by claim id. One read of the winners with their conflicts
   * answers most; a winner with conflicts, or one that is a copy of this writer's own that never
   * stood, is read again leaf by leaf: a cluster may answer with the winner of one copy and only the
   * conflicts that copy knows of, while the leaf read (`open_revs=all`, whose revision trees CouchDB
   * merges over at least a quorum of copies) always meets the claim that stood on one of them.
   */
  const leavesOf = async (
    claims: Database,
    ids: ReadonlyArray<string>,
    neverStood: ReadonlySet<string>,
  ): Promise<Map<string, ClaimLeaf[]>> => {
    const read = await claims.allDocs({ keys: [...ids], include_docs: true, conflicts: true });
    const winners = new Map<string, ClaimLeaf>();
    for (const row of read.rows) {
      const doc: unknown = 'doc' in row ? row.doc : undefined;
      if (ClaimLeaf.is(doc)) winners.set(row.key, doc);
    }
    const leaves = new Map<string, ClaimLeaf[]>();
    await Promise.all(
      ids.map(async (id) => {
        const winner = winners.get(id);
        if (winner === undefined) return;
        const ownCopy = winner.claimant !== undefined && neverStood.has(winner.claimant);
        if (!ownCopy && (winner._conflicts ?? []).length === 0) {
          leaves.set(id, [winner]);
          return;
        }
        const all: unknown = await claims.get(id, { open_revs: 'all' }).catch(() => undefined);
        leaves.set(
          id,
          liveLeaves(all).flatMap(({ doc }) => (ClaimLeaf.is(doc) ? [doc] : [])),
        );
      }),
    );
    return leaves;
  };

  /** Which of `ids` (entry ids) the log holds: an entry stored already. */
  const storedEntries = async (ids: ReadonlyArray<string>): Promise<Set<string>> => {
    if (ids.length === 0) return new Set();
    const read = await db.allDocs({ keys: [...ids] });
    return new Set(
      read.rows.flatMap((row) => (LiveRow.is(row) && row.value.deleted !== true ? [row.key] : [])),
    );
  };

  /**
   * The time of the claim that stands, for each keyed entry whose claim this writer was refused (409);
   * none for an entry whose claim cannot tell yet (tried again after the pause).
   *
   * A refusal means a quorum of copies held another claim, which stays; but the refused claim may
   * still have been taken by the third copy, and once the copies sync that leaf conflicts with the
   * one that stood. CouchDB makes the winner of two first revisions the one whose hash sorts higher,
   * not the one that reached the quorum, so reading the winner could name the refused claim's time
   * (one decision audited at both writers' times, three nodes, twice in CI). So the leaves are read:
   * this writer's own copies that never stood (by `claimant`) are withdrawn, for later readers, and
   * left out; one time left is the claim that stood.
   *
   * More than one time left: another writer's refused copy, not withdrawn yet (its writer withdraws
   * it in its own round; it may have died first), beside the claim that stood. Nothing in the leaves
   * tells which stood: both are first revisions and, once synced, every copy holds both. No rule over
   * the leaves alone is safe (the writer whose claim stood wrote its entry at its own time without
   * reading anything), but the entry it wrote is: a time already audited is taken, and writing it
   * again stores nothing new. With none audited the writer that stood has not written its entry yet,
   * so this waits (the refused copy is usually withdrawn by then). A fork that outlasts
   * `CLAIM_FORK_GRACE_MS` with no entry (that writer died between claim and entry, and its leaf-less
   * replay comes here too) takes its earliest time: every reader past the grace picks the same, and
   * the first entry written then settles it for the rest. What stays open: two readers past the grace
   * that see different sets of leaves can each pick their own earliest.
   */
  const standingTimes = async (
    claims: Database,
    refused: ReadonlyArray<NewAuditDoc>,
    neverStood: ReadonlySet<string>,
  ): Promise<Map<NewAuditDoc, string>> => {
    const ids = [...new Set(refused.map((d) => claimId(d.audit_id)))];
    const leaves = await leavesOf(claims, ids, neverStood);
    const isOwn = (l: ClaimLeaf): boolean => l.claimant !== undefined && neverStood.has(l.claimant);
    const own = [...leaves].flatMap(([id, ls]) => ls.filter(isOwn).map((l) => withdrawal(id, l._rev)));
    // Best effort: a withdrawal no copy took leaves the fork, which the next read shows again.
    if (own.length > 0) await claims.bulkDocs(own).catch(() => undefined);
    const timesOf = (id: string): string[] =>
      [...new Set((leaves.get(id) ?? []).filter((l) => !isOwn(l)).map((l) => l.created_at))].sort();
    const forked = refused.filter((d) => timesOf(claimId(d.audit_id)).length > 1);
    const audited = await storedEntries([
      ...new Set(forked.flatMap((d) => timesOf(claimId(d.audit_id)).map((at) => auditDocId(at, d.audit_id)))),
    ]);
    const now = performance.now();
    const out = new Map<NewAuditDoc, string>();
    for (const doc of refused) {
      const id = claimId(doc.audit_id);
      const times = timesOf(id);
      const only = times.length === 1 ? times[0] : undefined;
      if (times.length <= 1) forkedSince.delete(id);
      if (only !== undefined) out.set(doc, only);
      if (times.length <= 1) continue;
      const since = forkedSince.get(id) ?? now;
      forkedSince.set(id, since);
      const at =
        times.find((t) => audited.has(auditDocId(t, doc.audit_id))) ??
        (now - since >= forkGraceMs ? times[0] : undefined);
      if (at === undefined) continue;
      forkedSince.delete(id);
      out.set(doc, at);
    }
    return out;
  };

  /**
   * Each keyed entry with the time its decision's claim holds (this writer's when its claim stood), or
   * the reason it cannot be written yet (its claim neither stood nor was refused: the caller retries).
   *
   * Only a claim read after a refusal (409) names the time, and only as `standingTimes` reads it. A
   * claim short of its quorum (withdrawn by `quorumWrites`, or not judged at all) says nothing of the
   * others: on a cluster two writers' claims of one decision can both fall short, each on one copy,
   * and each read the other's before its writer withdrew it, so each wrote the entry at the other's
   * time (one decision audited at two times, three nodes). Such a claim is tried again after a short
   * pause, where it reaches its quorum or meets the claim that did.
   */
  const claimed = async (
    claims: Database,
    items: ReadonlyArray<Queued>,
  ): Promise<Array<NewAuditDoc | string>> => {
    const keyed = items.flatMap((q) => (q.keyed ? [q.doc] : []));
    if (keyed.length === 0) return items.map((q) => q.doc);
    const outcome = new Map<NewAuditDoc, NewAuditDoc | string>();
    /** Claimants of this call's sends answered as refused or short of their quorum: none stood. */
    const neverStood = new Set<string>();
    let pending = keyed;
    for (let attempt = 1; pending.length > 0; attempt += 1) {
      if (attempt > 1) await sleep(CLAIM_PAUSE_MS * (0.5 + Math.random()));
      const batch = pending;
      let sent: ReadonlyArray<{ readonly doc: NewAuditDoc; readonly claimant: string }> = [];
      // A claim cut by the silence limit is sent again (0064), under a claimant of its own: the first
      // send, unheard, may have stood, and read back below it is another claimant's at this writer's
      // own time, which it then takes.
      const { result: results } = await sentAgainAfterSilence(() => {
        sent = batch.map((doc) => ({ doc, claimant: randomUUID() }));
        return claims.bulkDocs(
          sent.map(({ doc, claimant }) => ({
            _id: claimId(doc.audit_id),
            docType: 'auditClaim',
            created_at: doc.created_at,
            claimant,
          })),
        );
      });
      sent.forEach(({ claimant }, i) => {
        const r = results[i];
        if (r !== undefined && (isConflict(r) || isShortOfQuorum(r))) neverStood.add(claimant);
      });
      const refused = batch.filter((_, i) => {
        const r = results[i];
        return r !== undefined && isConflict(r);
      });
      const timeOf =
        refused.length > 0
          ? await standingTimes(claims, refused, neverStood)
          : new Map<NewAuditDoc, string>();
      pending = [];
      batch.forEach((doc, i) => {
        const r = results[i];
        if (r !== undefined && isStored(r)) {
          outcome.set(doc, doc);
          return;
        }
        const at = timeOf.get(doc);
        if (at !== undefined) outcome.set(doc, { ...doc, _id: auditDocId(at, doc.audit_id), created_at: at });
        // A refusal whose claim could not be read (withdrawn since, a lagging copy, a fork no entry
        // settles yet) is tried again too.
        else if (attempt < CLAIM_ATTEMPTS) pending.push(doc);
        else outcome.set(doc, `claim ${describeFailure(r)}`);
      });
    }
    return items.map((q) => outcome.get(q.doc) ?? q.doc);
  };

  const write = async (items: ReadonlyArray<Queued>): Promise<ItemResult[]> => {
    const docs =
      options.claims === undefined ? items.map((q) => q.doc) : await claimed(options.claims, items);
    const writable = docs.flatMap((d) => (typeof d === 'string' ? [] : [d]));
    // An entry's id holds its own audit id, so sent again after the silence limit cut the answer
    // (0064), a refusal of its id is the first send's copy of this very entry.
    const { result: results, again } =
      writable.length === 0
        ? { result: [], again: false }
        : await sentAgainAfterSilence(() => db.bulkDocs(writable));
    let next = 0;
    return items.map((q, i): ItemResult => {
      const d = docs[i];
      if (typeof d === 'string') return { ok: false, error: new AuditEntryNotStored(d) };
      const r = results[next];
      next += 1;
      return r !== undefined && (isStored(r) || ((q.keyed || again) && isConflict(r)))
        ? { ok: true, value: undefined }
        : { ok: false, error: new AuditEntryNotStored(describeFailure(r)) };
    });
  };
  const writer = batchWriter(write, options);

  const page = async (f: AuditFilter, cursorId: string | undefined): Promise<AuditPage> => {
    const lower = f.from === undefined ? ID_PREFIX : `${ID_PREFIX}${msKey(f.from, 'up')}`;
    const toUpper = f.to === undefined ? AFTER_PREFIX : `${ID_PREFIX}${msKey(f.to, 'down')}:${HIGH}`;
    // Rows at or above `exclusiveAbove` were listed already (the cursor's own entry included).
    let exclusiveAbove = cursorId !== undefined && cursorId < toUpper ? cursorId : undefined;
    let upper = exclusiveAbove ?? toUpper;
    // CouchDB refuses a reversed range (400) where PouchDB answers empty; both mean no entries.
    if (upper < lower) return { items: [], nextCursor: null };
    const wanted = matches(f);
    const inMemory = f.actor !== undefined || f.endpoint !== undefined || f.outcome !== undefined;
    // Unfiltered, one read of limit + 1 rows answers the page; filtered, rows are scanned in batches.
    const batchSize = inMemory ? SCAN_BATCH : f.limit + 1;
    const subject = f.subjectId;
    /** The next rows below `upper` (and below `exclusiveAbove`), newest first. */
    const next = async (): Promise<Array<{ id: string; doc: unknown }>> => {
      if (subject === undefined) {
        const res = await db.allDocs({
          descending: true,
          startkey: upper,
          endkey: lower,
          inclusive_end: true,
          include_docs: true,
          limit: batchSize + 1,
        });
        return res.rows.map((r) => ({ id: r.id, doc: r.doc }));
      }
      // One subject's entries through its index: the export no longer reads the whole log.
      const res = await db.find({
        selector: {
          subject_id: subject,
          _id: { $gte: lower, ...(exclusiveAbove === undefined ? { $lte: upper } : { $lt: exclusiveAbove }) },
        },
        sort: [{ subject_id: 'desc' }, { _id: 'desc' }],
        limit: batchSize + 1,
        use_index: indexIn(db, 'by-subject_id'),
      });
      return res.docs.map((d) => ({ id: d._id, doc: d }));
    };
    // One match more than asked for tells whether a next page exists, so the last page says null.
    const found: AuditDoc[] = [];
    for (;;) {
      const rows = await next();
      for (const row of rows) {
        if (exclusiveAbove !== undefined && row.id >= exclusiveAbove) continue;
        const doc = decodeDoc(AuditDoc, row.id, row.doc);
        if (wanted(doc)) found.push(doc);
        if (found.length > f.limit) break;
      }
      const last = rows[rows.length - 1];
      if (found.length > f.limit || rows.length <= batchSize || last === undefined) break;
      upper = last.id;
      exclusiveAbove = last.id;
    }
    const items = found.slice(0, f.limit);
    const lastItem = items[items.length - 1];
    return {
      items: items.map(toAuditEntry),
      nextCursor: found.length > f.limit && lastItem !== undefined ? encodeAuditCursor(lastItem._id) : null,
    };
  };

  return {
    append(entry) {
      let doc: NewAuditDoc;
      try {
        doc = newAuditDoc(entry, options.clock(), randomUUID());
      } catch (e) {
        return Promise.reject(e);
      }
      // The writer's own promise, not one chained on it: it settles before `flush` resolves, so after
      // `await flush()` every earlier append's callbacks have run.
      return writer.submit({ doc, keyed: false });
    },

    appendKeyed(entry, key) {
      let doc: NewAuditDoc;
      try {
        const at = new Date(key.at);
        if (Number.isNaN(at.getTime())) throw new InvalidAuditEntry(['created_at']);
        doc = newAuditDoc(entry, at, key.auditId);
      } catch (e) {
        return Promise.reject(e);
      }
      return writer.submit({ doc, keyed: true });
    },

    async query(f) {
      if (!Number.isInteger(f.limit) || f.limit < 1 || f.limit > MAX_AUDIT_PAGE_SIZE) {
        throw new RangeError(`audit page size must be 1 to ${MAX_AUDIT_PAGE_SIZE}`);
      }
      if (f.cursor === undefined) return E.right(await page(f, undefined));
      const cursorId = decodeAuditCursor(f.cursor);
      if (cursorId === undefined) return E.left({ _tag: 'InvalidAuditCursor' });
      return E.right(await page(f, cursorId));
    },

    flush: () => writer.flush(),
    close: () => writer.close(),
  };
};
