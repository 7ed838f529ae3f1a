/**
 * The student directory kept in a file across a graceful restart of the embedded store (decision
 * 0040): written when the service stops, read and removed when it starts. Reading every student record
 * took 10 s of a start at 100,000 students; the file takes a fraction of a second.
 *
 * The file exists only while the service is stopped: it is removed as soon as it is read, so a
 * process that dies later (SIGKILL, a crash) leaves none, and the next start reads the records as
 * before. It is trusted only for the database it was written from (PouchDB's instance id: a database
 * removed and made again, by a forced restore say, has another) and only when that database has not
 * gone back past the sequence it was current to; what changed after that sequence reaches the
 * directory through the private database's change feed, which starts there. Anything else about it
 * (missing, another version, unreadable, undecodable) means the records are read.
 */
import { open, readFile, rename, rm } from 'node:fs/promises';
import * as E from 'fp-ts/lib/Either.js';
import { DIRECTORY_SNAPSHOT_VERSION, DirectorySnapshot } from '../domain/directorySnapshot.js';
import type { StudentSummary } from './studentDirectory.js';

export interface SnapshotSource {
  /** The private database's instance id. */
  readonly databaseId: string;
  /** Its sequence every change up to which the summaries hold. */
  readonly seq: number;
}

export const writeDirectorySnapshot = async (
  file: string,
  summaries: ReadonlyArray<StudentSummary>,
  source: SnapshotSource,
): Promise<void> => {
  const column = <K extends keyof StudentSummary>(key: K) => summaries.map((s) => s[key]);
  const snapshot: DirectorySnapshot = {
    version: DIRECTORY_SNAPSHOT_VERSION,
    databaseId: source.databaseId,
    seq: source.seq,
    studentId: column('studentId'),
    displayName: column('displayName'),
    status: column('status'),
    photoRef: column('photoRef'),
    updatedAt: column('updatedAt'),
    classId: column('classId'),
    visitor: column('visitor'),
    visitorSince: column('visitorSince'),
  };
  // Written whole, then renamed over the name: a stop cut short leaves the old name or none, never
  // half a file under it.
  const partial = `${file}.partial`;
  const handle = await open(partial, 'w', 0o600);
  try {
    await handle.writeFile(JSON.stringify(snapshot));
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(partial, file);
};

export type SnapshotRead =
  | { readonly kind: 'read'; readonly seq: number; readonly summaries: ReadonlyArray<StudentSummary> }
  /** Why the records must be read instead (no file is the usual one, after a crash or a first start). */
  | { readonly kind: 'unusable'; readonly reason: string };

const rows = (s: DirectorySnapshot): StudentSummary[] | undefined => {
  const n = s.studentId.length;
  const columns = [s.displayName, s.status, s.photoRef, s.updatedAt, s.classId, s.visitor, s.visitorSince];
  if (columns.some((c) => c.length !== n)) return undefined;
  const out: StudentSummary[] = [];
  for (let i = 0; i < n; i += 1) {
    const [studentId, displayName, status, photoRef, updatedAt, classId, visitor, visitorSince] = [
      s.studentId[i],
      s.displayName[i],
      s.status[i],
      s.photoRef[i],
      s.updatedAt[i],
      s.classId[i],
      s.visitor[i],
      s.visitorSince[i],
    ];
    // Lengths are checked above; this keeps the compiler's index checks honest too.
    if (
      studentId === undefined ||
      displayName === undefined ||
      status === undefined ||
      photoRef === undefined ||
      updatedAt === undefined ||
      classId === undefined ||
      visitor === undefined ||
      visitorSince === undefined
    )
      return undefined;
    out.push({ studentId, displayName, status, photoRef, updatedAt, classId, visitor, visitorSince });
  }
  return out;
};

/**
 * Reads the snapshot and removes the file, whatever it held. `current` is the private database as it
 * is opened now.
 */
export const takeDirectorySnapshot = async (file: string, current: SnapshotSource): Promise<SnapshotRead> => {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    const code = e instanceof Error && 'code' in e ? e.code : undefined;
    return { kind: 'unusable', reason: code === 'ENOENT' ? 'none' : 'unreadable' };
  }
  // Removed before it is used: from here on the directory follows the feed, and a later crash must
  // not leave a file that a start would trust.
  await rm(file, { force: true });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { kind: 'unusable', reason: 'not JSON' };
  }
  const decoded = DirectorySnapshot.decode(parsed);
  if (E.isLeft(decoded)) return { kind: 'unusable', reason: 'another version or shape' };
  const snapshot = decoded.right;
  if (snapshot.databaseId !== current.databaseId) return { kind: 'unusable', reason: 'another database' };
  if (snapshot.seq > current.seq) return { kind: 'unusable', reason: 'the database went back' };
  const summaries = rows(snapshot);
  if (summaries === undefined) return { kind: 'unusable', reason: 'columns of different lengths' };
  return { kind: 'read', seq: snapshot.seq, summaries };
};
