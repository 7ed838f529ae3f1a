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
import { familyGuardianName, firstName } from './familyPass.js';
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
  /**
   * The family pass (0049): the deployment's issuer tag, and the hashes of a family's current pass
   * and of those it replaced; absent: the roster carries no family documents.
   */
  readonly familyPasses?: FamilyPasses;
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

export interface FamilyPasses {
  readonly issuer: string;
  readonly hashesOf: (familyKey: string) => {
    readonly pass: string;
    readonly revoked: ReadonlyArray<string>;
  };
}

/**
 * The family a child's pass stands for (0049): that of the first phone on the record that names one
 * (the record lists the main guardian's number first). Undefined: the child has no family.
 */
export const passFamilyPhone = (phones: ReadonlyArray<string>): string | undefined => {
  for (const p of phones) {
    const digits = familyPhone(p);
    if (digits !== undefined) return digits;
  }
  return undefined;
};

/** The family keys of a child: one per phone of the guardians on the record (N1), sorted, unique. */
type Adults = RosterInput['adults'] extends ReadonlyMap<string, infer A> ? A : never;

const familiesOf = (adults: Adults, familyKey: (phoneDigits: string) => string): string[] => {
  const phones = adults.filter((a) => a.level === 'N1').flatMap((a) => a.phones);
  return [...new Set(phones.flatMap((p) => familyPhone(p) ?? []).map(familyKey))].sort();
};

/** A child's place in one family: what the family documents are gathered from, a page at a time. */
export interface FamilyMember {
  readonly familyKey: string;
  readonly studentId: string;
  /** The child's first guardian (the record's `guardianName`), the first of its N1 adults. */
  readonly guardianName: string;
  /** The last four digits of the family's phone. */
  readonly phoneSuffix: string;
}

/** The families of the active children among `students`: one member per child and guardian phone. */
export const familyMembersOf = (
  input: Pick<RosterInput, 'students' | 'adults'>,
  familyKey: (phoneDigits: string) => string,
): FamilyMember[] => {
  const members: FamilyMember[] = [];
  for (const s of input.students) {
    if (s.status !== 'ACTIVE') continue;
    const guardians = (input.adults.get(s.studentId) ?? []).filter((a) => a.level === 'N1');
    const guardianName = guardians[0]?.name ?? '';
    const digits = new Set(guardians.flatMap((a) => a.phones).flatMap((p) => familyPhone(p) ?? []));
    for (const d of digits)
      members.push({
        familyKey: familyKey(d),
        studentId: s.studentId,
        guardianName,
        phoneSuffix: d.slice(-4),
      });
  }
  return members;
};

/**
 * One `rosterFamily` document per family among `members` (whatever pages they were gathered from),
 * and the deployment's issuer, unsorted. The family is named by its children's first guardian
 * (`familyGuardianName`), by first name only.
 */
export const rosterFamilyDocs = (members: Iterable<FamilyMember>, passes: FamilyPasses): RosterDoc[] => {
  const families = new Map<string, { suffix: string; ids: string[]; guardians: string[] }>();
  for (const m of members) {
    const family = families.get(m.familyKey) ?? { suffix: m.phoneSuffix, ids: [], guardians: [] };
    family.ids.push(m.studentId);
    family.guardians.push(m.guardianName);
    families.set(m.familyKey, family);
  }
  const docs: RosterDoc[] = [{ _id: 'familypasses', docType: 'rosterFamilyPasses', issuer: passes.issuer }];
  for (const [familyKey, family] of families) {
    const hashes = passes.hashesOf(familyKey);
    docs.push({
      _id: `family:${familyKey}`,
      docType: 'rosterFamily',
      familyKey,
      guardianName: firstName(familyGuardianName(family.guardians)),
      phoneSuffix: family.suffix,
      studentIds: [...new Set(family.ids)].sort(),
      pass: hashes.pass,
      revoked: [...hashes.revoked],
    });
  }
  return docs;
};

/**
 * The roster document of one check-in or attendance aspect (its id is the aspect's name), when the
 * aspect belongs to a roster session and an active student; undefined otherwise.
 */
export const aspectRosterDoc = (
  { version, state }: RosterInput['aspects'][number],
  sessionIds: ReadonlySet<string>,
  activeIds: Pick<ReadonlySet<string>, 'has'>,
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
  activeIds: Pick<ReadonlySet<string>, 'has'>,
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
  const families =
    input.familyKey === undefined || input.familyPasses === undefined
      ? []
      : rosterFamilyDocs(familyMembersOf(input, input.familyKey), input.familyPasses);
  return [...rosterStudentDocs(input), ...rosterOtherDocs(input, activeIds), ...families].sort(byRosterId);
};
