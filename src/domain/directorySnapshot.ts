/**
 * The student directory as written at a graceful stop of the embedded store and read at the next
 * start (decision 0040), so a restart reads one file instead of every student record: at 100,000
 * students the records took 10 s to read and the target is 2 s.
 *
 * It holds the students' summaries, one column per field (a column of strings decodes in one pass;
 * 100,000 small records would each be an object to decode), and the private database's identity and
 * sequence it is current to: what changed after that sequence is read from the database's changes at
 * start, like any change. Image consents are not in it: they are read from the store, as before.
 */
import * as t from 'io-ts';
import { StudentStatus } from './student.js';

/** Raised with every change of what the directory holds: a snapshot of another version is not read. */
export const DIRECTORY_SNAPSHOT_VERSION = 1;

/**
 * A column of values that decode as themselves (strings, booleans, literals, null): checked with the
 * element codec's `is`, which allocates nothing, and decoded element by element (for the errors) only
 * when a check fails. `t.readonlyArray` made a result object per element: 800,000 of them for a
 * snapshot of 100,000 students, as long as parsing the file (decision 0071).
 */
const Column = <A>(codec: t.Type<A, A, unknown>) => {
  const array = t.readonlyArray(codec);
  return new t.Type<ReadonlyArray<A>, ReadonlyArray<A>, unknown>(
    `Column<${codec.name}>`,
    array.is,
    (u, context) => (Array.isArray(u) && u.every(codec.is) ? t.success(u) : array.validate(u, context)),
    array.encode,
  );
};

export const DirectorySnapshot = t.type({
  version: t.literal(DIRECTORY_SNAPSHOT_VERSION),
  /** The private database's instance id (PouchDB's `id()`): a database made again has another. */
  databaseId: t.string,
  /** The private database's sequence every change up to which the summaries hold. */
  seq: t.number,
  studentId: Column(t.string),
  displayName: Column(t.string),
  status: Column(StudentStatus),
  /** The stored photo key; whether it is shown depends on consents, decided at load. */
  photoRef: Column(t.union([t.string, t.null])),
  updatedAt: Column(t.string),
  classId: Column(t.string),
  visitor: Column(t.boolean),
  /** When a visitor was registered; null for every other student. */
  visitorSince: Column(t.union([t.string, t.null])),
});
export type DirectorySnapshot = t.TypeOf<typeof DirectorySnapshot>;
