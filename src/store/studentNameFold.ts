/**
 * The one-time pass that gives every stored student record its folded name (`nameFolded`, decision
 * 0056), which CouchDB's views read. Records written since carry it (`students.ts`); records written
 * before do not, and are not in the list or the search until this pass adds it.
 *
 * Resumable and idempotent: it writes only records whose stored fold is missing or differs, so a pass
 * cut short (a stop, a lost connection) does the rest next time, and two instances starting at once
 * both pass harmlessly (a conflict means the other writer stored the record, which since this change
 * always carries the fold). Once a pass ends, a local document (never replicated, never in the change
 * feed) records it, and later starts read that one document instead of the roll.
 */
import * as t from 'io-ts';
import { StudentDoc } from '../domain/student.js';
import { foldName } from '../rules/students.js';
import { eachDocPage, getDoc } from './docs.js';
import type { Database } from './pouch.js';
import { isConflict, isStored } from './storeErrors.js';

export const NAME_FOLD_DONE_ID = '_local/student-name-folded';
const PAGE = 500;

const Done = t.type({ _id: t.string, doneAt: t.string });

export interface NameFoldPass {
  /** Whether the pass had run before (nothing was read but the marker). */
  readonly alreadyDone: boolean;
  /** Records given their fold by this pass. */
  readonly written: number;
}

export const foldStoredNames = async (db: Database, now: () => string): Promise<NameFoldPass> => {
  const done = await getDoc(db, Done, NAME_FOLD_DONE_ID);
  if (done !== undefined) return { alreadyDone: true, written: 0 };
  let written = 0;
  await eachDocPage(db, StudentDoc, 'student', PAGE, async (page) => {
    const stale = page.filter((d) => d.nameFolded !== foldName(d.displayName));
    if (stale.length === 0) return;
    const results = await db.bulkDocs(stale.map((d) => ({ ...d, nameFolded: foldName(d.displayName) })));
    for (const r of results) {
      if (isStored(r)) written += 1;
      // A conflict: another write stored the record meanwhile, with its fold. Anything else fails
      // the pass, which the next start resumes.
      else if (!isConflict(r))
        throw new Error(`student name fold failed: ${r.name ?? 'no result'}`, { cause: r });
    }
  });
  try {
    await db.put({ _id: NAME_FOLD_DONE_ID, doneAt: now() });
  } catch (e) {
    if (!isConflict(e)) throw e;
  }
  return { alreadyDone: false, written };
};
