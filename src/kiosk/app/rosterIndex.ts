/**
 * The tablet's in-memory view of its replicated roster: documents decoded with the server's own codecs
 * (a document this version cannot read is skipped, not trusted), students ready for instant
 * accent-insensitive search, today's sessions, day keys and check-in state. Pure: no DOM, no PouchDB.
 */
import * as E from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import {
  type RosterCheckin,
  RosterDoc,
  type RosterFamily,
  type RosterPhoto,
  type RosterSession,
  type RosterStudent,
} from '../../domain/roster.js';
import { type AgeRange, REQUIRED_FIELDS, type RequiredField } from '../../rules/admission.js';
import type { PassBook } from '../../rules/familyPass.js';

export type RosterSessionDoc = t.TypeOf<typeof RosterSession>;
export type RosterCheckinDoc = t.TypeOf<typeof RosterCheckin>;

interface Searchable {
  readonly student: RosterStudent;
  readonly words: ReadonlyArray<string>;
}

/** A class's room rules, as the admission rule reads them. */
export interface Room {
  readonly capacity: number | null;
  readonly childrenPerVolunteer: number | null;
  readonly ageRange: AgeRange | null;
}

export interface RosterIndex {
  readonly students: ReadonlyMap<string, RosterStudent>;
  readonly classes: ReadonlyMap<string, string>;
  /** Each class's room: its capacity, ratio and age range (null: none). */
  readonly rooms: ReadonlyMap<string, Room>;
  /** Classes the office deactivated (0047): their sessions take no check-in. */
  readonly deactivatedClasses: ReadonlySet<string>;
  /**
   * The record fields the church requires before a check-in, those this version knows (a field a
   * newer server adds is judged by the server on arrival).
   */
  readonly requiredFields: ReadonlyArray<RequiredField>;
  readonly sessions: ReadonlyArray<RosterSessionDoc>;
  /** base64url day keys by UTC day. */
  readonly dayKeys: ReadonlyMap<string, string>;
  /** By `checkinAspectKey(sessionId, studentId)`. */
  readonly checkins: ReadonlyMap<string, RosterCheckinDoc>;
  readonly searchable: ReadonlyArray<Searchable>;
  /** Photo thumbnails by student id (only children with an active image consent have one). */
  readonly photos: ReadonlyMap<string, RosterPhoto>;
  /**
   * The families by key (0049): their children, the guardian's first name, the phone's last four
   * digits, and hashes of their passes; with the deployment's issuer, what a scanned pass is checked
   * against (`passBookOf`).
   */
  readonly families: ReadonlyMap<string, RosterFamily>;
  /** The deployment's family-pass issuer tag; undefined from a server that sends none. */
  readonly passIssuer: string | undefined;
  /** Documents that did not decode: shown nowhere, counted so a mismatch between versions is visible. */
  readonly unreadable: number;
}

/** Lower case, without accents or other combining marks, spaces collapsed: "João  Araújo" → "joao araujo". */
export const normalizeText = (s: string): string =>
  s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/g, ' ').trim();

export const checkinAspectKey = (sessionId: string, studentId: string): string => `${sessionId}:${studentId}`;

const byName = (a: RosterStudent, b: RosterStudent): number =>
  a.displayName.localeCompare(b.displayName, 'pt-BR', { sensitivity: 'base' });

export const buildRosterIndex = (docs: ReadonlyArray<unknown>): RosterIndex => {
  const students = new Map<string, RosterStudent>();
  const classes = new Map<string, string>();
  const rooms = new Map<string, Room>();
  const deactivatedClasses = new Set<string>();
  const sessions: RosterSessionDoc[] = [];
  const dayKeys = new Map<string, string>();
  const checkins = new Map<string, RosterCheckinDoc>();
  const photos = new Map<string, RosterPhoto>();
  const families = new Map<string, RosterFamily>();
  let passIssuer: string | undefined;
  let requiredFields: ReadonlyArray<RequiredField> = [];
  let unreadable = 0;
  for (const raw of docs) {
    const decoded = RosterDoc.decode(raw);
    if (E.isLeft(decoded)) {
      unreadable += 1;
      continue;
    }
    const doc = decoded.right;
    switch (doc.docType) {
      case 'rosterStudent':
        students.set(doc.studentId, doc);
        break;
      case 'rosterClass':
        classes.set(doc.classId, doc.name);
        rooms.set(doc.classId, {
          capacity: doc.capacity ?? null,
          childrenPerVolunteer: doc.childrenPerVolunteer ?? null,
          ageRange: doc.ageRange ?? null,
        });
        if (doc.active === false) deactivatedClasses.add(doc.classId);
        break;
      case 'rosterSession':
        sessions.push(doc);
        break;
      case 'rosterDayKeys':
        for (const k of doc.keys) dayKeys.set(k.day, k.key);
        break;
      case 'rosterCheckin':
        checkins.set(checkinAspectKey(doc.sessionId, doc.studentId), doc);
        break;
      case 'rosterMark':
        break;
      case 'rosterPhoto':
        photos.set(doc.studentId, doc);
        break;
      case 'rosterAdmission':
        requiredFields = REQUIRED_FIELDS.filter((f) => doc.requiredFields.includes(f));
        break;
      case 'rosterFamily':
        families.set(doc.familyKey, doc);
        break;
      case 'rosterFamilyPasses':
        passIssuer = doc.issuer;
        break;
    }
  }
  sessions.sort((a, b) =>
    a.date !== b.date ? a.date.localeCompare(b.date) : (a.startsAt ?? '').localeCompare(b.startsAt ?? ''),
  );
  const searchable = [...students.values()]
    .sort(byName)
    .map((student) => ({ student, words: normalizeText(student.displayName).split(' ') }));
  return {
    students,
    classes,
    rooms,
    deactivatedClasses,
    requiredFields,
    sessions,
    dayKeys,
    checkins,
    searchable,
    photos,
    families,
    passIssuer,
    unreadable,
  };
};

/** What a scanned family pass is checked against (`rules/familyPass.ts`). */
export const passBookOf = (index: RosterIndex): PassBook => ({
  issuer: index.passIssuer,
  families: [...index.families.values()],
});

/**
 * The index with children the roster does not hold yet (visitors this tablet registered, before the
 * server's record comes back with a pull); a child the roster holds is the roster's.
 */
export const withStudents = (index: RosterIndex, extra: ReadonlyArray<RosterStudent>): RosterIndex => {
  const added = extra.filter((s) => !index.students.has(s.studentId));
  if (added.length === 0) return index;
  const students = new Map(index.students);
  for (const s of added) students.set(s.studentId, s);
  const searchable = [...students.values()]
    .sort(byName)
    .map((student) => ({ student, words: normalizeText(student.displayName).split(' ') }));
  return { ...index, students, searchable };
};

/**
 * A child's brothers and sisters: the other children who share a guardian phone with them (a family
 * key in the roster), by name. None for a child the roster names no family for.
 */
export const siblingsOf = (index: RosterIndex, student: RosterStudent): RosterStudent[] => {
  const families = new Set(student.families ?? []);
  if (families.size === 0) return [];
  return index.searchable
    .map((s) => s.student)
    .filter((s) => s.studentId !== student.studentId && (s.families ?? []).some((f) => families.has(f)));
};

/**
 * Children whose name has, for every word typed, a word starting with it ("ana lu" finds "Ana Lúcia
 * Ferreira", "joao" finds "João"), the session's class first, then by name. An empty query lists the
 * session's class.
 */
export const searchStudents = (
  index: RosterIndex,
  query: string,
  classId: string | null,
  limit = 50,
): RosterStudent[] => {
  const typed = normalizeText(query)
    .split(' ')
    .filter((w) => w !== '');
  const hits =
    typed.length === 0
      ? index.searchable.filter((s) => s.student.classId === classId)
      : index.searchable.filter((s) => typed.every((q) => s.words.some((w) => w.startsWith(q))));
  const sameClass = hits.filter((s) => s.student.classId === classId);
  const others = hits.filter((s) => s.student.classId !== classId);
  return [...sameClass, ...others].slice(0, limit).map((s) => s.student);
};

/** Whether a session takes check-ins: neither it nor its class is deactivated. */
export const sessionOpen = (
  index: Pick<RosterIndex, 'deactivatedClasses'>,
  session: Pick<RosterSessionDoc, 'classId' | 'active'>,
): boolean => session.active !== false && !index.deactivatedClasses.has(session.classId);

/**
 * The sessions the tablet offers, of one calendar day and of those after it: the open ones, and a
 * deactivated one only while `occupied` says children are still in its room, so they can be checked
 * out (a deactivation never strands a child).
 */
export const sessionsFrom = (
  index: RosterIndex,
  today: string,
  occupied: (sessionId: string) => boolean = () => false,
): { readonly today: RosterSessionDoc[]; readonly later: RosterSessionDoc[] } => {
  const offered = index.sessions.filter((s) => sessionOpen(index, s) || occupied(s.sessionId));
  return {
    today: offered.filter((s) => s.date === today),
    later: offered.filter((s) => s.date > today),
  };
};

/**
 * The thumbnail the roster holds for a child, when it is for the photo the child has now (a photo
 * document and its student document arrive in separate pulls, so one may be newer than the other).
 */
export const photoOf = (index: RosterIndex, student: RosterStudent): RosterPhoto | undefined => {
  const photo = index.photos.get(student.studentId);
  return photo !== undefined && photo.photoRef === student.photoRef ? photo : undefined;
};
