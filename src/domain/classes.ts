/**
 * Nuclei, classes and class sessions: stored records, API shapes and request bodies. A class may
 * belong to a nucleus; a class session is one meeting of a class on a calendar date. "Session" alone
 * already means an authentication session here, hence `ClassSession` and the `classSession` docType.
 */
import * as t from 'io-ts';
import {
  boundedInt,
  boundedString,
  calendarDate,
  IsoInstant,
  isUuid,
  nullable,
  object,
  PathId,
  refine,
  Uuid,
} from './codec.js';

/** The local calendar day of a meeting, without a time zone (the tablets' day, not a UTC instant). */
export const MeetingDate = calendarDate({ examples: ['2026-03-01'] });

const GroupName = boundedString(1, 120);
const SessionTitle = boundedString(1, 120);

// Separate codecs from the shared `Uuid` / `IsoInstant`, so marking them read-only in the OpenAPI
// document does not mark every other use of those codecs.
const ReadOnlyId = refine(t.string, isUuid, 'a UUID', { format: 'uuid', maxLength: 36, readOnly: true });
const ReadOnlyInstant = refine(IsoInstant, () => true, 'a UTC ISO 8601 timestamp ending in Z', {
  format: 'date-time',
  readOnly: true,
});

/**
 * Whether a nucleus, class or session is in use (decision 0047). A deactivated one keeps its history
 * (reports, exports, audits name it as before) but takes no new check-ins, sessions or classes.
 */
export const ActivityStatus = t.keyof({ ACTIVE: null, DEACTIVATED: null });
export type ActivityStatus = t.TypeOf<typeof ActivityStatus>;

/** A record stored before deactivation existed has no status: it is active. */
export const isActive = (doc: { readonly status?: ActivityStatus | undefined }): boolean =>
  doc.status !== 'DEACTIVATED';
export const statusOf = (doc: { readonly status?: ActivityStatus | undefined }): ActivityStatus =>
  doc.status ?? 'ACTIVE';

// Absent on records stored before deactivation existed: active.
const storedStatus = t.partial({ status: ActivityStatus });

// ---- stored documents (private database) ----

/** An age range as stored: read leniently, validated when written. */
export const StoredAgeRange = t.partial({
  minMonths: t.number,
  maxMonths: t.number,
  bornFrom: t.string,
  bornUntil: t.string,
});

export const NucleusDoc = t.intersection([
  t.type({
    _id: t.string,
    _rev: t.string,
    docType: t.literal('nucleus'),
    nucleusId: t.string,
    name: t.string,
    createdAt: t.string,
    updatedAt: t.string,
  }),
  storedStatus,
]);
export type NucleusDoc = t.TypeOf<typeof NucleusDoc>;

export const ClassDoc = t.intersection([
  t.type({
    _id: t.string,
    _rev: t.string,
    docType: t.literal('class'),
    classId: t.string,
    name: t.string,
    nucleusId: t.union([t.string, t.null]),
    createdAt: t.string,
    updatedAt: t.string,
  }),
  // Absent on classes stored before rooms had a capacity (or an age range): none.
  t.partial({
    capacity: t.union([t.number, t.null]),
    childrenPerVolunteer: t.union([t.number, t.null]),
    ageRange: t.union([StoredAgeRange, t.null]),
  }),
  storedStatus,
]);
export type ClassDoc = t.TypeOf<typeof ClassDoc>;

export const ClassSessionDoc = t.intersection([
  t.type({
    _id: t.string,
    _rev: t.string,
    docType: t.literal('classSession'),
    sessionId: t.string,
    classId: t.string,
    /** The class's nucleus when the session was last written (a snapshot, so reports need no join). */
    nucleusId: t.union([t.string, t.null]),
    date: t.string,
    title: t.union([t.string, t.null]),
    startsAt: t.union([t.string, t.null]),
    endsAt: t.union([t.string, t.null]),
    createdAt: t.string,
    updatedAt: t.string,
  }),
  storedStatus,
]);
export type ClassSessionDoc = t.TypeOf<typeof ClassSessionDoc>;

/** A meeting's end must come after its start; either may be unknown. */
export const timesInOrder = (startsAt: string | null, endsAt: string | null): boolean =>
  startsAt === null || endsAt === null || Date.parse(endsAt) > Date.parse(startsAt);

const ReadOnlyStatus = refine(ActivityStatus, () => true, 'ACTIVE or DEACTIVATED', {
  readOnly: true,
  description:
    'Read-only: `POST …/deactivate` and `POST …/reactivate` (ADMIN) change it. A deactivated one keeps its ' +
    'history and is left out of its list unless `includeInactive=true`.',
});

/** `includeInactive` on the lists of nuclei, classes and sessions. */
const IncludeInactive = refine(t.keyof({ true: null, false: null }), () => true, 'true or false', {
  description:
    '`true` lists deactivated ones too (each with its `status`); `false` (the default) leaves them out.',
});
export const ActivityListQuery = object('ActivityListQuery', {}, { includeInactive: IncludeInactive });

// ---- nuclei ----

export const Nucleus = object(
  'Nucleus',
  {
    nucleusId: ReadOnlyId,
    name: GroupName,
    status: ReadOnlyStatus,
    createdAt: ReadOnlyInstant,
    updatedAt: ReadOnlyInstant,
  },
  {},
  {
    description:
      'A group of classes (a site or a ministry). `nucleusId`, `status`, `createdAt`, `updatedAt` are read-only.',
  },
);
export type Nucleus = t.TypeOf<typeof Nucleus>;

export const toNucleus = (doc: NucleusDoc): Nucleus => ({
  nucleusId: doc.nucleusId,
  name: doc.name,
  status: statusOf(doc),
  createdAt: doc.createdAt,
  updatedAt: doc.updatedAt,
});

export const NucleusList = object('NucleusList', { items: t.array(Nucleus) });
export const CreateNucleusBody = object('CreateNucleusBody', { name: GroupName });
export const PatchNucleusBody = object('PatchNucleusBody', {}, { name: GroupName });
export const NucleusIdParams = object('NucleusIdParams', { nucleusId: PathId });

// ---- classes ----

const RoomCount = (description: string) =>
  refine(t.number, (n) => Number.isInteger(n) && n >= 1 && n <= 10_000, 'an integer from 1 to 10000', {
    integer: true,
    minimum: 1,
    maximum: 10_000,
    description,
  });
/** How many children the room takes. Null: no limit. */
const Capacity = nullable(
  RoomCount('How many children the room takes; a check-in beyond it is refused (`ROOM_FULL`).'),
);
/** The church's ratio, when it uses one: children per volunteer in the room. */
const ChildrenPerVolunteer = nullable(
  RoomCount(
    'Children per volunteer in the room, when the church uses a ratio: a check-in that would need more volunteers ' +
      'than are checked in to the session is refused (`RATIO_EXCEEDED`).',
  ),
);
const Months = boundedInt(0, 1_200, {
  description: 'Whole months from the birth month to the meeting month.',
});
const YearMonth = refine(t.string, (s) => /^\d{4}-(0[1-9]|1[0-2])$/.test(s), 'a year and month, YYYY-MM', {
  pattern: '^\\d{4}-(0[1-9]|1[0-2])$',
  minLength: 7,
  maxLength: 7,
  examples: ['2019-04'],
});
const ageRangeFields = { minMonths: Months, maxMonths: Months, bornFrom: YearMonth, bornUntil: YearMonth };
/**
 * A class's age range (the admission rule, `rules/admission.ts`): ages in whole months at the meeting,
 * or birth months, each bound optional and inclusive; at least one, and in order.
 */
export const AgeRangeC = refine(
  object('AgeRange', {}, ageRangeFields, {
    description:
      'Who the class is for: `minMonths` and `maxMonths` (age in whole months at the meeting, from the birth ' +
      'month), `bornFrom` and `bornUntil` (birth months, `YYYY-MM`); each optional and inclusive, at least one. ' +
      'A child outside it is refused with `AGE_OUT_OF_RANGE`; a child without a birth date with ' +
      '`RECORD_INCOMPLETE` (an ADMIN may override either).',
  }),
  (r) =>
    (r.minMonths !== undefined ||
      r.maxMonths !== undefined ||
      r.bornFrom !== undefined ||
      r.bornUntil !== undefined) &&
    (r.minMonths === undefined || r.maxMonths === undefined || r.minMonths <= r.maxMonths) &&
    (r.bornFrom === undefined || r.bornUntil === undefined || r.bornFrom <= r.bornUntil),
  'an age range with at least one bound, each lower bound at most its upper bound',
);
export type AgeRange = t.TypeOf<typeof AgeRangeC>;
const roomFields = {
  capacity: Capacity,
  childrenPerVolunteer: ChildrenPerVolunteer,
  ageRange: nullable(AgeRangeC),
};

export const ClassC = object(
  'Class',
  {
    classId: ReadOnlyId,
    name: GroupName,
    nucleusId: nullable(Uuid),
    ...roomFields,
    status: ReadOnlyStatus,
    createdAt: ReadOnlyInstant,
    updatedAt: ReadOnlyInstant,
  },
  {},
  {
    description:
      '`nucleusId` is null when the class belongs to no nucleus; `capacity`, `childrenPerVolunteer` and `ageRange` are ' +
      'null when not set. Check-ins are refused beyond them (409 `ROOM_FULL`, `RATIO_EXCEEDED`, `AGE_OUT_OF_RANGE`) ' +
      'unless an ADMIN overrides. A deactivated class takes no check-ins and no new sessions (409 `CONFLICT`, ' +
      '`details.reason` `CLASS_DEACTIVATED`).',
  },
);
export type Class = t.TypeOf<typeof ClassC>;

export const toClass = (doc: ClassDoc): Class => ({
  classId: doc.classId,
  name: doc.name,
  nucleusId: doc.nucleusId,
  capacity: doc.capacity ?? null,
  childrenPerVolunteer: doc.childrenPerVolunteer ?? null,
  ageRange: doc.ageRange ?? null,
  status: statusOf(doc),
  createdAt: doc.createdAt,
  updatedAt: doc.updatedAt,
});

export const ClassList = object('ClassList', { items: t.array(ClassC) });
export const CreateClassBody = object(
  'CreateClassBody',
  { name: GroupName },
  { nucleusId: nullable(Uuid), ...roomFields },
  { description: '`nucleusId`, when given, must name an existing nucleus (400 otherwise).' },
);
export const PatchClassBody = object(
  'PatchClassBody',
  {},
  { name: GroupName, nucleusId: nullable(Uuid), ...roomFields },
  {
    description:
      'Any subset of the fields; `nucleusId: null` detaches the class from its nucleus, `capacity: null` removes the limit.',
  },
);
export const ClassIdParams = object('ClassIdParams', { classId: PathId });

// ---- class sessions ----

export const ClassSession = object(
  'ClassSession',
  {
    sessionId: ReadOnlyId,
    classId: Uuid,
    nucleusId: nullable(ReadOnlyId),
    date: MeetingDate,
    title: nullable(SessionTitle),
    startsAt: nullable(IsoInstant),
    endsAt: nullable(IsoInstant),
    status: ReadOnlyStatus,
    createdAt: ReadOnlyInstant,
    updatedAt: ReadOnlyInstant,
  },
  {},
  {
    description:
      'One meeting of a class. `nucleusId` is read-only: it is copied from the class whenever the session is ' +
      'written (null when the class has none), so moving a class to another nucleus leaves its recorded ' +
      "sessions where they were until they are next changed. `status` is the session's own: a session of a " +
      'deactivated class takes no check-ins either, whatever its status.',
  },
);
export type ClassSession = t.TypeOf<typeof ClassSession>;

export const toClassSession = (doc: ClassSessionDoc): ClassSession => ({
  sessionId: doc.sessionId,
  classId: doc.classId,
  nucleusId: doc.nucleusId,
  date: doc.date,
  title: doc.title,
  startsAt: doc.startsAt,
  endsAt: doc.endsAt,
  status: statusOf(doc),
  createdAt: doc.createdAt,
  updatedAt: doc.updatedAt,
});

export const ClassSessionList = object('ClassSessionList', { items: t.array(ClassSession) });

const sessionTimes = { startsAt: nullable(IsoInstant), endsAt: nullable(IsoInstant) };

export const CreateClassSessionBody = object(
  'CreateClassSessionBody',
  { classId: Uuid, date: MeetingDate },
  { title: nullable(SessionTitle), ...sessionTimes },
  {
    description:
      '`classId` must name an existing class (400 otherwise). When both `startsAt` and `endsAt` are given, ' +
      '`endsAt` must be later (400).',
  },
);
export const PatchClassSessionBody = object(
  'PatchClassSessionBody',
  {},
  { classId: Uuid, date: MeetingDate, title: nullable(SessionTitle), ...sessionTimes },
  {
    description:
      'Any subset of the fields; `null` clears an optional one. The times are checked together with the ' +
      'stored ones. `nucleusId` is read-only (400).',
  },
);
export const ClassSessionIdParams = object('ClassSessionIdParams', { sessionId: PathId });
export const ClassSessionListQuery = object(
  'ClassSessionListQuery',
  {},
  { date: MeetingDate, classId: Uuid, includeInactive: IncludeInactive },
);
export type ClassSessionFilter = { readonly date?: string; readonly classId?: string };
