/**
 * Pages sent to guardians (decision 0037), in the private database: one document per page of a child
 * at a session, `page:<sessionId>:<studentId>:<seq>`. The sequence number makes the record its own
 * claim: two instances paging the same child at once both try to create the same next id, and the
 * store lets one of them (a conflict tells the other to read again and decide anew), so the limit
 * holds across instances exactly, with no counter of its own. A session's pages are one range read.
 */
import { PageDoc } from '../domain/pages.js';
import { decodeDoc } from './docs.js';
import { putDoc, removeDoc } from './docWrites.js';
import { indexIn } from './indexes.js';
import type { Database } from './pouch.js';
import { removeEach } from './rewrites.js';

const SEQ_WIDTH = 4;

const sessionPrefix = (sessionId: string): string => `page:${sessionId}:`;
const childPrefix = (sessionId: string, studentId: string): string =>
  `${sessionPrefix(sessionId)}${studentId}:`;
export const pageDocId = (sessionId: string, studentId: string, seq: number): string =>
  `${childPrefix(sessionId, studentId)}${String(seq).padStart(SEQ_WIDTH, '0')}`;

export type NewPage = Omit<PageDoc, '_id' | '_rev' | 'docType'>;

export interface PageStore {
  /** The pages of one child at a session, in sequence order. */
  ofChild(sessionId: string, studentId: string): Promise<PageDoc[]>;
  /** Every page of a session: by child, then in sequence order. */
  ofSession(sessionId: string): Promise<PageDoc[]>;
  /** Creates the page under its sequence number; `TAKEN` when another request holds that number. */
  claim(page: NewPage): Promise<PageDoc | 'TAKEN'>;
  /** Replaces a page by compare-and-swap; `CONFLICT` when it changed since it was read. */
  update(current: PageDoc, next: NewPage): Promise<PageDoc | 'CONFLICT'>;
  /** Removes a claim whose page was never sent; one already gone counts as removed. */
  release(current: PageDoc): Promise<void>;
  /** Every page held, for retention (0045): a page period's worth, read in one range. */
  listAll(): Promise<PageDoc[]>;
  /** Every page of one child, at any session (an anonymised child's, 0045). */
  ofStudent(studentId: string): Promise<PageDoc[]>;
  /** Retention (0045): removes the pages; answers how many it removed. */
  remove(pageDocIds: ReadonlyArray<string>): Promise<number>;
}

export const pageStore = (db: Database): PageStore => {
  const range = async (prefix: string): Promise<PageDoc[]> => {
    const found = await db.allDocs({ startkey: prefix, endkey: `${prefix}\ufff0`, include_docs: true });
    return found.rows.flatMap((r) => (r.doc === undefined ? [] : [decodeDoc(PageDoc, r.id, r.doc)]));
  };
  return {
    ofChild: (sessionId, studentId) => range(childPrefix(sessionId, studentId)),
    ofSession: (sessionId) => range(sessionPrefix(sessionId)),
    claim: (page) =>
      putDoc(
        db,
        { _id: pageDocId(page.sessionId, page.studentId, page.seq), docType: 'page' as const, ...page },
        'TAKEN',
      ),
    update: (current, next) =>
      putDoc(db, { _id: current._id, _rev: current._rev, docType: 'page' as const, ...next }, 'CONFLICT'),
    async release(current) {
      // Gone or changed since, the claim is no longer this caller's to release.
      await removeDoc(db, current);
    },
    listAll: () => range('page:'),
    async ofStudent(studentId) {
      const found = await db.find({
        selector: { docType: 'page', studentId },
        limit: 100_000,
        use_index: indexIn(db, 'by-docType-studentId'),
      });
      return found.docs.map((d) => decodeDoc(PageDoc, d._id, d));
    },
    remove: (pageDocIds) => removeEach(db, pageDocIds),
  };
};
