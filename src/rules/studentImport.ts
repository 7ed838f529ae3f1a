/**
 * Student import, pure: how a spreadsheet's bytes become text, which column holds what, how a row
 * becomes a student's fields (dates, Brazilian phones, classes by name), and what importing it does
 * to the register (create, update, leave alone). The service reads the CSV and stores; everything it
 * decides is decided here, so the dry run and the real run cannot disagree.
 *
 * Matching: a row with an external id is the student whose id is derived from it (`idFor`), else the
 * student with the same name, birth date and guardian (case and accents folded). An empty optional
 * cell means "not given": it leaves an existing value alone, so a sparser spreadsheet never erases
 * what the office typed.
 */
import * as E from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import { type StudentRecord, type StudentWritableField, studentWritable } from '../domain/student.js';
import type { ImportAction, ImportErrorCode, ImportField, ImportRowError } from '../domain/studentImport.js';
import { ADDRESS_IMPORT_FIELDS, IMPORT_FIELDS } from '../domain/studentImport.js';
import { foldName } from './students.js';

// ---- bytes → text ----

const UTF8_BOM = [0xef, 0xbb, 0xbf];

/**
 * UTF-8 (a BOM is dropped) when the bytes are valid UTF-8, else Windows-1252: what Excel writes for
 * "CSV" on a Portuguese Windows. Latin-1 text is almost never valid UTF-8 (an accented letter alone
 * is an invalid sequence), so the order decides nothing by accident.
 */
export const decodeCsvText = (bytes: Uint8Array): string => {
  const hasBom = UTF8_BOM.every((b, i) => bytes[i] === b);
  const body = hasBom ? bytes.subarray(3) : bytes;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return decodeWindows1252(body);
  }
};

/**
 * Windows-1252 is Latin-1 but for 0x80–0x9F (€, curly quotes, dashes, Š, Ž, …). Node's TextDecoder
 * decodes the label as Latin-1 (0x80 became U+0080, found by the table test), so those 32 are mapped
 * here; the five the code page leaves undefined keep their Latin-1 value, as the WHATWG decoder does.
 */
const WINDOWS_1252_HIGH =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

export const decodeWindows1252 = (bytes: Uint8Array): string => {
  let out = '';
  for (const b of bytes)
    out += b >= 0x80 && b <= 0x9f ? WINDOWS_1252_HIGH.charAt(b - 0x80) : String.fromCharCode(b);
  return out;
};

/**
 * `;` when the header line has more semicolons than commas outside quotes (Excel's choice where the
 * decimal separator is a comma, as in Brazil), a tab likewise, else `,`.
 */
export const detectDelimiter = (text: string): ',' | ';' | '\t' => {
  const counts = { ',': 0, ';': 0, '\t': 0 };
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && (ch === ',' || ch === ';' || ch === '\t')) counts[ch] += 1;
  }
  if (counts[';'] > counts[','] && counts[';'] >= counts['\t']) return ';';
  if (counts['\t'] > counts[','] && counts['\t'] > counts[';']) return '\t';
  return ',';
};

// ---- headers ----

/** Folded, punctuation to spaces: `Data de Nascimento:` and `data_de_nascimento` read alike. */
export const foldHeader = (s: string): string =>
  foldName(s)
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();

/** The headers each field is recognised by, Portuguese and English, already folded. */
export const HEADER_SYNONYMS: Readonly<Record<ImportField, ReadonlyArray<string>>> = {
  externalId: [
    'id externo',
    'codigo',
    'cod',
    'matricula',
    'numero de membro',
    'external id',
    'member id',
    'id',
  ],
  displayName: [
    'nome',
    'nome da crianca',
    'nome completo',
    'crianca',
    'aluno',
    'aluna',
    'name',
    'full name',
    'child',
    'child name',
    'student',
    'display name',
  ],
  birthDate: [
    'data de nascimento',
    'nascimento',
    'data nasc',
    'dt nasc',
    'birth date',
    'birthdate',
    'date of birth',
    'dob',
  ],
  guardianName: [
    'responsavel',
    'nome do responsavel',
    'responsavel 1',
    'mae',
    'pai',
    'guardian',
    'guardian name',
    'parent',
    'parent name',
  ],
  guardianNameAlt: [
    'responsavel 2',
    'segundo responsavel',
    'outro responsavel',
    'guardian 2',
    'second guardian',
  ],
  phone: ['telefone', 'celular', 'whatsapp', 'fone', 'telefone 1', 'phone', 'mobile', 'phone 1'],
  phone2: ['telefone 2', 'celular 2', 'outro telefone', 'phone 2', 'second phone'],
  className: ['turma', 'classe', 'sala', 'grupo', 'class', 'class name', 'group'],
  allergies: ['alergias', 'alergia', 'allergies', 'allergy'],
  specialNeeds: ['necessidades especiais', 'cuidados especiais', 'special needs'],
  familyMembershipStatus: ['membresia', 'situacao', 'vinculo', 'membership', 'membership status'],
  street: ['rua', 'logradouro', 'endereco', 'street', 'address'],
  number: ['numero', 'no', 'n', 'number'],
  complement: ['complemento', 'complement'],
  neighborhood: ['bairro', 'neighborhood', 'district'],
  city: ['cidade', 'municipio', 'city'],
  state: ['estado', 'uf', 'state'],
  postalCode: ['cep', 'postal code', 'zip', 'zip code'],
};

const REQUIRED_FIELDS: ReadonlyArray<ImportField> = ['displayName', 'guardianName', 'className'];

export interface ColumnMap {
  /** The column index of each mapped field. */
  readonly byField: Partial<Record<ImportField, number>>;
  /** Each column of the file with the field it fills (null: ignored). */
  readonly columns: ReadonlyArray<{ readonly header: string; readonly field: ImportField | null }>;
}

export interface HeaderIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * Which column holds which field: the client's explicit mapping first (`column.<field>=<header>`,
 * compared folded), then the synonyms. A field named by two columns, an explicit header the file does
 * not have, or a required field without a column is an issue of the whole file.
 */
export const mapColumns = (
  headers: ReadonlyArray<string>,
  explicit: Partial<Record<ImportField, string>>,
): E.Either<HeaderIssue[], ColumnMap> => {
  const folded = headers.map(foldHeader);
  const issues: HeaderIssue[] = [];
  const fieldOfColumn: Array<ImportField | null> = headers.map(() => null);
  const byField: Partial<Record<ImportField, number>> = {};
  for (const field of IMPORT_FIELDS) {
    const header = explicit[field];
    if (header === undefined) continue;
    const index = folded.indexOf(foldHeader(header));
    if (index < 0)
      issues.push({ path: `query.column.${field}`, message: 'no column of the file has this header' });
    else if (fieldOfColumn[index] !== null)
      issues.push({
        path: `query.column.${field}`,
        message: 'this column is already mapped to another field',
      });
    else {
      fieldOfColumn[index] = field;
      byField[field] = index;
    }
  }
  for (const field of IMPORT_FIELDS) {
    if (byField[field] !== undefined || explicit[field] !== undefined) continue;
    const synonyms = HEADER_SYNONYMS[field];
    const matches = folded.flatMap((h, i) => (fieldOfColumn[i] === null && synonyms.includes(h) ? [i] : []));
    const [first, second] = matches;
    if (first === undefined) continue;
    if (second !== undefined) {
      issues.push({
        path: `body.header.${field}`,
        message: `columns ${first + 1} and ${second + 1} could both be ${field}; map one with column.${field}`,
      });
      continue;
    }
    fieldOfColumn[first] = field;
    byField[field] = first;
  }
  for (const field of REQUIRED_FIELDS) {
    if (byField[field] === undefined && explicit[field] === undefined)
      issues.push({
        path: `body.header.${field}`,
        message: `no column for ${field}; name one with column.${field}=<header>`,
      });
  }
  if (issues.length > 0) return E.left(issues);
  return E.right({
    byField,
    columns: headers.map((header, i) => ({ header, field: fieldOfColumn[i] ?? null })),
  });
};

// ---- cells ----

/**
 * `dd/mm/aaaa` (also with `-` or `.`, one-digit day or month) or ISO `YYYY-MM-DD`; a real day, from
 * 1900 to `today`. Two-digit years are refused: 05/03/10 could be 1910 or 2010.
 */
export const parseBirthDate = (cell: string, today: string): E.Either<string, string> => {
  const s = cell.trim();
  const br = /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})$/.exec(s);
  const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  const parts = br !== null ? [br[3], br[2], br[1]] : iso !== null ? [iso[1], iso[2], iso[3]] : undefined;
  if (parts === undefined) return E.left('expected a date as dd/mm/aaaa or YYYY-MM-DD');
  const [y = '', m = '', d = ''] = parts;
  const date = `${y}-${m.padStart(2, '0')}-${d.padStart(2, '0')}`;
  const parsed = new Date(`${date}T00:00:00Z`);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== date)
    return E.left('no such day');
  if (date < '1900-01-01' || date > today) return E.left('the date must lie between 1900 and today');
  return E.right(date);
};

/**
 * A Brazilian phone as E.164 (`+55` + area code + number). Accepted: any punctuation; a leading `+`
 * with a country code (kept as given when it is not Brazil's); `55` before the area code; the trunk
 * `0` and a two-digit carrier code (`0 21 11 …`) dialled before it. Without an area code there is no
 * way to know the city: refused rather than guessed.
 */
export const normaliseBrazilianPhone = (cell: string): E.Either<string, string> => {
  const s = cell.trim();
  const international = s.startsWith('+') || s.startsWith('00');
  let digits = s.replace(/\D/g, '');
  if (international) {
    if (s.startsWith('00')) digits = digits.slice(2);
    if (!digits.startsWith('55')) {
      return digits.length >= 8 && digits.length <= 15
        ? E.right(`+${digits}`)
        : E.left('an international number has 8 to 15 digits');
    }
    digits = digits.slice(2);
  } else if (digits.startsWith('0')) {
    // 0 + carrier (2 digits) + area code + number, or 0 + area code + number.
    digits = digits.length >= 13 ? digits.slice(3) : digits.slice(1);
  } else if (digits.startsWith('55') && (digits.length === 12 || digits.length === 13)) {
    digits = digits.slice(2);
  }
  if (digits.length === 8 || digits.length === 9) return E.left('the number has no area code (DDD)');
  if (digits.length !== 10 && digits.length !== 11) return E.left('not a Brazilian phone number');
  if (!/^[1-9][1-9]/.test(digits)) return E.left('the area code (DDD) is not valid');
  // Eleven digits: a mobile, whose number starts with 9 after the area code.
  if (digits.length === 11 && digits[2] !== '9')
    return E.left('a mobile number starts with 9 after the area code');
  return E.right(`+55${digits}`);
};

// ---- rows ----

export interface ClassRef {
  readonly classId: string;
  readonly nucleusId: string | null;
}

/** The student fields a row gives; absent keys were empty (not given). */
export interface ImportedFields {
  readonly displayName: string;
  readonly guardianName: string;
  readonly guardianNameAlt?: string;
  readonly birthDate?: string;
  readonly phones?: ReadonlyArray<{ readonly number: string; readonly qualifier: string }>;
  readonly address?: Readonly<Record<string, string>>;
  readonly allergies?: string;
  readonly specialNeeds?: string;
  readonly familyMembershipStatus?: string;
}

export interface ImportedRow {
  /** Spreadsheet numbering: the header is row 1. */
  readonly row: number;
  readonly externalId: string | null;
  readonly className: string;
  /** Folded class name, the key classes are matched by. */
  readonly classKey: string;
  /** Null when the class does not exist yet and the import may create it. */
  readonly classRef: ClassRef | null;
  readonly fields: ImportedFields;
}

export interface RowContext {
  readonly columns: ColumnMap;
  /** Classes by folded name. */
  readonly classes: ReadonlyMap<string, ClassRef>;
  readonly createClasses: boolean;
  /** YYYY-MM-DD, the latest acceptable birth date. */
  readonly today: string;
}

const TEXT_FIELDS = ['guardianNameAlt', 'allergies', 'specialNeeds', 'familyMembershipStatus'] as const;

const rowError = (
  row: number,
  column: string | null,
  code: ImportErrorCode,
  message: string,
): ImportRowError => ({ row, column, code, message });

/** The first message of a codec failure, as the API's validation messages read. */
const codecMessage = (errors: t.Errors): string => {
  const first = errors[0];
  return first?.message ?? 'not a valid value';
};

/**
 * One data row (`cells`, spreadsheet row `row`) → the fields it gives, or every error it has. Every
 * value is checked with the student codec of its field, so an import accepts exactly what
 * `POST /api/v1/students` accepts.
 */
export const readRow = (
  row: number,
  cells: ReadonlyArray<string>,
  ctx: RowContext,
): E.Either<ImportRowError[], ImportedRow> => {
  const errors: ImportRowError[] = [];
  const headerOf = (field: ImportField): string | null => {
    const i = ctx.columns.byField[field];
    return i === undefined ? null : (ctx.columns.columns[i]?.header ?? null);
  };
  const cell = (field: ImportField): string => {
    const i = ctx.columns.byField[field];
    return i === undefined ? '' : (cells[i] ?? '').trim();
  };
  if (cells.length !== ctx.columns.columns.length) {
    errors.push(
      rowError(
        row,
        null,
        'WRONG_COLUMN_COUNT',
        `the row has ${cells.length} cells; the header has ${ctx.columns.columns.length}`,
      ),
    );
    return E.left(errors);
  }
  const checked = (field: ImportField, target: StudentWritableField, value: unknown): boolean => {
    const decoded = studentWritable[target].decode(value);
    if (E.isLeft(decoded)) {
      errors.push(rowError(row, headerOf(field), 'INVALID_VALUE', codecMessage(decoded.left)));
      return false;
    }
    return true;
  };
  const required = (field: 'displayName' | 'guardianName'): string => {
    const v = cell(field).replace(/\s+/g, ' ');
    if (v === '') errors.push(rowError(row, headerOf(field), 'REQUIRED', `${field} is required`));
    else checked(field, field, v);
    return v;
  };
  const displayName = required('displayName');
  const guardianName = required('guardianName');
  const fields: {
    -readonly [K in keyof ImportedFields]: ImportedFields[K];
  } = { displayName, guardianName };
  for (const field of TEXT_FIELDS) {
    const v = cell(field);
    if (v !== '' && checked(field, field, v)) fields[field] = v;
  }
  const birth = cell('birthDate');
  if (birth !== '') {
    const parsed = parseBirthDate(birth, ctx.today);
    if (E.isLeft(parsed)) errors.push(rowError(row, headerOf('birthDate'), 'INVALID_DATE', parsed.left));
    else fields.birthDate = parsed.right;
  }
  const phones: Array<{ number: string; qualifier: string }> = [];
  for (const [field, qualifier] of [
    ['phone', 'principal'],
    ['phone2', 'outro'],
  ] as const) {
    // One cell may hold several numbers: `(11) 98765-4321 / (11) 3456-7890`.
    for (const part of cell(field).split('/')) {
      if (part.trim() === '') continue;
      const number = normaliseBrazilianPhone(part);
      if (E.isLeft(number)) errors.push(rowError(row, headerOf(field), 'INVALID_PHONE', number.left));
      else if (!phones.some((p) => p.number === number.right))
        phones.push({ number: number.right, qualifier });
    }
  }
  if (phones.length > 0 && checked('phone', 'phones', phones)) fields.phones = phones;
  const address: Record<string, string> = {};
  for (const field of ADDRESS_IMPORT_FIELDS) {
    const v = cell(field);
    if (v !== '') address[field] = v;
  }
  if (Object.keys(address).length > 0 && checked('street', 'address', address)) fields.address = address;
  const className = cell('className').replace(/\s+/g, ' ');
  const classKey = foldName(className);
  let classRef: ClassRef | null = null;
  if (className === '')
    errors.push(rowError(row, headerOf('className'), 'REQUIRED', 'className is required'));
  else {
    const known = ctx.classes.get(classKey);
    if (known !== undefined) classRef = known;
    else if (!ctx.createClasses)
      errors.push(
        rowError(
          row,
          headerOf('className'),
          'UNKNOWN_CLASS',
          'no class has this name; create it or allow createClasses',
        ),
      );
  }
  const externalId = cell('externalId');
  if (externalId.length > 200)
    errors.push(
      rowError(row, headerOf('externalId'), 'INVALID_VALUE', 'an external id has at most 200 characters'),
    );
  if (errors.length > 0) return E.left(errors);
  return E.right({
    row,
    externalId: externalId === '' ? null : externalId,
    className,
    classKey,
    classRef,
    fields,
  });
};

// ---- matching and planning ----

/** The natural key of a child: folded name, birth date, folded guardian. */
export const naturalKey = (f: {
  readonly displayName: string;
  readonly birthDate?: string | null;
  readonly guardianName: string;
}): string => `${foldName(f.displayName)}\u0000${f.birthDate ?? ''}\u0000${foldName(f.guardianName)}`;

/** The key a row is matched by: its external id (folded) when it has one, else its natural key. */
export const rowKey = (r: ImportedRow): string =>
  r.externalId === null ? `n:${naturalKey(r.fields)}` : `x:${foldName(r.externalId)}`;

/**
 * The stored records `planImport` can match to `rows`: active ones whose id is a row's derived id or
 * whose natural key is a row's. Given only these it plans exactly as given every record (it looks
 * records up by those two keys alone, the first of a natural key in the order given), so an import
 * reads the roll a page at a time and keeps at most about one record a row, not the roll: at 250,000
 * students the whole roll's records (about 1.5 KB of heap each) would be more than the service's
 * 256 MB heap (issue #41).
 */
export const matchableBy = (
  rows: ReadonlyArray<ImportedRow>,
  idFor: (key: string) => string,
): ((
  s: Pick<StudentRecord, 'studentId' | 'status' | 'displayName' | 'birthDate' | 'guardianName'>,
) => boolean) => {
  const ids = new Set(rows.map((r) => idFor(rowKey(r))));
  const keys = new Set(rows.map((r) => naturalKey(r.fields)));
  return (s) => s.status === 'ACTIVE' && (ids.has(s.studentId) || keys.has(naturalKey(s)));
};

/** Canonical JSON: object keys sorted, so two equal values give one text. */
const canonical = (v: unknown): string => {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null)
    return `{${Object.entries(v)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
};

/** The writable fields a row would change on `current`, with their new values. */
export const changesOf = (
  current: StudentRecord,
  row: ImportedRow,
  classId: string,
): Partial<Record<StudentWritableField, unknown>> => {
  const wanted: Partial<Record<StudentWritableField, unknown>> = { ...row.fields, classId };
  const out: Partial<Record<StudentWritableField, unknown>> = {};
  for (const [field, value] of Object.entries(wanted)) {
    if (!isWritable(field)) continue;
    if (canonical(current[field]) !== canonical(value)) out[field] = value;
  }
  return out;
};
const isWritable = (s: string): s is StudentWritableField => Object.hasOwn(studentWritable, s);

export interface PlannedRow {
  readonly row: ImportedRow;
  readonly action: Exclude<ImportAction, 'error'>;
  readonly studentId: string;
  /** For `update`: the fields and values to set. */
  readonly changes: Partial<Record<StudentWritableField, unknown>>;
}

export interface ImportPlan {
  readonly planned: ReadonlyArray<PlannedRow>;
  readonly errors: ReadonlyArray<ImportRowError>;
}

/**
 * What importing `rows` does to a register holding `existing` (active students only are matched: a
 * deleted child is not brought back by a spreadsheet). `idFor(key)` derives the id a new student of
 * that key gets, so a row with an external id finds its own student by id on the next import, and
 * two instances importing the same file create the same ids. `classIdOf` gives the class of a row
 * (an existing one or one the import creates). A second row with the key of an earlier one is an error.
 */
export const planImport = (
  rows: ReadonlyArray<ImportedRow>,
  existing: ReadonlyArray<StudentRecord>,
  idFor: (key: string) => string,
  classIdOf: (row: ImportedRow) => string,
): ImportPlan => {
  const active = existing.filter((s) => s.status === 'ACTIVE');
  const byId = new Map(active.map((s) => [s.studentId, s]));
  const byNatural = new Map<string, StudentRecord>();
  for (const s of active) {
    const key = naturalKey(s);
    if (!byNatural.has(key)) byNatural.set(key, s);
  }
  const seen = new Map<string, number>();
  const claimed = new Set<string>();
  const planned: PlannedRow[] = [];
  const errors: ImportRowError[] = [];
  for (const row of rows) {
    const key = rowKey(row);
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      errors.push(
        rowError(
          row.row,
          null,
          'DUPLICATE_ROW',
          `the same child as row ${earlier} (same external id, or name, birth date and guardian)`,
        ),
      );
      continue;
    }
    seen.set(key, row.row);
    const derived = idFor(key);
    const match = byId.get(derived) ?? byNatural.get(naturalKey(row.fields));
    if (match === undefined || claimed.has(match.studentId)) {
      planned.push({ row, action: 'create', studentId: derived, changes: {} });
      continue;
    }
    claimed.add(match.studentId);
    const changes = changesOf(match, row, classIdOf(row));
    planned.push({
      row,
      action: Object.keys(changes).length === 0 ? 'unchanged' : 'update',
      studentId: match.studentId,
      changes,
    });
  }
  return { planned, errors };
};
