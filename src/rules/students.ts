/**
 * Student rules, pure: name folding for search, which fields each role may read, photo consent, and
 * soft deletion. A device could run these too.
 */
import type { Permission } from '../domain/principal.js';
import type { StudentRecord } from '../domain/student.js';

/** Lower case, accents removed, spaces collapsed: `João  Pedro` and `joao pedro` fold alike. */
export const foldName = (s: string): string =>
  s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/g, ' ').trim();

/**
 * Every word of the query must appear in the name, in any order, as part of a word or whole. The
 * query is split once and the test applied to each name of a listing (a search scans thousands).
 */
export const queryMatcher = (foldedQuery: string): ((foldedName: string) => boolean) => {
  if (foldedQuery === '') return () => true;
  const words = foldedQuery.split(' ');
  return (foldedName) => words.every((word) => foldedName.includes(word));
};

/** The order of the student list, unique per student so keyset paging never ties. */
export const sortKeyOf = (displayName: string, studentId: string): string =>
  `${foldName(displayName)}\u0000${studentId}`;

export type StudentField = keyof StudentRecord;

const ALWAYS: ReadonlyArray<StudentField> = [
  'studentId',
  'displayName',
  'classId',
  'nucleusId',
  'status',
  'updatedAt',
  'visitor',
];
const DESK: ReadonlyArray<StudentField> = [
  ...ALWAYS,
  'photoRef',
  'photo_refs',
  'guardianName',
  'guardianNameAlt',
  'phones',
  'allergies',
  'specialNeeds',
  'imageConsentId',
];
const ALL: ReadonlyArray<StudentField> = [
  ...DESK,
  'birthDate',
  'address',
  'familyMembershipStatus',
  'createdAt',
  'deleted_justification',
  'deletedAt',
  'anonymisedAt',
];
const REPORTS: ReadonlyArray<StudentField> = [...ALWAYS, 'familyMembershipStatus', 'createdAt'];

/**
 * Data minimisation (LGPD art. 6 III) by role: ADMIN and CADASTRO keep the register, so they read it
 * all; CHAMADOR works the door and the pickup desk, so it reads what identifies the child, who may
 * collect them and their health notes, but not address or birth date; RELATORIOS counts attendance and
 * reads no contact or health data. Custom roles read by permission: `students.add` as CADASTRO,
 * `attendance` as CHAMADOR, otherwise as RELATORIOS.
 */
export const visibleStudentFields = (
  roles: ReadonlyArray<string>,
  permissions: ReadonlyArray<Permission>,
): ReadonlySet<StudentField> => {
  if (roles.includes('ADMIN') || roles.includes('CADASTRO') || permissions.includes('students.add'))
    return new Set(ALL);
  if (roles.includes('CHAMADOR') || permissions.includes('attendance')) return new Set(DESK);
  return new Set(REPORTS);
};

export const SENSITIVE_FIELDS: ReadonlyArray<StudentField> = [
  'photoRef',
  'photo_refs',
  'allergies',
  'specialNeeds',
];

/** A photo reference may be stored or served only while the student has an unrevoked consent. */
export const photosAllowed = (activeConsents: number): boolean => activeConsents > 0;

export const hasPhotos = (fields: {
  readonly photoRef?: string | null;
  readonly photo_refs?: ReadonlyArray<string>;
}): boolean =>
  (fields.photoRef !== undefined && fields.photoRef !== null) ||
  (fields.photo_refs !== undefined && fields.photo_refs.length > 0);

/**
 * The photo references of a change that name no photo the server holds for the child: the issue
 * path of each. `known` is the key of the child's stored photo (one per child, 0033) and whatever the
 * record names already, so a client that sends the record back unchanged is not refused for a
 * reference stored before this rule (0043).
 */
export const unknownPhotoRefs = (
  fields: { readonly photoRef?: string | null; readonly photo_refs?: ReadonlyArray<string> },
  known: ReadonlySet<string>,
): string[] => [
  ...(fields.photoRef !== undefined && fields.photoRef !== null && !known.has(fields.photoRef)
    ? ['body.photoRef']
    : []),
  ...(fields.photo_refs ?? []).flatMap((ref, i) => (known.has(ref) ? [] : [`body.photo_refs.${i}`])),
];

export type DeleteDecision = 'delete' | 'already-deleted';

export const decideDelete = (status: StudentRecord['status']): DeleteDecision =>
  status === 'DELETED' ? 'already-deleted' : 'delete';
