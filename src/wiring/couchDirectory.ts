/**
 * The student directory on CouchDB (decision 0056): the views installed, the one-time pass that
 * stores every record's folded name, and the refresher that keeps the views current behind writes.
 */
import type { Logger } from 'pino';
import type { StudentDoc } from '../domain/student.js';
import type { Disposers } from '../lib/disposers.js';
import type { Database } from '../store/pouch.js';
import { foldStoredNames } from '../store/studentNameFold.js';
import { ensureStudentViews, holdsAnyStudent, studentViews } from '../store/studentViews.js';
import { couchStudentDirectory } from '../sync/couchStudentDirectory.js';
import type { StudentDirectory } from '../sync/studentDirectory.js';
import { viewRefresher } from '../sync/viewRefresher.js';

/** A refresh of the views once student writes have paused this long, or at the latest this long after the first. */
const REFRESH_QUIET_MS = 1_500;
const REFRESH_MAX_WAIT_MS = 60_000;

export const wireCouchDirectory = async (
  db: Database,
  held: StudentDirectory,
  clock: () => Date,
  logger: Logger,
  opened: Disposers,
) => {
  await ensureStudentViews(db);
  const pass = await foldStoredNames(db, () => clock().toISOString());
  if (!pass.alreadyDone)
    logger.info({ written: pass.written }, 'student records given their folded name (decision 0056)');
  const views = studentViews(db);
  // The views before `student-list` are kept current only while pages read them (decision 0073).
  let readsTrigrams = () => false;
  const refresher = viewRefresher(() => views.refresh({ trigrams: readsTrigrams() }), {
    quietMs: REFRESH_QUIET_MS,
    maxWaitMs: REFRESH_MAX_WAIT_MS,
    onError: (e) =>
      logger.warn({ errorName: e instanceof Error ? e.name : typeof e }, 'student views not refreshed'),
  });
  opened.add('student views: refresher', () => refresher.stop());
  // No index is built for a roll nobody reads or writes (decision 0061): without a student, the
  // visitors' view would be built to answer none, and the refresh would index every other record of
  // the private database for nothing (every service the CouchDB suites start). The first student
  // write (the feed pokes) or page (its query) builds them.
  const anyStudent = await holdsAnyStudent(db);
  // What was written while no instance ran is indexed now, not by the first request.
  if (anyStudent) refresher.poke();
  const visitors: StudentDoc[] = anyStudent ? await views.visitors() : [];
  const port = couchStudentDirectory({ views, held, onStudentWrite: () => refresher.poke() });
  readsTrigrams = () => port.readsTrigrams();
  return { views, port, visitors, holdRefreshes: () => refresher.hold() };
};
