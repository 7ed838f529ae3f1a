/**
 * What the service reads of the roll and tells it of writes, whichever holds it (decision 0056): the
 * in-memory directory on the embedded store (`studentDirectory.ts`), CouchDB's views on CouchDB
 * (`couchStudentDirectory.ts`). A page is asynchronous because CouchDB's is a query.
 */
import type { Observable, Subscription } from 'rxjs';
import type { Change } from './changeFeed.js';
import type { DirectoryEntry, DirectoryPage, StudentDirectory } from './studentDirectory.js';

export type PageQuery = Parameters<StudentDirectory['page']>[0];

export interface DirectoryPort
  extends Pick<
    StudentDirectory,
    'upsertStudent' | 'upsertConsent' | 'activeConsents' | 'consentsRecorded' | 'get'
  > {
  /** The visitors (the visitors' report): on CouchDB, once every visitor stored before the start is held. */
  visitors(): Promise<DirectoryEntry[]>;
  /**
   * The students of `status` matching `q` (and `classId`), after `afterKey` in list order, at most
   * `limit`; `lastKey` when more follow. Same order, cursors and matches on every implementation.
   */
  page(query: PageQuery): Promise<DirectoryPage>;
  /** Follows a change feed of the private database until the subscription ends. */
  follow(changes: Observable<Change>, onUndecodable: (id: string) => void): Subscription;
}

/** The in-memory directory as the port (its page answered at once). */
export const inMemoryDirectory = (d: StudentDirectory): DirectoryPort => ({
  upsertStudent: (doc) => d.upsertStudent(doc),
  upsertConsent: (doc) => d.upsertConsent(doc),
  activeConsents: (id) => d.activeConsents(id),
  consentsRecorded: (id) => d.consentsRecorded(id),
  visitors: async () => d.visitors(),
  get: (id) => d.get(id),
  page: async (query) => d.page(query),
  follow: (changes, onUndecodable) => d.follow(changes, onUndecodable),
});
