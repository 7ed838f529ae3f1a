/**
 * The benchmark's data set, written straight into a data directory before the service starts: one
 * class, a day of sessions, 10,000 students and a body of stored events (record-keeping events, so the
 * pipeline skims them). Generated, never committed.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { StudentRecord } from '../src/domain/student.js';
import { type Database, PouchDB } from '../src/store/pouch.js';
import { studentStore } from '../src/store/students.js';

export interface Dataset {
  readonly classId: string;
  readonly sessionIds: ReadonlyArray<string>;
  readonly studentIds: ReadonlyArray<string>;
}

const CHUNK = 2000;

/** A stored student document of the generated data set (the `n`th child). */
export const benchStudent = (studentId: string, n: number, classId: string, at: string) => ({
  _id: `student:${studentId}`,
  docType: 'student',
  studentId,
  displayName: `Criança ${String(n).padStart(5, '0')} ${['Silva', 'Souza', 'Oliveira', 'Santos'][n % 4]}`,
  photoRef: null,
  photo_refs: [],
  guardianName: `Responsável ${n}`,
  guardianNameAlt: null,
  birthDate: '2018-01-01',
  phones: [{ number: `+55 11 9${String(10_000_000 + n)}`, qualifier: 'mãe' }],
  address: null,
  allergies: n % 10 === 0 ? 'Amendoim' : null,
  specialNeeds: null,
  classId,
  nucleusId: null,
  familyMembershipStatus: null,
  imageConsentId: null,
  visitor: false,
  status: 'ACTIVE',
  createdAt: at,
  updatedAt: at,
  deleted_justification: null,
});

export const writeDataset = async (
  dataDir: string,
  size: { readonly students: number; readonly events: number; readonly sessions: number },
): Promise<Dataset> => {
  // Plain databases: an index opens its own leveldb, whose lock this process would keep. The caller
  // starts the service once on the empty directory first, so the indexes exist (empty; each is
  // brought up to date by the first query that uses it).
  const store = {
    db: {
      private: new PouchDB(join(dataDir, 'chamada_private')),
      events: new PouchDB(join(dataDir, 'chamada_events')),
      projections: new PouchDB(join(dataDir, 'chamada_projections')),
    },
    close: async () => {
      await store.db.private.close();
      await store.db.events.close();
      await store.db.projections.close();
    },
  };
  try {
    const at = new Date().toISOString();
    const today = at.slice(0, 10);
    const classId = randomUUID();
    await store.db.private.put({
      _id: `class:${classId}`,
      docType: 'class',
      classId,
      name: 'Turma',
      nucleusId: null,
      createdAt: at,
      updatedAt: at,
    });
    const sessionIds = Array.from({ length: size.sessions }, () => randomUUID());
    await store.db.private.bulkDocs(
      sessionIds.map((sessionId, i) => ({
        _id: `classSession:${sessionId}`,
        docType: 'classSession',
        sessionId,
        classId,
        nucleusId: null,
        date: today,
        title: `Sessão ${i}`,
        startsAt: null,
        endsAt: null,
        createdAt: at,
        updatedAt: at,
      })),
    );
    const studentIds = Array.from({ length: size.students }, () => randomUUID());
    for (let i = 0; i < studentIds.length; i += CHUNK) {
      await store.db.private.bulkDocs(
        studentIds.slice(i, i + CHUNK).map((studentId, j) => benchStudent(studentId, i + j, classId, at)),
      );
    }
    for (let i = 0; i < size.events; i += CHUNK) {
      await store.db.events.bulkDocs(
        Array.from({ length: Math.min(CHUNK, size.events - i) }, (_, j) => {
          const eventId = randomUUID();
          return {
            _id: `event:${eventId}`,
            docType: 'event',
            eventId,
            type: 'CHECKOUT_ATTEMPT',
            subjectType: 'CHECK_IN',
            subjectId: studentIds[(i + j) % studentIds.length] ?? '',
            payload: { checkInId: randomUUID(), sessionId: sessionIds[0] ?? '', failedAttempts: 1 },
            actor: { userId: 'bench', role: 'CHAMADOR' },
            deviceId: null,
            clientTimestamp: at,
            serverTimestamp: at,
          };
        }),
      );
    }
    // These events project to nothing (the pipeline only skims them), so the pipeline's checkpoint at
    // the last one is the state a running service would have left: a fresh start does not replay
    // them. The pipeline's own speed is the sync scenario's to measure.
    const { update_seq: seq } = await store.db.events.info();
    const previous = await store.db.projections.get('_local/event-pipeline').catch(() => undefined);
    await store.db.projections.put({
      _id: '_local/event-pipeline',
      ...(previous === undefined ? {} : { _rev: previous._rev }),
      seq,
    });
    return { classId, sessionIds, studentIds };
  } finally {
    await store.close();
  }
};

/**
 * Writes `count` students straight into a database (the probes' rolls: the import's records, not
 * through the service), a thousand at a time, the `i`th as `recordOf(i)` makes it.
 */
export const writeStudents = async (
  db: Database,
  count: number,
  recordOf: (i: number) => StudentRecord,
): Promise<void> => {
  const store = studentStore(db);
  for (let from = 0; from < count; from += 1_000)
    await store.createMany(
      Array.from({ length: Math.min(1_000, count - from) }, (_, k) => recordOf(from + k)),
    );
};
