/**
 * Nuclei, classes and class sessions, one document each. Ids are random UUIDs generated here, so a
 * create is a plain create-only put; updates are compare-and-swap on the read revision, and the
 * caller decides whether a `CONFLICT` is retried. Lists read the by-docType index and sort in
 * memory: teams have tens of classes and a few sessions a week.
 *
 * A nucleus's name is unique once folded (case and accents, as student names are searched; 0043):
 * a create-only claim document per folded name, as user emails are kept unique, so two instances
 * creating one name at once cannot both succeed.
 */
import { createHash, randomUUID } from 'node:crypto';
import * as t from 'io-ts';
import {
  type ActivityStatus,
  ClassDoc,
  ClassSessionDoc,
  type ClassSessionFilter,
  NucleusDoc,
} from '../domain/classes.js';
import { foldName } from '../rules/students.js';
import { type DocCache, noDocCache, writingThrough } from './docCache.js';
import { getDoc, getDocs, listDocs } from './docs.js';
import { conflictAs, putDoc, takeClaim } from './docWrites.js';
import type { Database } from './pouch.js';

export const nucleusDocId = (nucleusId: string): string => `nucleus:${nucleusId}`;
export const classDocId = (classId: string): string => `class:${classId}`;
export const classSessionDocId = (sessionId: string): string => `classSession:${sessionId}`;

export const nucleusNameClaimId = (name: string): string =>
  `nucleus-name:${createHash('sha256').update(foldName(name), 'utf8').digest('hex')}`;

const NucleusNameClaim = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('nucleusName'),
  nucleusId: t.string,
  claimedAt: t.string,
});

/**
 * How long a claim whose nucleus does not (yet) bear its name is left to the create or rename that
 * made it: far longer than one takes, and after it a claim left by one that failed half-way is free.
 */
const CLAIM_SETTLE_MS = 5 * 60_000;

// The status is changed by `setStatus` alone: an update keeps the one it read, so no edit, schedule
// run or write-through that rewrites a record can reactivate it by leaving the field out.
type Stored = '_id' | '_rev' | 'docType' | 'status';
/** The fields a caller supplies; the id comes from the store on create and from `current` on update. */
export type NucleusFields = Omit<NucleusDoc, Stored | 'nucleusId'>;
export type ClassFields = Omit<ClassDoc, Stored | 'classId'>;
export type ClassSessionFields = Omit<ClassSessionDoc, Stored | 'sessionId'>;

/** A nucleus, class or session: what `setStatus` changes. */
export type Deactivatable = NucleusDoc | ClassDoc | ClassSessionDoc;

export interface ClassStore {
  getNucleus(nucleusId: string): Promise<NucleusDoc | undefined>;
  getClass(classId: string): Promise<ClassDoc | undefined>;
  getSession(sessionId: string): Promise<ClassSessionDoc | undefined>;
  /** Ordered by name. */
  listNuclei(): Promise<NucleusDoc[]>;
  /** Ordered by name. */
  listClasses(): Promise<ClassDoc[]>;
  /** Ordered by date, then start (unknown last), then title (none last). */
  listSessions(filter?: ClassSessionFilter): Promise<ClassSessionDoc[]>;
  /** `NAME_TAKEN` when another nucleus's name folds to the same (its creation time is `createdAt`). */
  createNucleus(fields: NucleusFields): Promise<NucleusDoc | 'NAME_TAKEN'>;
  createClass(fields: ClassFields): Promise<ClassDoc>;
  createSession(fields: ClassSessionFields): Promise<ClassSessionDoc>;
  /** The sessions among `sessionIds` that exist, by id (one read). */
  getSessions(sessionIds: ReadonlyArray<string>): Promise<Map<string, ClassSessionDoc>>;
  /**
   * Creates a session with an id the caller derived (a schedule's); `EXISTS` when that id is taken,
   * which is how two instances making the same session agree on one.
   */
  createSessionWithId(sessionId: string, fields: ClassSessionFields): Promise<ClassSessionDoc | 'EXISTS'>;
  /** Removes a session (one a schedule no longer wants); `CONFLICT` when it changed meanwhile. */
  removeSession(current: ClassSessionDoc): Promise<'REMOVED' | 'CONFLICT'>;
  /**
   * Compare-and-swap on `current._rev`; `CONFLICT` when the document changed meanwhile, `NAME_TAKEN`
   * when the new name folds to another nucleus's. A name that folds as before is kept without a check,
   * so nuclei that shared a name before names were unique can still be written.
   */
  updateNucleus(current: NucleusDoc, next: NucleusFields): Promise<NucleusDoc | 'CONFLICT' | 'NAME_TAKEN'>;
  updateClass(current: ClassDoc, next: ClassFields): Promise<ClassDoc | 'CONFLICT'>;
  updateSession(current: ClassSessionDoc, next: ClassSessionFields): Promise<ClassSessionDoc | 'CONFLICT'>;
  /**
   * Sets a nucleus's, class's or session's status and `updatedAt`, every other field as read
   * (compare-and-swap on `current._rev`; `CONFLICT` when it changed meanwhile).
   */
  setStatus<D extends Deactivatable>(current: D, status: ActivityStatus, at: string): Promise<D | 'CONFLICT'>;
}

/** The status a record was read with, to write back unchanged (absent on records from before it existed). */
const statusKept = (current: { readonly status?: ActivityStatus | undefined }) =>
  current.status === undefined ? {} : { status: current.status };

const byName = (a: { name: string; _id: string }, b: { name: string; _id: string }): number =>
  a.name.localeCompare(b.name) || a._id.localeCompare(b._id);

// Absent values sort after present ones, so untimed or untitled meetings come last in their day.
const nullsLast =
  <A>(compare: (a: A, b: A) => number) =>
  (a: A | null, b: A | null): number => {
    if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
    return compare(a, b);
  };
// Instants may differ in their fraction digits, so they are compared as times, not as text.
const byInstant = nullsLast((a: string, b: string) => Date.parse(a) - Date.parse(b));
const byText = nullsLast((a: string, b: string) => a.localeCompare(b));

const byMeeting = (a: ClassSessionDoc, b: ClassSessionDoc): number =>
  a.date.localeCompare(b.date) ||
  byInstant(a.startsAt, b.startsAt) ||
  byText(a.title, b.title) ||
  a._id.localeCompare(b._id);

/**
 * `sessions` caches class sessions, which every check-in reads, and `classes` the classes every new
 * student's class is checked against (see docCache.ts). Every write here goes through both, whatever
 * the kind of document: forgetting an id a cache does not hold costs nothing.
 */
export const classStore = (
  db: Database,
  sessions: DocCache<ClassSessionDoc> = noDocCache(),
  classes: DocCache<ClassDoc> = noDocCache(),
): ClassStore => {
  const put = (doc: { readonly _id: string; readonly _rev?: string }) =>
    writingThrough(sessions, doc._id, () => writingThrough(classes, doc._id, () => db.put(doc)));
  const create = async <D extends { readonly _id: string }>(doc: D): Promise<D & { _rev: string }> => {
    // A fresh random id cannot be taken, so a conflict here is a bug and is left to throw.
    const r = await put(doc);
    return { ...doc, _rev: r.rev };
  };

  /** The new revision, or `CONFLICT` when `rev` is no longer the current one. */
  const replace = (doc: { readonly _id: string }, rev: string): Promise<string | 'CONFLICT'> =>
    conflictAs('CONFLICT', async () => (await put({ ...doc, _rev: rev })).rev);

  /**
   * Claims `name` for `nucleusId` at `at`; false when another nucleus has it. Nuclei from before the
   * claims have none, so the list is read too (tens of documents). A claim is another nucleus's while
   * that nucleus bears the name, and while it is young (its create or rename may still be writing).
   */
  const claimNucleusName = async (name: string, nucleusId: string, at: string): Promise<boolean> => {
    const folded = foldName(name);
    const others = await listDocs(db, NucleusDoc, 'nucleus');
    if (others.some((n) => n.nucleusId !== nucleusId && foldName(n.name) === folded)) return false;
    const id = nucleusNameClaimId(name);
    return takeClaim(
      db,
      NucleusNameClaim,
      { _id: id, docType: 'nucleusName' as const, nucleusId, claimedAt: at },
      (held) => held.nucleusId === nucleusId,
      async (held) => {
        const holder = await getDoc(db, NucleusDoc, nucleusDocId(held.nucleusId));
        const young = Date.parse(at) - Date.parse(held.claimedAt) < CLAIM_SETTLE_MS;
        return !young && (holder === undefined || foldName(holder.name) !== folded);
      },
    );
  };
  /** Frees `name` if `nucleusId` holds it (a failed write, or the name a rename left). */
  const releaseNucleusName = async (name: string, nucleusId: string): Promise<void> => {
    const held = await getDoc(db, NucleusNameClaim, nucleusNameClaimId(name));
    if (held !== undefined && held.nucleusId === nucleusId)
      await db.remove(held._id, held._rev).catch(() => undefined);
  };

  return {
    getNucleus: (nucleusId) => getDoc(db, NucleusDoc, nucleusDocId(nucleusId)),
    getClass: (classId) => {
      const id = classDocId(classId);
      return classes.read(id, () => getDoc(db, ClassDoc, id));
    },
    getSession: (sessionId) => {
      const id = classSessionDocId(sessionId);
      return sessions.read(id, () => getDoc(db, ClassSessionDoc, id));
    },

    listNuclei: async () => (await listDocs(db, NucleusDoc, 'nucleus')).sort(byName),
    listClasses: async () => (await listDocs(db, ClassDoc, 'class')).sort(byName),
    async listSessions(filter = {}) {
      const all = await listDocs(db, ClassSessionDoc, 'classSession');
      return all
        .filter((s) => filter.date === undefined || s.date === filter.date)
        .filter((s) => filter.classId === undefined || s.classId === filter.classId)
        .sort(byMeeting);
    },

    async createNucleus(fields) {
      const nucleusId = randomUUID();
      const doc = {
        ...fields,
        _id: nucleusDocId(nucleusId),
        docType: 'nucleus' as const,
        nucleusId,
        status: 'ACTIVE' as const,
      };
      if (!(await claimNucleusName(fields.name, nucleusId, fields.createdAt))) return 'NAME_TAKEN';
      try {
        return await create(doc);
      } catch (e) {
        await releaseNucleusName(fields.name, nucleusId);
        throw e;
      }
    },
    createClass(fields) {
      const classId = randomUUID();
      return create({
        ...fields,
        _id: classDocId(classId),
        docType: 'class' as const,
        classId,
        status: 'ACTIVE' as const,
      });
    },
    createSession(fields) {
      const sessionId = randomUUID();
      return create({
        ...fields,
        _id: classSessionDocId(sessionId),
        docType: 'classSession' as const,
        sessionId,
        status: 'ACTIVE' as const,
      });
    },

    async getSessions(sessionIds) {
      const docs: ClassSessionDoc[] = await getDocs(db, ClassSessionDoc, sessionIds.map(classSessionDocId));
      return new Map(docs.map((d) => [d.sessionId, d]));
    },
    createSessionWithId: (sessionId, fields) =>
      putDoc(
        { put },
        {
          ...fields,
          _id: classSessionDocId(sessionId),
          docType: 'classSession' as const,
          sessionId,
          status: 'ACTIVE' as const,
        },
        'EXISTS',
      ),
    removeSession: (current) =>
      conflictAs('CONFLICT', async () => {
        await writingThrough(sessions, current._id, () => db.remove(current._id, current._rev));
        return 'REMOVED' as const;
      }),

    async updateNucleus(current, next) {
      const doc = {
        ...next,
        _id: current._id,
        docType: 'nucleus' as const,
        nucleusId: current.nucleusId,
        ...statusKept(current),
      };
      const renamed = foldName(current.name) !== foldName(next.name);
      if (renamed && !(await claimNucleusName(next.name, current.nucleusId, next.updatedAt)))
        return 'NAME_TAKEN';
      const rev = await replace(doc, current._rev).catch(async (e: unknown) => {
        if (renamed) await releaseNucleusName(next.name, current.nucleusId);
        throw e;
      });
      if (renamed) await releaseNucleusName(rev === 'CONFLICT' ? next.name : current.name, current.nucleusId);
      return rev === 'CONFLICT' ? rev : { ...doc, _rev: rev };
    },
    updateClass: (current, next) =>
      putDoc(
        { put },
        {
          ...next,
          _id: current._id,
          docType: 'class' as const,
          classId: current.classId,
          ...statusKept(current),
          _rev: current._rev,
        },
        'CONFLICT',
      ),
    updateSession: (current, next) =>
      putDoc(
        { put },
        {
          ...next,
          _id: current._id,
          docType: 'classSession' as const,
          sessionId: current.sessionId,
          ...statusKept(current),
          _rev: current._rev,
        },
        'CONFLICT',
      ),
    async setStatus(current, status, at) {
      const { _rev, ...rest } = current;
      const doc = { ...rest, status, updatedAt: at };
      const rev = await replace(doc, _rev);
      return rev === 'CONFLICT' ? rev : { ...current, status, updatedAt: at, _rev: rev };
    },
  };
};
