/**
 * The student directory on CouchDB (decision 0056): the views installed, the one-time pass that
 * stores every record's folded name, and the refresher that keeps the views current behind writes.
 */
import type { Logger } from 'pino';
import type { ConsentDoc } from '../domain/consent.js';
import type { StudentDoc } from '../domain/student.js';
import type { Disposers } from '../lib/disposers.js';
import { waitAtMost } from '../lib/timeouts.js';
import { patiently } from '../store/boundedFetch.js';
import type { Database } from '../store/pouch.js';
import { isStoreTimeout } from '../store/storeErrors.js';
import { foldStoredNames } from '../store/studentNameFold.js';
import {
  ensureStudentViews,
  holdsAnyStudent,
  type StudentViews,
  studentViews,
} from '../store/studentViews.js';
import { couchStudentDirectory } from '../sync/couchStudentDirectory.js';
import type { StudentDirectory } from '../sync/studentDirectory.js';
import { viewRefresher } from '../sync/viewRefresher.js';

/** A refresh of the views once student writes have paused this long, or at the latest this long after the first. */
const REFRESH_QUIET_MS = 1_500;
const REFRESH_MAX_WAIT_MS = 60_000;
/** The pause between reads of the visitors that CouchDB's index kept waiting: doubling from a second to this. */
const VISITORS_RETRY_MAX_MS = 30_000;

/**
 * Reads every visitor once the visitors' index holds every write stored before the call, into `held`,
 * however long that takes: a read that waits for an index behind another instance's import is cut by
 * the store's silence limit (CouchDB goes on indexing), and sent again until it answers or `stopped`.
 */
const holdEveryVisitor = async (
  views: StudentViews,
  held: StudentDirectory,
  logger: Logger,
  stopped: AbortSignal,
): Promise<void> => {
  for (let attempt = 1; !stopped.aborted; attempt += 1) {
    try {
      // The directory keeps the newest of each student: the feed's since the start stay.
      for (const doc of await patiently(() => views.visitors())) held.upsertStudent(doc);
      return;
    } catch (e) {
      if (stopped.aborted) return;
      // Cut while CouchDB indexes is expected behind an import; anything else is worth a warning.
      logger[isStoreTimeout(e) ? 'info' : 'warn'](
        { attempt, errorName: e instanceof Error ? e.name : typeof e },
        'visitors not read from their index yet; read again',
      );
      await waitAtMost(
        new Promise(() => undefined),
        Math.min(VISITORS_RETRY_MAX_MS, 1_000 * 2 ** (attempt - 1)),
        stopped,
      );
    }
  }
};

export const wireCouchDirectory = async (
  db: Database,
  held: StudentDirectory,
  consents: ReadonlyArray<ConsentDoc>,
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
  // The visitors as their index stands, at once: a start that waited for the index to hold every write
  // failed beside another instance's import (the index minutes behind it, the read silent past the
  // store's limit). The ones it does not hold yet are read behind the start; the visitors' report
  // waits for them, and nothing else needs a visitor held (a record not held is read from the store).
  const visitors: StudentDoc[] = anyStudent ? await views.visitors({ asIndexed: true }) : [];
  held.load(visitors, consents);
  const stop = new AbortController();
  opened.add('student views: visitors', () => stop.abort());
  const visitorsHeld = anyStudent ? holdEveryVisitor(views, held, logger, stop.signal) : Promise.resolve();
  const port = couchStudentDirectory({
    views,
    held,
    visitorsHeld,
    onStudentWrite: () => refresher.poke(),
  });
  readsTrigrams = () => port.readsTrigrams();
  return { views, port, visitors, visitorsHeld, holdRefreshes: () => refresher.hold() };
};
