/**
 * The roster a tablet receives, as a pure function of the server's records: minimised student
 * documents (active students only; photo only with consent; phone suffixes, never numbers), classes,
 * the sessions of the key days, the day keys, and the check-in and attendance state of those sessions
 * with their versions, and what the admission rule needs offline (the record's facts with the birth
 * month only, the rooms' rules and volunteers, the required fields). The same input gives the same
 * documents, so reconciling is a plain diff.
 */
import type { ActivityStatus } from '../domain/classes.js';
import type { RosterDoc } from '../domain/roster.js';
import { type AgeRange, admissionRecordOf } from './admission.js';
import type { AspectState } from './projections.js';

export interface RosterInput {
  readonly students: ReadonlyArray<{
    readonly studentId: string;
    readonly displayName: string;
    readonly classId: string;
    readonly status: string;
    readonly photoRef: string | null;
    readonly allergies: string | null;
    readonly specialNeeds: string | null;
    readonly visitor: boolean;
    /** Read for its month only: the day never reaches a tablet. */
    readonly birthDate: string | null;
    /** The guardian's numbers on the record: the roster says whether there is one, never which. */
    readonly phones: ReadonlyArray<unknown>;
  }>;
  readonly photosAllowed: (studentId: string) => boolean;
  /** How many image consents were ever recorded for the child (revoked ones too: the guardian was asked). */
  readonly consentsRecorded: (studentId: string) => number;
  /**
   * The stored thumbnail (base64 JPEG) of each child by id, for the key it was stored under; absent:
   * no photo documents. Sent only while photos are allowed and the key is the child's `photoRef`.
   */
  readonly thumbnails?: ReadonlyMap<string, { readonly photoRef: string; readonly data: string }>;
  /**
   * The opaque family key of a guardian's phone (`familyPhone` gives what it is computed from); absent:
   * the roster names no families.
   */
  readonly familyKey?: (phoneDigits: string) => string;
  readonly adults: ReadonlyMap<
    string,
    ReadonlyArray<{
      readonly name: string;
      readonly level: 'N1' | 'N2' | 'N3';
      readonly relationship: string;
      readonly phones: ReadonlyArray<string>;
    }>
  >;
  readonly classes: ReadonlyArray<{
    readonly classId: string;
    readonly name: string;
    readonly capacity?: number | null;
    readonly childrenPerVolunteer?: number | null;
    readonly ageRange?: AgeRange | null;
    /** Absent on classes from before deactivation: active. */
    readonly status?: ActivityStatus | undefined;
  }>;
  readonly sessions: ReadonlyArray<{
    readonly sessionId: string;
    readonly classId: string;
    readonly date: string;
    readonly title: string | null;
    readonly startsAt: string | null;
    readonly endsAt: string | null;
    readonly status?: ActivityStatus | undefined;
  }>;
  /**
   * Volunteers in the room now, by session id, for the sessions whose room has a ratio; a session
   * absent here carries no count.
   */
  readonly volunteers?: ReadonlyMap<string, number>;
  /** The record fields the church requires before a check-in (the check-in configuration's). */
  readonly requiredFields: ReadonlyArray<string>;
  readonly dayKeys: ReadonlyArray<{ readonly day: string; readonly key: string }>;
  /** Check-in and attendance aspects of the roster's sessions, with their head version. */
  readonly aspects: ReadonlyArray<{ readonly version: string | null; readonly state: AspectState | null }>;
}

export const phoneSuffix = (phone: string): string => phone.replace(/\D/g, '').slice(-4);

/**
 * What a family key is computed from: the phone's last 11 digits (area code and number in Brazil),
 * so "+55 11 98765-4321" and "(11) 98765-4321" are one family; a number of fewer than 8 digits is too
 * short to tell families apart and names none.
 */
export const familyPhone = (phone: string): string | undefined => {
  const digits = phone.replace(/\D/g, '');
  return digits.length < 8 ? undefined : digits.slice(-11);
};

/** The family keys of a child: one per phone of the guardians on the record (N1), sorted, unique. */
type Adults = RosterInput['adults'] extends ReadonlyMap<string, infer A> ? A : never;

const familiesOf = (adults: Adults, familyKey: (phoneDigits: string) => string): string[] => {
  const phones = adults.filter((a) => a.level === 'N1').flatMap((a) => a.phones);
  return [...new Set(phones.flatMap((p) => familyPhone(p) ?? []).map(familyKey))].sort();
};

/**
 * The roster document of one check-in or attendance aspect (its id is the aspect's name), when the
 * aspect belongs to a roster session and an active student; undefined otherwise.
 */
export const aspectRosterDoc = (
  { version, state }: RosterInput['aspects'][number],
  sessionIds: ReadonlySet<string>,
  activeIds: ReadonlySet<string>,
): RosterDoc | undefined => {
  if (state?.kind === 'checkin' && sessionIds.has(state.sessionId) && activeIds.has(state.studentId)) {
    return {
      _id: `checkin:${state.sessionId}:${state.studentId}`,
      docType: 'rosterCheckin',
      sessionId: state.sessionId,
      studentId: state.studentId,
      version,
      checkins: state.checkins.map((c) => ({
        checkInId: c.checkInId,
        status: c.status,
        checkedInAt: c.checkedInAt,
        checkedOutAt: c.checkedOutAt,
        emergency: c.emergency,
      })),
    };
  }
  if (
    state?.kind === 'attendance' &&
    state.sessionId !== null &&
    sessionIds.has(state.sessionId) &&
    activeIds.has(state.studentId)
  ) {
    return {
      _id: `attendance:${state.studentId}:${state.sessionId}`,
      docType: 'rosterMark',
      studentId: state.studentId,
      sessionId: state.sessionId,
      version,
      mark: state.mark,
    };
  }
  return undefined;
};

/** Orders roster documents by id, as the roster database lists them. */
export const byRosterId = (a: RosterDoc, b: RosterDoc): number =>
  a._id < b._id ? -1 : a._id > b._id ? 1 : 0;

/** The students' part of the roster: the photo and student documents of the active ones, unsorted. */
export const rosterStudentDocs = (
  input: Pick<
    RosterInput,
    'students' | 'photosAllowed' | 'consentsRecorded' | 'thumbnails' | 'familyKey' | 'adults'
  >,
): RosterDoc[] => {
  const docs: RosterDoc[] = [];
  for (const s of input.students) {
    if (s.status !== 'ACTIVE') continue;
    const thumb = input.thumbnails?.get(s.studentId);
    if (thumb !== undefined && s.photoRef === thumb.photoRef && input.photosAllowed(s.studentId)) {
      docs.push({
        _id: `photo:${s.studentId}`,
        docType: 'rosterPhoto',
        studentId: s.studentId,
        photoRef: thumb.photoRef,
        contentType: 'image/jpeg',
        data: thumb.data,
      });
    }
    docs.push({
      _id: `student:${s.studentId}`,
      docType: 'rosterStudent',
      studentId: s.studentId,
      displayName: s.displayName,
      classId: s.classId,
      photoRef: input.photosAllowed(s.studentId) ? s.photoRef : null,
      allergies: s.allergies,
      specialNeeds: s.specialNeeds,
      visitor: s.visitor,
      pickup: (input.adults.get(s.studentId) ?? []).map((a) => ({
        name: a.name,
        level: a.level,
        relationship: a.relationship,
        phoneSuffixes: [...new Set(a.phones.map(phoneSuffix).filter((x) => x.length > 0))],
      })),
      ...(input.familyKey === undefined
        ? {}
        : { families: familiesOf(input.adults.get(s.studentId) ?? [], input.familyKey) }),
      admission: admissionRecordOf({ ...s, imageConsents: input.consentsRecorded(s.studentId) }),
    });
  }
  return docs;
};

/**
 * The rest of the roster: classes, sessions, day keys, and the aspects of the roster's sessions and
 * of the active students (`activeIds`), unsorted.
 */
export const rosterOtherDocs = (
  input: Pick<RosterInput, 'classes' | 'sessions' | 'volunteers' | 'requiredFields' | 'dayKeys' | 'aspects'>,
  activeIds: ReadonlySet<string>,
): RosterDoc[] => {
  const sessionIds = new Set(input.sessions.map((s) => s.sessionId));
  const docs: RosterDoc[] = [];
  for (const c of input.classes) {
    docs.push({
      _id: `class:${c.classId}`,
      docType: 'rosterClass',
      classId: c.classId,
      name: c.name,
      // The desk judges the room's rules offline too.
      capacity: c.capacity ?? null,
      childrenPerVolunteer: c.childrenPerVolunteer ?? null,
      ageRange: c.ageRange ?? null,
      // Only a deactivated one says so: the documents of active classes stay as they were.
      ...(c.status === 'DEACTIVATED' ? { active: false as const } : {}),
    });
  }
  for (const s of input.sessions) {
    const volunteers = input.volunteers?.get(s.sessionId);
    docs.push({
      _id: `session:${s.sessionId}`,
      docType: 'rosterSession',
      sessionId: s.sessionId,
      classId: s.classId,
      date: s.date,
      title: s.title,
      startsAt: s.startsAt,
      endsAt: s.endsAt,
      ...(volunteers === undefined ? {} : { volunteers }),
      ...(s.status === 'DEACTIVATED' ? { active: false as const } : {}),
    });
  }
  docs.push({ _id: 'admission', docType: 'rosterAdmission', requiredFields: [...input.requiredFields] });
  docs.push({ _id: 'daykeys', docType: 'rosterDayKeys', keys: input.dayKeys.map((k) => ({ ...k })) });
  for (const aspect of input.aspects) {
    const doc = aspectRosterDoc(aspect, sessionIds, activeIds);
    if (doc !== undefined) docs.push(doc);
  }
  return docs;
};

/** The whole roster at once, sorted by id (the full pass builds it in parts: `rosterInput.ts`). */
export const rosterDocs = (input: RosterInput): RosterDoc[] => {
  const activeIds = new Set(input.students.filter((s) => s.status === 'ACTIVE').map((s) => s.studentId));
  return [...rosterStudentDocs(input), ...rosterOtherDocs(input, activeIds)].sort(byRosterId);
};
