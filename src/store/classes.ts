/**
 * Nuclei, classes and class sessions, one document each. Ids are random UUIDs generated here, so a
 * create is a plain create-only put; updates are compare-and-swap on the read revision, and the
 * caller decides whether a `CONFLICT` is retried. Lists read the by-docType index and sort in
 * memory: teams have tens of classes and a few sessions a week.
 */
import { randomUUID } from 'node:crypto';
import { ClassDoc, ClassSessionDoc, type ClassSessionFilter, NucleusDoc } from '../domain/classes.js';
import { type DocCache, noDocCache, writingThrough } from './docCache.js';
import { getDoc, getDocs, listDocs } from './docs.js';
import type { Database } from './pouch.js';
import { isConflict } from './storeErrors.js';

export const nucleusDocId = (nucleusId: string): string => `nucleus:${nucleusId}`;
export const classDocId = (classId: string): string => `class:${classId}`;
export const classSessionDocId = (sessionId: string): string => `classSession:${sessionId}`;

type Stored = '_id' | '_rev' | 'docType';
/** The fields a caller supplies; the id comes from the store on create and from `current` on update. */
export type NucleusFields = Omit<NucleusDoc, Stored | 'nucleusId'>;
export type ClassFields = Omit<ClassDoc, Stored | 'classId'>;
export type ClassSessionFields = Omit<ClassSessionDoc, Stored | 'sessionId'>;

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
  createNucleus(fields: NucleusFields): Promise<NucleusDoc>;
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
  /** Compare-and-swap on `current._rev`; `CONFLICT` when the document changed meanwhile. */
  updateNucleus(current: NucleusDoc, next: NucleusFields): Promise<NucleusDoc | 'CONFLICT'>;
  updateClass(current: ClassDoc, next: ClassFields): Promise<ClassDoc | 'CONFLICT'>;
  updateSession(current: ClassSessionDoc, next: ClassSessionFields): Promise<ClassSessionDoc | 'CONFLICT'>;
}

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
  const replace = async (doc: { readonly _id: string }, rev: string): Promise<string | 'CONFLICT'> => {
    try {
      return (await put({ ...doc, _rev: rev })).rev;
    } catch (e) {
      if (isConflict(e)) return 'CONFLICT';
      throw e;
    }
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

    createNucleus(fields) {
      const nucleusId = randomUUID();
      return create({ ...fields, _id: nucleusDocId(nucleusId), docType: 'nucleus' as const, nucleusId });
    },
    createClass(fields) {
      const classId = randomUUID();
      return create({ ...fields, _id: classDocId(classId), docType: 'class' as const, classId });
    },
    createSession(fields) {
      const sessionId = randomUUID();
      return create({
        ...fields,
        _id: classSessionDocId(sessionId),
        docType: 'classSession' as const,
        sessionId,
      });
    },

    async getSessions(sessionIds) {
      const docs: ClassSessionDoc[] = await getDocs(db, ClassSessionDoc, sessionIds.map(classSessionDocId));
      return new Map(docs.map((d) => [d.sessionId, d]));
    },
    async createSessionWithId(sessionId, fields) {
      try {
        return await create({
          ...fields,
          _id: classSessionDocId(sessionId),
          docType: 'classSession' as const,
          sessionId,
        });
      } catch (e) {
        if (isConflict(e)) return 'EXISTS';
        throw e;
      }
    },
    async removeSession(current) {
      try {
        await writingThrough(sessions, current._id, () => db.remove(current._id, current._rev));
        return 'REMOVED';
      } catch (e) {
        if (isConflict(e)) return 'CONFLICT';
        throw e;
      }
    },

    async updateNucleus(current, next) {
      const doc = { ...next, _id: current._id, docType: 'nucleus' as const, nucleusId: current.nucleusId };
      const rev = await replace(doc, current._rev);
      return rev === 'CONFLICT' ? rev : { ...doc, _rev: rev };
    },
    async updateClass(current, next) {
      const doc = { ...next, _id: current._id, docType: 'class' as const, classId: current.classId };
      const rev = await replace(doc, current._rev);
      return rev === 'CONFLICT' ? rev : { ...doc, _rev: rev };
    },
    async updateSession(current, next) {
      const doc = {
        ...next,
        _id: current._id,
        docType: 'classSession' as const,
        sessionId: current.sessionId,
      };
      const rev = await replace(doc, current._rev);
      return rev === 'CONFLICT' ? rev : { ...doc, _rev: rev };
    },
  };
};
