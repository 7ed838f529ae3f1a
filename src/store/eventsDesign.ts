/**
 * The events database's guard on CouchDB: a `validate_doc_update` function that refuses any change to
 * an event that exists, any deletion, and any document that is not an event. The service's own API has
 * no update or delete for events; this keeps a tablet's replicator, a second service instance or a
 * hand-edit in Fauxton from rewriting history either. (CouchDB itself restricts design documents to
 * admins, so the function lets them through.) Three marked writes pass:
 * - the withdrawal of a copy a cluster took on fewer nodes than its write quorum, marked
 *   `withdrawn: 'quorum-not-met'` (`quorumWrites.ts`): that write was never acknowledged, and left in
 *   place it could become the copy read instead of the one that was. The same event may then be
 *   stored again over that tombstone;
 * - retention (decision 0045): an event past its period retired, a deletion marked
 *   `retired: 'retention'`;
 * - retention: an anonymised student's event rewritten with `anonymisedAt`, where everything but the
 *   payload (its ids, kind, subject, actor, device and times) is as it was.
 * Embedded PouchDB does not run these functions; there the store API is the guard.
 */

import * as t from 'io-ts';
import { getDoc } from './docs.js';
import type { Database } from './pouch.js';
import { isConflict } from './storeErrors.js';

export const EVENTS_DESIGN_ID = '_design/immutable-events';

// Runs inside CouchDB's JavaScript engine: plain ES5, no closures over this module.
export const VALIDATE_EVENTS = `function (newDoc, oldDoc, userCtx, secObj) {
  if (newDoc._id.indexOf('_design/') === 0) return;
  if (oldDoc && newDoc._deleted && newDoc.withdrawn === 'quorum-not-met') return;
  var live = oldDoc && !oldDoc._deleted;
  if (live && newDoc._deleted && newDoc.retired === 'retention') return;
  if (live && !newDoc._deleted && typeof newDoc.anonymisedAt === 'string') {
    var kept = ['docType', 'eventId', 'type', 'subjectType', 'subjectId', 'deviceId', 'clientTimestamp',
      'serverTimestamp', 'aspect', 'baseVersion', 'actor'];
    for (var i = 0; i < kept.length; i++) {
      if (JSON.stringify(newDoc[kept[i]]) !== JSON.stringify(oldDoc[kept[i]])) {
        throw({ forbidden: 'an anonymised event keeps everything but its payload: ' + kept[i] + ' changed' });
      }
    }
    return;
  }
  if ((oldDoc && !oldDoc._deleted) || newDoc._deleted) {
    throw({ forbidden: 'events are immutable: an event is never changed or removed' });
  }
  if (newDoc.docType !== 'event' || typeof newDoc.eventId !== 'string' ||
      newDoc._id !== 'event:' + newDoc.eventId) {
    throw({ forbidden: 'only event documents, with _id event:<eventId>, are stored here' });
  }
}`;

const DesignDoc = t.type({ _id: t.string, _rev: t.string, validate_doc_update: t.string });

/** Installs or updates the guard; concurrent starts of several instances are harmless. */
export const ensureEventsGuard = async (db: Database): Promise<void> => {
  const current = await getDoc(db, DesignDoc, EVENTS_DESIGN_ID).catch(() => undefined);
  if (current?.validate_doc_update === VALIDATE_EVENTS) return;
  try {
    await db.put({
      _id: EVENTS_DESIGN_ID,
      ...(current === undefined ? {} : { _rev: current._rev }),
      language: 'javascript',
      validate_doc_update: VALIDATE_EVENTS,
    });
  } catch (e) {
    // Another instance installed it at the same moment.
    if (!isConflict(e)) throw e;
  }
};
