/**
 * What a tablet receives (the `roster` database, pulled through `/api/v1/replication/roster`): only
 * what offline check-in and check-out need. No full phone numbers, addresses, birth dates, users,
 * sessions of other days, secrets or audit entries ever appear here (LGPD: minimisation, art. 6 III).
 * Ids are stable (`student:<id>`, `class:<id>`, `session:<id>`, `checkin:<sessionId>:<studentId>`,
 * `attendance:<studentId>:<sessionId>`, `daykeys`, `admission`), so a change replaces a document and a
 * child leaving the roster reaches the tablet as a deletion.
 *
 * What the admission rule (`rules/admission.ts`) judges a check-in by reaches the tablet in its
 * smallest form: of a child's record, the birth month and whether each required field is answered,
 * never the values; of a room, its rules and how many volunteers were in it at the last pull.
 */
import * as t from 'io-ts';
import { StoredAgeRange } from './classes.js';

const PickupAdult = t.type({
  name: t.string,
  level: t.keyof({ N1: null, N2: null, N3: null }),
  relationship: t.string,
  /** The last four digits of each phone on record: the gate asks for them, never the number. */
  phoneSuffixes: t.array(t.string),
});

export const RosterStudent = t.intersection([
  t.type({
    _id: t.string,
    docType: t.literal('rosterStudent'),
    studentId: t.string,
    displayName: t.string,
    classId: t.string,
    /** Only while the child has an active image consent. */
    photoRef: t.union([t.string, t.null]),
    allergies: t.union([t.string, t.null]),
    specialNeeds: t.union([t.string, t.null]),
    visitor: t.boolean,
    pickup: t.array(PickupAdult),
  }),
  t.partial({
    /**
     * One opaque key per guardian phone (a keyed hash, `rules/roster.ts`): children who share one are
     * siblings to the desk, which learns that they share a number and never the number itself.
     */
    families: t.array(t.string),
    /**
     * What the admission rule reads of the record (`AdmissionRecord`): the birth month, never the day,
     * and whether each field a church may require is answered. Absent from an older server's roster.
     */
    admission: t.type({
      birthMonth: t.union([t.string, t.null]),
      guardianPhone: t.boolean,
      allergiesAnswered: t.boolean,
      specialNeedsAnswered: t.boolean,
      imageConsentAnswered: t.boolean,
    }),
  }),
]);

export const RosterClass = t.intersection([
  t.type({
    _id: t.string,
    docType: t.literal('rosterClass'),
    classId: t.string,
    name: t.string,
  }),
  // Optional, so a roster pulled from a server that sends none still reads: no limit, no ratio.
  t.partial({
    capacity: t.union([t.number, t.null]),
    childrenPerVolunteer: t.union([t.number, t.null]),
    ageRange: t.union([StoredAgeRange, t.null]),
    /**
     * `false` once the class is deactivated (0047): its sessions take no check-ins. Sent only then;
     * absent (and from an older server): active.
     */
    active: t.boolean,
  }),
]);

export const RosterSession = t.intersection([
  t.type({
    _id: t.string,
    docType: t.literal('rosterSession'),
    sessionId: t.string,
    classId: t.string,
    date: t.string,
    title: t.union([t.string, t.null]),
    startsAt: t.union([t.string, t.null]),
    endsAt: t.union([t.string, t.null]),
  }),
  t.partial({
    /**
     * Volunteers in the room when the roster was last written, for a room with a ratio only: the
     * tablet judges the ratio offline as of its last pull (the server judges it again on arrival).
     */
    volunteers: t.number,
    /**
     * `false` once the session itself is deactivated (0047): it stays in the roster, with its
     * check-ins, so the children still in the room can be checked out, but takes no check-in. Sent
     * only then; absent: active.
     */
    active: t.boolean,
  }),
]);

/**
 * The church's admission settings a tablet needs offline: the record fields required before a
 * check-in. Read as strings, so a field a newer server adds leaves the document readable (the tablet
 * ignores a field it does not know; the server judges it on arrival).
 */
export const RosterAdmission = t.type({
  _id: t.string,
  docType: t.literal('rosterAdmission'),
  requiredFields: t.array(t.string),
});

export const RosterDayKeys = t.type({
  _id: t.string,
  docType: t.literal('rosterDayKeys'),
  /** base64url HMAC keys for today and the next days; the master secret never leaves the server. */
  keys: t.array(t.type({ day: t.string, key: t.string })),
});

export const RosterCheckin = t.type({
  _id: t.string,
  docType: t.literal('rosterCheckin'),
  sessionId: t.string,
  studentId: t.string,
  /** The version a tablet names as `baseVersion` when it changes this check-in. */
  version: t.union([t.string, t.null]),
  checkins: t.array(
    t.type({
      checkInId: t.string,
      status: t.string,
      checkedInAt: t.string,
      checkedOutAt: t.union([t.string, t.null]),
      emergency: t.boolean,
    }),
  ),
});

export const RosterMark = t.type({
  _id: t.string,
  docType: t.literal('rosterMark'),
  studentId: t.string,
  sessionId: t.string,
  version: t.union([t.string, t.null]),
  mark: t.keyof({ PRESENT: null, ABSENT: null }),
});

/**
 * A child's photo thumbnail (JPEG, about 256 px), only while the child has an active image consent
 * and a stored photo (0033): a document of its own, so a change to the child's name or pickup list
 * does not send the image again. `photoRef` is the child's, so a tablet shows no stale image.
 */
export const RosterPhoto = t.type({
  _id: t.string,
  docType: t.literal('rosterPhoto'),
  studentId: t.string,
  photoRef: t.string,
  contentType: t.literal('image/jpeg'),
  /** base64 (not base64url): the image's bytes. */
  data: t.string,
});
export type RosterPhoto = t.TypeOf<typeof RosterPhoto>;

/**
 * A family: the children who share a guardian phone (0027), named by its opaque key, with what a
 * tablet needs to find it by a scanned pass or by the phone's last four digits (0049): the guardian's
 * first name, the four digits, and hashes of the family pass (the current one and those it replaced),
 * from which no pass can be made. `studentIds` are the family's active children, sorted.
 */
export const RosterFamily = t.type({
  _id: t.string,
  docType: t.literal('rosterFamily'),
  familyKey: t.string,
  guardianName: t.string,
  phoneSuffix: t.string,
  studentIds: t.array(t.string),
  pass: t.string,
  revoked: t.array(t.string),
});
export type RosterFamily = t.TypeOf<typeof RosterFamily>;

/** The deployment's family-pass issuer tag: a pass naming another is another deployment's (0049). */
export const RosterFamilyPasses = t.type({
  _id: t.string,
  docType: t.literal('rosterFamilyPasses'),
  issuer: t.string,
});

export const RosterDoc = t.union([
  RosterStudent,
  RosterPhoto,
  RosterClass,
  RosterSession,
  RosterDayKeys,
  RosterCheckin,
  RosterMark,
  RosterAdmission,
  RosterFamily,
  RosterFamilyPasses,
]);
export type RosterDoc = t.TypeOf<typeof RosterDoc>;
export type RosterStudent = t.TypeOf<typeof RosterStudent>;
export type RosterAdmission = t.TypeOf<typeof RosterAdmission>;
