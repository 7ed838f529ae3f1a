/**
 * The pipeline's documents in the projections database. An aspect document keeps every event of its
 * aspect (so the next event is resolved without reading the events database) and, for readers, the
 * standing of each and the folded value. Conflict records are documents of their own so that the
 * conflict report can page them by time. Nothing here carries a processing time: a rebuild writes the
 * same documents.
 */
import * as t from 'io-ts';
import { RequiredFieldC } from './checkin.js';
import { AgeRangeC } from './classes.js';
import { boundedArray, boundedInt, IsoInstant, nullable, object, ShortText } from './codec.js';

export const StoredAspectEvent = t.type({
  eventId: t.string,
  type: t.string,
  baseVersion: t.union([t.string, t.null]),
  subjectId: t.string,
  userId: t.string,
  role: t.string,
  deviceId: t.union([t.string, t.null]),
  clientTimestamp: t.string,
  serverTimestamp: t.string,
  payload: t.UnknownRecord,
});
export type StoredAspectEvent = t.TypeOf<typeof StoredAspectEvent>;

export const AspectDoc = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('aspect'),
  aspect: t.string,
  kind: t.string,
  subjectId: t.string,
  sessionId: t.union([t.string, t.null]),
  day: t.string,
  events: t.array(StoredAspectEvent),
  applied: t.array(t.string),
  superseded: t.array(t.string),
  waiting: t.array(t.string),
  version: t.union([t.string, t.null]),
  // Written for people and CouchDB views; readers recompute it from `events`.
  state: t.unknown,
});
export type AspectDoc = t.TypeOf<typeof AspectDoc>;

export const aspectDocId = (aspect: string): string => `aspect:${aspect}`;
export const conflictDocId = (loserEventId: string): string => `conflict:${loserEventId}`;
export const quarantineDocId = (docId: string): string => `quarantine:${docId}`;

const ChangeSummary = object(
  'ConflictChange',
  { type: ShortText },
  { field: ShortText, checkInId: ShortText },
  { description: 'What the event changed: its kind, and the field or check-in; never the values.' },
);

export const ConflictSide = object(
  'ConflictSide',
  {
    eventId: ShortText,
    userId: ShortText,
    role: ShortText,
    deviceId: nullable(ShortText),
    clientTimestamp: IsoInstant,
    serverTimestamp: IsoInstant,
    change: ChangeSummary,
  },
  {},
  { description: 'One side of a conflict: who (user and role), from which device, when, and what changed.' },
);
export type ConflictSide = t.TypeOf<typeof ConflictSide>;

export const ConflictPolicyC = t.keyof({
  ADMIN_PRECEDENCE: null,
  LAST_WRITER_WINS: null,
  BASED_ON_SUPERSEDED: null,
});

const conflictFields = {
  aspect: ShortText,
  kind: t.keyof({ attendance: null, checkin: null, student: null, visitor: null }),
  subjectId: ShortText,
  policy: ConflictPolicyC,
  winner: ConflictSide,
  loser: ConflictSide,
  detectedAt: IsoInstant,
};

export const ConflictRecord = object(
  'ConflictRecord',
  conflictFields,
  {},
  {
    description:
      'A decided conflict: the loser is superseded (`CONFLICT_SUPERSEDED`) and kept. `detectedAt` is the later of the two ' +
      'server timestamps.',
  },
);
export type ConflictRecord = t.TypeOf<typeof ConflictRecord>;

/** The admission rule's policy refusals (`rules/admission.ts`), as reports name them. */
export const AdmissionReasonC = t.keyof({
  RECORD_INCOMPLETE: null,
  AGE_OUT_OF_RANGE: null,
  ROOM_FULL: null,
  RATIO_EXCEEDED: null,
});

const Count = boundedInt(0, 1_000_000);
export const AdmissionRefusalC = object(
  'AdmissionRefusal',
  { reason: AdmissionReasonC },
  {
    missing: boundedArray(RequiredFieldC, 5),
    ageMonths: boundedInt(-2_400, 2_400),
    ageRange: AgeRangeC,
    checkedIn: Count,
    capacity: Count,
    volunteers: Count,
    childrenPerVolunteer: Count,
  },
  {
    description:
      'One rule the check-in broke, with the facts the server judged it by: `missing` (RECORD_INCOMPLETE), ' +
      '`ageMonths` and `ageRange` (AGE_OUT_OF_RANGE), `checkedIn` and `capacity` (ROOM_FULL), `checkedIn`, ' +
      '`volunteers` and `childrenPerVolunteer` (RATIO_EXCEEDED).',
  },
);
export type AdmissionRefusal = t.TypeOf<typeof AdmissionRefusalC>;

const admissionFields = {
  aspect: ShortText,
  kind: t.literal('checkin'),
  subjectId: ShortText,
  policy: t.literal('ADMISSION_RULE'),
  reason: AdmissionReasonC,
  refusals: boundedArray(AdmissionRefusalC, 4),
  event: ConflictSide,
  detectedAt: IsoInstant,
};

export const AdmissionException = object(
  'AdmissionException',
  admissionFields,
  {},
  {
    description:
      'A check-in a device recorded offline that the admission rule would have refused when it reached the server ' +
      '(`reason`: the first rule broken; `refusals`: every one, with its facts). The check-in is kept: it ' +
      'happened. `event` is who made it, on which device and when; `detectedAt` its server timestamp.',
  },
);
export type AdmissionException = t.TypeOf<typeof AdmissionException>;

/** A conflict or an admission exception: the conflict report lists both, told apart by `policy`. */
export const ReportedConflict = t.union([ConflictRecord, AdmissionException]);
export type ReportedConflict = t.TypeOf<typeof ReportedConflict>;

export const admissionExceptionDocId = (eventId: string): string => `admission:${eventId}`;

export const ConflictDoc = t.union([
  t.type({ _id: t.string, _rev: t.string, docType: t.literal('conflict'), ...conflictFields }),
  // Same docType, so the conflict report's index pages both kinds by detection time.
  t.type({ _id: t.string, _rev: t.string, docType: t.literal('conflict'), ...admissionFields }),
]);
export type ConflictDoc = t.TypeOf<typeof ConflictDoc>;

export const QuarantineDoc = t.intersection([
  t.type({
    _id: t.string,
    _rev: t.string,
    docType: t.literal('quarantine'),
    docId: t.string,
    reason: t.string,
  }),
  // When it was first quarantined: the time of its audit entry, whose key every later detection (a
  // replay, another instance) derives again. Absent on records stored before it was kept.
  t.partial({ detectedAt: t.string }),
]);
export type QuarantineDoc = t.TypeOf<typeof QuarantineDoc>;
