/**
 * Check-in configuration, the check-in secret and check-in records (private database). A record's
 * state (in, out, superseded, who and when) is written only by the event pipeline from the check-in
 * events (`applyProjected`); failed code attempts are counted here by compare-and-swap on the record's
 * revision, so concurrent attempts are counted exactly.
 *
 * Which check-in of a child is open at a session is the check-in aspect's state (the pipeline writes
 * the record first, then the aspect), so the check-in service reads it there. An open-claim document
 * (`checkin-open:<session>:<student>`) used to repeat it: a second write and three reads per check-in
 * for a copy (decision 0019). Such documents left in a data directory are never read.
 */
import { randomBytes } from 'node:crypto';
import * as E from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import {
  type CheckinConfig,
  CheckinConfigDoc,
  CheckinDoc,
  CheckinSecretDoc,
  DEFAULT_CHECKIN_CONFIG,
} from '../domain/checkin.js';
import { boundedCache } from '../lib/boundedCache.js';
import { putBatched } from './batchedPut.js';
import { type DocCache, noDocCache, writingThrough } from './docCache.js';
import { getDoc } from './docs.js';
import { conflictAs, createOnce, retryOnConflict, stayedContended } from './docWrites.js';
import { indexIn } from './indexes.js';
import type { Database } from './pouch.js';
import { removeEach, rewriteEach } from './rewrites.js';

const CONFIG_ID = 'checkin-config';
/** Records remembered as minted or as lately written here (see `minted`, `lastWritten`). */
const RECENT_RECORDS = 2_000;
const SECRET_ID = 'checkin-secret';
export const checkinDocId = (checkInId: string): string => `checkin:${checkInId}`;
/**
 * What every check-in and check-out reads: the record and the configuration (see docCache.ts; on
 * CouchDB kept coherent with other instances by the private feed). Every write of them here goes
 * through these caches.
 */
export interface CheckinCaches {
  readonly records: DocCache<CheckinDoc>;
  readonly config: DocCache<t.TypeOf<typeof CheckinConfigDoc>>;
}

export const noCheckinCaches = (): CheckinCaches => ({
  records: noDocCache(),
  config: noDocCache(),
});

export type NewCheckin = Omit<CheckinDoc, '_id' | '_rev' | 'docType'>;

/** What the projection decides about a check-in; the code is used only when the record is created. */
export type ProjectedCheckin = Omit<NewCheckin, 'failedAttempts'>;

const STATE_FIELDS = [
  'status',
  'checkedInAt',
  'checkedInBy',
  'checkedOutAt',
  'checkedOutBy',
  'pickupPerson',
  'emergency',
  'justification',
] as const;

const pickState = (next: ProjectedCheckin): Pick<CheckinDoc, (typeof STATE_FIELDS)[number]> => ({
  status: next.status,
  checkedInAt: next.checkedInAt,
  checkedInBy: next.checkedInBy,
  checkedOutAt: next.checkedOutAt,
  checkedOutBy: next.checkedOutBy,
  pickupPerson: next.pickupPerson,
  emergency: next.emergency,
  justification: next.justification,
});

export interface CheckinStore {
  config(): Promise<CheckinConfig & { readonly updatedAt: string | null }>;
  /** Replaces the configuration (last writer wins); `CONFLICT` when other writers kept winning. */
  saveConfig(config: CheckinConfig, at: string): Promise<'SAVED' | 'CONFLICT'>;
  /** The master secret, created (256 CSPRNG bits) by whichever instance reads it first. Never sent out. */
  secret(at: string): Promise<Uint8Array>;
  get(checkInId: string): Promise<CheckinDoc | undefined>;
  /** The record as stored now, past the cache (which it fills). */
  getStored(checkInId: string): Promise<CheckinDoc | undefined>;
  /**
   * Says that `checkInId` was just minted here, so no record of it exists yet: the write-through
   * that creates it skips the read that would find nothing, on either backend (a create-only write;
   * should the record exist after all, written by another instance's pipeline, it is a 409 and the
   * retry reads it).
   */
  minted(checkInId: string): void;
  /**
   * The record as this process last wrote it, when it wrote it lately: what a request answers once
   * the pipeline applied its event, without reading it back (records are not cached on CouchDB).
   */
  lastWritten(checkInId: string): CheckinDoc | undefined;
  /**
   * Makes the record match the projection: creates it, or updates its state fields (never the attempt
   * counter or the code). `unchanged` when it already matched.
   */
  applyProjected(next: ProjectedCheckin): Promise<'written' | 'unchanged'>;
  /** Compare-and-swap of the attempt counter. */
  countFailure(current: CheckinDoc): Promise<CheckinDoc | 'CONFLICT'>;
  /**
   * Which of `sessionIds` have a check-in record. Read through the by-docType index (no index by
   * session): it serves schedule edits, a few a week, never the door.
   */
  sessionsWithCheckins(sessionIds: ReadonlyArray<string>): Promise<Set<string>>;
  /**
   * Retention (0045): the records' personal fields as `anonymise` makes them (the adult who collected
   * the child, an emergency's justification). Answers how many records it rewrote.
   */
  anonymiseRecords(
    checkInIds: ReadonlyArray<string>,
    anonymise: (c: CheckinDoc) => Pick<CheckinDoc, 'pickupPerson' | 'justification'>,
  ): Promise<number>;
  /**
   * Retention (0045): removes the records of check-in aspects past their period, and the aspects'
   * open-claim documents left by older versions. Answers how many records it removed.
   */
  removeRecords(
    checkInIds: ReadonlyArray<string>,
    aspects: ReadonlyArray<{ readonly sessionId: string; readonly studentId: string }>,
  ): Promise<number>;
}

export const checkinStore = (db: Database, caches: CheckinCaches = noCheckinCaches()): CheckinStore => {
  // Ids minted here whose record is not written yet, and records this process wrote lately: a few
  // seconds of check-ins at the door, whatever the backend caches.
  const mintedIds = boundedCache<true>({ maxEntries: RECENT_RECORDS });
  const written = boundedCache<CheckinDoc>({ maxEntries: RECENT_RECORDS });
  /** Stores a record (`put` semantics: a stale `_rev` is a 409) and remembers what was stored. */
  const writeRecord = async (doc: CheckinDoc | Omit<CheckinDoc, '_rev'>): Promise<CheckinDoc> => {
    written.delete(doc._id);
    const r = await writingThrough(caches.records, doc._id, () => putBatched(db, doc));
    const stored: CheckinDoc = { ...doc, _rev: r.rev };
    caches.records.remember(doc._id, stored);
    written.set(doc._id, stored);
    return stored;
  };

  const forgetRecord = (id: string): void => {
    caches.records.forget(id);
    written.delete(id);
  };

  let knownSecret: Uint8Array | undefined;
  const storedSecret = async (at: string): Promise<Uint8Array> => {
    // Created once: when another instance created it first, theirs is the secret.
    const stored = await createOnce(db, CheckinSecretDoc, SECRET_ID, () => ({
      docType: 'checkinSecret',
      secret: randomBytes(32).toString('base64url'),
      createdAt: at,
    }));
    return new Uint8Array(Buffer.from(stored.secret, 'base64url'));
  };

  const store: CheckinStore = {
    async config() {
      const doc = await caches.config.read(CONFIG_ID, () => getDoc(db, CheckinConfigDoc, CONFIG_ID));
      if (doc === undefined) return { ...DEFAULT_CHECKIN_CONFIG, updatedAt: null };
      return {
        pickupMode: doc.pickupMode,
        maxCheckoutAttempts: doc.maxCheckoutAttempts,
        emergencyCheckoutAdminOnly: doc.emergencyCheckoutAdminOnly,
        requiredFields: doc.requiredFields ?? [],
        updatedAt: doc.updatedAt,
      };
    },

    saveConfig: (config, at) =>
      retryOnConflict(
        5,
        async () => {
          const current = await getDoc(db, CheckinConfigDoc, CONFIG_ID);
          await writingThrough(caches.config, CONFIG_ID, () =>
            db.put({
              _id: CONFIG_ID,
              ...(current === undefined ? {} : { _rev: current._rev }),
              docType: 'checkinConfig',
              ...config,
              updatedAt: at,
            }),
          );
          return 'SAVED' as const;
        },
        () => 'CONFLICT' as const,
      ),

    async secret(at) {
      // Stored once (the first writer wins) and never rewritten while a service runs (a restore runs
      // with the service stopped), so one read per process: the roster's passes and the configuration
      // read it on every call (issue #23). A copy, so no caller can change the one held.
      if (knownSecret !== undefined) return new Uint8Array(knownSecret);
      knownSecret = await storedSecret(at);
      return new Uint8Array(knownSecret);
    },

    get: (checkInId) => {
      const id = checkinDocId(checkInId);
      return caches.records.read(id, () => getDoc(db, CheckinDoc, id));
    },

    getStored(checkInId) {
      caches.records.forget(checkinDocId(checkInId));
      return store.get(checkInId);
    },

    minted(checkInId) {
      const id = checkinDocId(checkInId);
      // A key the ledger holds nothing for may still have a record: its first attempt was answered
      // 503 (not kept by the ledger) after the pipeline wrote it. What this process wrote stands.
      if (written.has(id) || caches.records.peek(id) !== undefined) return;
      caches.records.remember(id, undefined);
      mintedIds.set(id, true);
    },

    lastWritten: (checkInId) => written.get(checkinDocId(checkInId)),

    async applyProjected(next) {
      const id = checkinDocId(next.checkInId);
      const fresh = mintedIds.has(id);
      mintedIds.delete(id);
      return retryOnConflict(
        20,
        async (tried) => {
          const current = fresh && tried === 0 ? undefined : await store.get(next.checkInId);
          if (current !== undefined && STATE_FIELDS.every((f) => current[f] === next[f])) return 'unchanged';
          await writeRecord(
            current === undefined
              ? { _id: checkinDocId(next.checkInId), docType: 'checkin' as const, ...next, failedAttempts: 0 }
              : { ...current, ...pickState(next) },
          );
          return 'written';
        },
        stayedContended('the check-in record'),
      );
    },

    countFailure: (current) =>
      conflictAs('CONFLICT', () => writeRecord({ ...current, failedAttempts: current.failedAttempts + 1 })),

    async sessionsWithCheckins(sessionIds) {
      if (sessionIds.length === 0) return new Set();
      const found = await db.find({
        selector: { docType: 'checkin', sessionId: { $in: [...sessionIds] } },
        fields: ['sessionId'],
        limit: 100_000,
        use_index: indexIn(db, 'by-docType'),
      });
      return new Set(
        found.docs.flatMap((d) => ('sessionId' in d && typeof d.sessionId === 'string' ? [d.sessionId] : [])),
      );
    },

    async anonymiseRecords(checkInIds, anonymise) {
      const ids = checkInIds.map(checkinDocId);
      for (const id of ids) forgetRecord(id);
      const rewritten = await rewriteEach(db, ids, (raw) => {
        const doc = CheckinDoc.decode(raw);
        if (E.isLeft(doc)) return undefined;
        const next = anonymise(doc.right);
        return next.pickupPerson === doc.right.pickupPerson && next.justification === doc.right.justification
          ? undefined
          : { ...raw, ...next };
      });
      for (const id of ids) forgetRecord(id);
      return rewritten;
    },

    async removeRecords(checkInIds, aspects) {
      const ids = checkInIds.map(checkinDocId);
      for (const id of ids) forgetRecord(id);
      await removeEach(
        db,
        aspects.map((a) => `checkin-open:${a.sessionId}:${a.studentId}`),
      );
      const removed = await removeEach(db, ids);
      for (const id of ids) forgetRecord(id);
      return removed;
    },
  };
  return store;
};
