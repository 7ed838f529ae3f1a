/**
 * Students: every field of the contract with its LGPD classification beside its codec. The
 * classification drives what the OpenAPI document shows (`x-classification`), which fields each role
 * may read, what the data-subject export holds, and (later) what a tablet's roster receives.
 */
import * as t from 'io-ts';
import {
  boundedArray,
  boundedString,
  type Classification,
  calendarDate,
  IsoInstant,
  metaOf,
  nullable,
  object,
  PathId,
  pageLimit,
  refine,
  ShortText,
  Uuid,
} from './codec.js';

const BirthDate = calendarDate({ classification: 'personal' });

/** One phone number as the family gave it: the student record's, a walk-in's and a visitor event's. */
export const PhoneNumber = boundedString(4, 30, {
  classification: 'personal',
  description: 'Digits, spaces, +, -, ( ) as the family gave it.',
});

export const Phone = object('Phone', {
  number: PhoneNumber,
  qualifier: boundedString(1, 40, {
    classification: 'none',
    description: 'A label such as "mãe", "pai", "trabalho".',
  }),
});

export const Address = object(
  'Address',
  {},
  {
    street: boundedString(1, 200, { classification: 'personal' }),
    number: boundedString(1, 20, { classification: 'personal' }),
    complement: boundedString(1, 120, { classification: 'personal' }),
    neighborhood: boundedString(1, 120, { classification: 'personal' }),
    city: boundedString(1, 120, { classification: 'personal' }),
    state: boundedString(1, 60, { classification: 'personal' }),
    postalCode: boundedString(1, 20, { classification: 'personal' }),
  },
  { classification: 'personal', description: 'The seven address fields; all personal data.' },
);

export const StudentStatus = t.keyof({ ACTIVE: null, DELETED: null });
export type StudentStatus = t.TypeOf<typeof StudentStatus>;

const PhotoRef = boundedString(1, 512, {
  classification: 'sensitive',
  description: 'Key of a stored photo. Needs an active image consent.',
});
const PhotoRefs = refine(t.array(PhotoRef), (a) => a.length <= 20, 'at most 20 photo references', {
  maxItems: 20,
  classification: 'sensitive',
});

/** The writable fields and their codecs; the classification of each is read from its annotation. */
export const studentWritable = {
  displayName: boundedString(1, 120, { classification: 'personal' }),
  photoRef: nullable(PhotoRef),
  photo_refs: PhotoRefs,
  guardianName: boundedString(1, 120, { classification: 'personal' }),
  guardianNameAlt: nullable(boundedString(1, 120, { classification: 'personal' })),
  birthDate: nullable(BirthDate),
  phones: refine(t.array(Phone), (a) => a.length <= 10, 'at most 10 phones', {
    maxItems: 10,
    classification: 'personal',
  }),
  address: nullable(Address),
  allergies: nullable(
    boundedString(1, 2000, { classification: 'sensitive', description: 'Health data (LGPD art. 11).' }),
  ),
  specialNeeds: nullable(
    boundedString(1, 2000, { classification: 'sensitive', description: 'Health data (LGPD art. 11).' }),
  ),
  classId: Uuid,
  nucleusId: nullable(Uuid),
  familyMembershipStatus: nullable(boundedString(1, 60, { classification: 'none' })),
};

export type StudentWritableField = keyof typeof studentWritable;
export const isStudentWritableField = (s: string): s is StudentWritableField =>
  Object.hasOwn(studentWritable, s);

/** The full record as the server keeps it (private database). */
export interface StudentRecord {
  readonly studentId: string;
  readonly displayName: string;
  readonly photoRef: string | null;
  readonly photo_refs: ReadonlyArray<string>;
  readonly guardianName: string;
  readonly guardianNameAlt: string | null;
  readonly birthDate: string | null;
  readonly phones: ReadonlyArray<{ readonly number: string; readonly qualifier: string }>;
  readonly address: Readonly<Record<string, string>> | null;
  readonly allergies: string | null;
  readonly specialNeeds: string | null;
  readonly classId: string;
  readonly nucleusId: string | null;
  readonly familyMembershipStatus: string | null;
  readonly imageConsentId: string | null;
  readonly visitor: boolean;
  readonly status: StudentStatus;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly deleted_justification: string | null;
  /** When it was soft-deleted (0045); absent on records deleted before it was kept (their `updatedAt`). */
  readonly deletedAt?: string | null;
  /** When its personal data was anonymised, past the retention period (0045); absent or null until then. */
  readonly anonymisedAt?: string | null;
}

export const StudentDoc = t.intersection([
  t.type({
    _id: t.string,
    _rev: t.string,
    docType: t.literal('student'),
    studentId: t.string,
    displayName: t.string,
    photoRef: t.union([t.string, t.null]),
    photo_refs: t.array(t.string),
    guardianName: t.string,
    guardianNameAlt: t.union([t.string, t.null]),
    birthDate: t.union([t.string, t.null]),
    phones: t.array(t.type({ number: t.string, qualifier: t.string })),
    address: t.union([t.record(t.string, t.string), t.null]),
    allergies: t.union([t.string, t.null]),
    specialNeeds: t.union([t.string, t.null]),
    classId: t.string,
    nucleusId: t.union([t.string, t.null]),
    familyMembershipStatus: t.union([t.string, t.null]),
    imageConsentId: t.union([t.string, t.null]),
    visitor: t.boolean,
    status: StudentStatus,
    createdAt: t.string,
    updatedAt: t.string,
    deleted_justification: t.union([t.string, t.null]),
  }),
  // Kept since retention (0045); older records lack them.
  t.partial({ deletedAt: t.union([t.string, t.null]), anonymisedAt: t.union([t.string, t.null]) }),
  // The display name folded as the search folds it (`foldName`), written with every record since
  // decision 0056: CouchDB's views read it, and its JavaScript engine has no `normalize` to fold with.
  // Records written before it lack it until the start's pass (`studentNameFold.ts`) adds it.
  t.partial({ nameFolded: t.string }),
]);
export type StudentDoc = t.TypeOf<typeof StudentDoc>;

const readOnly = {
  studentId: Uuid,
  imageConsentId: nullable(Uuid),
  visitor: t.boolean,
  status: StudentStatus,
  createdAt: IsoInstant,
  updatedAt: IsoInstant,
  deleted_justification: nullable(boundedString(0, 500, { classification: 'personal' })),
  deletedAt: nullable(IsoInstant),
  anonymisedAt: nullable(IsoInstant),
};

/**
 * A student as the API returns it. Every field but `studentId`, `displayName`, `classId`, `status` and
 * `updatedAt` is optional: a role that may not read a field does not get it (see `visibleFields`).
 */
export const Student = object(
  'Student',
  {
    studentId: readOnly.studentId,
    displayName: studentWritable.displayName,
    classId: studentWritable.classId,
    status: readOnly.status,
    updatedAt: readOnly.updatedAt,
  },
  {
    photoRef: studentWritable.photoRef,
    photo_refs: studentWritable.photo_refs,
    guardianName: studentWritable.guardianName,
    guardianNameAlt: studentWritable.guardianNameAlt,
    birthDate: studentWritable.birthDate,
    phones: studentWritable.phones,
    address: studentWritable.address,
    allergies: studentWritable.allergies,
    specialNeeds: studentWritable.specialNeeds,
    nucleusId: studentWritable.nucleusId,
    familyMembershipStatus: studentWritable.familyMembershipStatus,
    imageConsentId: readOnly.imageConsentId,
    visitor: readOnly.visitor,
    createdAt: readOnly.createdAt,
    deleted_justification: readOnly.deleted_justification,
    deletedAt: readOnly.deletedAt,
    anonymisedAt: readOnly.anonymisedAt,
  },
  {
    description:
      'Fields carry `x-classification`. Read-only: studentId, imageConsentId, visitor, status, createdAt, updatedAt, ' +
      'deleted_justification, deletedAt, anonymisedAt. Once `anonymisedAt` is set (a deleted student past the ' +
      'retention period, decision 0045) every personal field is cleared and the names read `[anonymised]`.',
  },
);
export type Student = t.TypeOf<typeof Student>;

export const CreateStudentBody = object(
  'CreateStudentBody',
  {
    displayName: studentWritable.displayName,
    guardianName: studentWritable.guardianName,
    phones: studentWritable.phones,
    classId: studentWritable.classId,
  },
  {
    photoRef: studentWritable.photoRef,
    photo_refs: studentWritable.photo_refs,
    guardianNameAlt: studentWritable.guardianNameAlt,
    birthDate: studentWritable.birthDate,
    address: studentWritable.address,
    allergies: studentWritable.allergies,
    specialNeeds: studentWritable.specialNeeds,
    nucleusId: studentWritable.nucleusId,
    familyMembershipStatus: studentWritable.familyMembershipStatus,
  },
  {
    description:
      'Photos need an active image consent, which can only be recorded once the student exists: create the ' +
      'student, record the consent, then PATCH photoRef / photo_refs.',
  },
);
export type CreateStudentBody = t.TypeOf<typeof CreateStudentBody>;

export const PatchStudentBody = object('PatchStudentBody', {}, studentWritable, {
  description:
    'Any subset of the writable fields; `null` clears an optional one. Read-only fields are refused (400).',
});
export type PatchStudentBody = t.TypeOf<typeof PatchStudentBody>;

export const StudentSummary = object('StudentSummary', {
  studentId: Uuid,
  displayName: studentWritable.displayName,
  photoRef: studentWritable.photoRef,
  status: StudentStatus,
  updatedAt: IsoInstant,
});
export type StudentSummary = t.TypeOf<typeof StudentSummary>;

/** The students list's page: its size when none is asked, and the largest. */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

export const StudentListQuery = object(
  'StudentListQuery',
  {},
  {
    q: boundedString(1, 100, {
      description: 'Words that must all appear in the name; case and accents are ignored (joao finds João).',
    }),
    status: StudentStatus,
    classId: boundedString(1, 64, { description: 'Only the students of this class.' }),
    limit: pageLimit(MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE),
    cursor: boundedString(1, 2048, { description: 'The `nextCursor` of the previous page, opaque.' }),
  },
);

export const StudentPage = object(
  'StudentPage',
  { items: boundedArray(StudentSummary, MAX_PAGE_SIZE), nextCursor: nullable(ShortText) },
  {},
  {
    description: '`nextCursor` is opaque; null at the end.',
  },
);
export type StudentPage = t.TypeOf<typeof StudentPage>;

export const DeleteStudentBody = object('DeleteStudentBody', {
  justification: boundedString(10, 500, { classification: 'personal', description: '10 to 500 characters.' }),
});

export const StudentIdParams = object('StudentIdParams', { studentId: PathId });

/** A codec's classification, looking through `nullable(x)` to `x`. */
const classificationOf = (codec: t.Mixed): Classification => {
  const own = metaOf(codec)?.classification;
  if (own !== undefined) return own;
  if (codec instanceof t.UnionType) {
    const members: t.Mixed[] = codec.types;
    for (const m of members) {
      const inner = classificationOf(m);
      if (inner !== 'none') return inner;
    }
  }
  return 'none';
};

/**
 * Every student field with its classification, read from the annotations on the `Student` codec, so
 * the OpenAPI document, log redaction, the export and (later) the tablets' roster share one source.
 */
export const studentFieldClassification: Readonly<Record<string, Classification>> = Object.fromEntries(
  Object.entries<t.Mixed>({ ...Student.required, ...Student.optional }).map(([field, codec]) => [
    field,
    classificationOf(codec),
  ]),
);

export const personalStudentFields = (): string[] =>
  Object.entries(studentFieldClassification)
    .filter(([, c]) => c !== 'none')
    .map(([field]) => field);
