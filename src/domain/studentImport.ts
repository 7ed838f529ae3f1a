/**
 * Student import (issue 21): the columns a spreadsheet may carry, the query of the import request and
 * the report it answers. The file itself is the request body (`text/csv`); its rows are read by
 * `rules/studentImport.ts` and stored through the student service.
 */
import * as t from 'io-ts';
import {
  BytesType,
  boundedArray,
  boundedInt,
  boundedString,
  nullable,
  object,
  refine,
  ShortText,
  Uuid,
} from './codec.js';

/** At most this many data rows per file; a larger file is 413 and nothing is read or stored. */
export const MAX_IMPORT_ROWS = 10_000;

/**
 * The fields a column can fill. `phone` and `phone2` become the student's phones; the seven address
 * fields its address; `className` is matched to a class by name; `externalId` is the key of the
 * church's own register (a member number), used to find the same child on the next import.
 */
/** The seven address fields of a student, each its own column. */
export const ADDRESS_IMPORT_FIELDS = [
  'street',
  'number',
  'complement',
  'neighborhood',
  'city',
  'state',
  'postalCode',
] as const;

export const IMPORT_FIELDS = [
  'externalId',
  'displayName',
  'birthDate',
  'guardianName',
  'guardianNameAlt',
  'phone',
  'phone2',
  'className',
  'allergies',
  'specialNeeds',
  'familyMembershipStatus',
  ...ADDRESS_IMPORT_FIELDS,
] as const;
export type ImportField = (typeof IMPORT_FIELDS)[number];
// Built from the list, so the codec and the list cannot drift (as ErrorCodeC is from the catalogue).
export const ImportFieldC = t.keyof(
  Object.fromEntries(IMPORT_FIELDS.map((f) => [f, null])) as Record<ImportField, null>,
);

export const isImportField = (s: string): s is ImportField => IMPORT_FIELDS.some((f) => f === s);

/** The body: the spreadsheet as exported, bytes (UTF-8 with or without BOM, or Windows-1252). */
export const StudentsCsv = new BytesType(
  'text/csv',
  'The spreadsheet as CSV: UTF-8 (with or without BOM) or Windows-1252; `,` or `;` separated; the first ' +
    'row names the columns (Portuguese or English), dates `dd/mm/aaaa` or `YYYY-MM-DD`.',
  // 10,000 rows of a few hundred bytes each, with room to spare.
  16 * 1024 * 1024,
);

const Flag = (description: string) => annotateKeyof(t.keyof({ true: null, false: null }), description);

// `t.keyof` codecs are shared shapes; each use gets its own so its description stays its own.
const annotateKeyof = <C extends t.Mixed>(codec: C, description: string) =>
  refine(codec, () => true, 'true or false', { description });

const ColumnHeader = (field: ImportField) =>
  boundedString(1, 200, { description: `The header of the column that holds \`${field}\`.` });

/**
 * `column.<field>=<header>` maps a column whose header is not recognised; every other column is
 * mapped by its header (Portuguese or English, case and accents ignored).
 */
export const ImportStudentsQuery = object(
  'ImportStudentsQuery',
  {},
  {
    dryRun: Flag(
      '`true` (the default) reads and checks the file and reports what would change, storing nothing; `false` stores.',
    ),
    createClasses: Flag(
      '`true` creates the classes the file names that do not exist yet; `false` (the default) reports their rows as errors.',
    ),
    'column.externalId': ColumnHeader('externalId'),
    'column.displayName': ColumnHeader('displayName'),
    'column.birthDate': ColumnHeader('birthDate'),
    'column.guardianName': ColumnHeader('guardianName'),
    'column.guardianNameAlt': ColumnHeader('guardianNameAlt'),
    'column.phone': ColumnHeader('phone'),
    'column.phone2': ColumnHeader('phone2'),
    'column.className': ColumnHeader('className'),
    'column.allergies': ColumnHeader('allergies'),
    'column.specialNeeds': ColumnHeader('specialNeeds'),
    'column.familyMembershipStatus': ColumnHeader('familyMembershipStatus'),
    'column.street': ColumnHeader('street'),
    'column.number': ColumnHeader('number'),
    'column.complement': ColumnHeader('complement'),
    'column.neighborhood': ColumnHeader('neighborhood'),
    'column.city': ColumnHeader('city'),
    'column.state': ColumnHeader('state'),
    'column.postalCode': ColumnHeader('postalCode'),
  },
);
export type ImportStudentsQuery = t.TypeOf<typeof ImportStudentsQuery>;

/** The explicit mapping of a query: field → header, for the fields the client named. */
export const columnsOfQuery = (query: ImportStudentsQuery): Partial<Record<ImportField, string>> => {
  const out: Partial<Record<ImportField, string>> = {};
  for (const [key, value] of Object.entries(query)) {
    if (!key.startsWith('column.') || typeof value !== 'string') continue;
    const field = key.slice('column.'.length);
    if (isImportField(field)) out[field] = value;
  }
  return out;
};

// A file holds at most 10,000 child rows (413 beyond), so every count and row number is below this.
const Count = boundedInt(0, 1_000_000);
/** What one file's report can list: a row, an error per cell, a header per column. */
const MAX_LISTED = 1_000_000;

export const ImportErrorCode = t.keyof({
  REQUIRED: null,
  INVALID_VALUE: null,
  INVALID_DATE: null,
  INVALID_PHONE: null,
  UNKNOWN_CLASS: null,
  DUPLICATE_ROW: null,
  WRONG_COLUMN_COUNT: null,
  NOT_STORED: null,
});
export type ImportErrorCode = t.TypeOf<typeof ImportErrorCode>;

export const ImportRowError = object(
  'ImportRowError',
  {
    row: Count,
    column: nullable(ShortText),
    code: ImportErrorCode,
    message: ShortText,
  },
  {},
  {
    description:
      '`row` counts as the spreadsheet does: the header is row 1, the first child row 2. `column` is the ' +
      "header as written in the file (null when the error is the row's, not one cell's). The message never " +
      'quotes the cell.',
  },
);
export type ImportRowError = t.TypeOf<typeof ImportRowError>;

export const ImportAction = t.keyof({ create: null, update: null, unchanged: null, error: null });
export type ImportAction = t.TypeOf<typeof ImportAction>;

export const ImportRowOutcome = object(
  'ImportRowOutcome',
  {
    row: Count,
    action: ImportAction,
    /** The student created, changed or matched; null for a row in error. */
    studentId: nullable(Uuid),
    /** The fields an update changes. */
    changedFields: boundedArray(ShortText, 100),
  },
  {},
  {
    description:
      "One per child row: what the import does (dry run) or did with it. A row's errors are in `errors`.",
  },
);

export const ImportColumn = object(
  'ImportColumn',
  { header: ShortText, field: nullable(ImportFieldC) },
  {},
  {
    description: 'How each column of the file was read; `field` null means the column was ignored.',
  },
);

export const ImportReport = object(
  'StudentImportReport',
  {
    dryRun: t.boolean,
    rows: Count,
    created: Count,
    updated: Count,
    unchanged: Count,
    errors: boundedArray(ImportRowError, MAX_LISTED),
    outcomes: boundedArray(ImportRowOutcome, MAX_LISTED),
    columns: boundedArray(ImportColumn, 1_000),
    classesCreated: boundedArray(ShortText, MAX_LISTED),
  },
  {},
  {
    description:
      'In a dry run, `created`, `updated` and `unchanged` count what applying would do; otherwise what was ' +
      'done. A row is stored whole or not at all; rows with errors are not stored. `classesCreated` names the ' +
      'classes created (or, in a dry run with `createClasses`, that would be).',
  },
);
export type ImportReport = t.TypeOf<typeof ImportReport>;
