/**
 * What a tablet receives (the `roster` database, pulled through `/api/v1/replication/roster`): only
 * what offline check-in and check-out need. No full phone numbers, addresses, birth dates, users,
 * sessions of other days, secrets or audit entries ever appear here (LGPD: minimisation, art. 6 III).
 * Ids are stable (`student:<id>`, `class:<id>`, `session:<id>`, `checkin:<sessionId>:<studentId>`,
 * `attendance:<studentId>:<sessionId>`, `daykeys`), so a change replaces a document and a child
 * leaving the roster reaches the tablet as a deletion.
 */
import * as t from 'io-ts';

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
  t.partial({ capacity: t.union([t.number, t.null]), childrenPerVolunteer: t.union([t.number, t.null]) }),
]);

export const RosterSession = t.type({
  _id: t.string,
  docType: t.literal('rosterSession'),
  sessionId: t.string,
  classId: t.string,
  date: t.string,
  title: t.union([t.string, t.null]),
  startsAt: t.union([t.string, t.null]),
  endsAt: t.union([t.string, t.null]),
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

export const RosterDoc = t.union([
  RosterStudent,
  RosterPhoto,
  RosterClass,
  RosterSession,
  RosterDayKeys,
  RosterCheckin,
  RosterMark,
]);
export type RosterDoc = t.TypeOf<typeof RosterDoc>;
export type RosterStudent = t.TypeOf<typeof RosterStudent>;
