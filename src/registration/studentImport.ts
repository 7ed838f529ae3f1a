/**
 * Student import (decision 0030): a spreadsheet's rows become students through the student service,
 * in batches. The file is read with csv-parse; every decision (columns, cells, matching, what changes)
 * is the pure rules' (`rules/studentImport.ts`), so a dry run reports exactly what applying does.
 *
 * Personal data: nothing here logs or audits a cell. Each student created or changed gets an audit
 * entry naming it (as a one-by-one creation does), and the request itself is audited by `runRoute`.
 */
import { CsvError } from 'csv-parse';
import { parse } from 'csv-parse/sync';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { derivedStudentId } from '../crypto/importIds.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { Actor } from '../domain/principal.js';
import {
  CreateStudentBody,
  PatchStudentBody,
  type StudentDoc,
  type StudentRecord,
} from '../domain/student.js';
import {
  type ImportField,
  type ImportReport,
  type ImportRowError,
  MAX_IMPORT_ROWS,
} from '../domain/studentImport.js';
import {
  type ClassRef,
  decodeCsvText,
  detectDelimiter,
  type ImportedRow,
  mapColumns,
  matchableBy,
  type PlannedRow,
  planImport,
  readRow,
  rowKey,
} from '../rules/studentImport.js';
import { foldName } from '../rules/students.js';
import type { AuditLog } from '../store/auditLog.js';
import type { ClassStore } from '../store/classes.js';
import { type StudentStore, toRecord } from '../store/students.js';
import { type MatchQuery, type NameAndBirth, nameAndBirthText } from '../store/studentViews.js';
import type { StudentService } from './studentService.js';

export const IMPORT_ENDPOINT = 'POST /api/v1/imports/students';
/** Students written per bulk write: large enough to amortise the write, small enough to stay quick. */
export const IMPORT_BATCH = 500;
/** Stored records read at once while looking for the ones a file's rows match. */
const EXISTING_PAGE = 1_000;
/** Creation batches written at once. */
const BATCHES_AT_ONCE = 3;
/** Updates run through the field-event path, a few at a time. */
const UPDATE_CONCURRENCY = 8;
/** A birth date cannot lie after today in the ministry's calendar. */
const BIRTH_DATE_TIME_ZONE = 'America/Sao_Paulo';

export interface ImportOptions {
  readonly dryRun: boolean;
  readonly createClasses: boolean;
  readonly columns: Partial<Record<ImportField, string>>;
  readonly correlationId: string;
}

export interface StudentImportService {
  importStudents(
    actor: Actor,
    file: Uint8Array,
    options: ImportOptions,
  ): Promise<E.Either<ApiError, ImportReport>>;
}

export interface StudentImportDeps {
  readonly students: StudentStore;
  /**
   * The ids of the active students the rows may match, from CouchDB's index (`activeMatching`) or
   * the embedded store's directory (`directoryMatching`, 0068): the import then reads by key the
   * records its rows may match, not the whole roll. Absent, the roll is read a page at a time.
   */
  readonly activeMatching?: (query: MatchQuery) => Promise<ReadonlyArray<string>>;
  readonly studentService: StudentService;
  readonly classes: Pick<ClassStore, 'listClasses' | 'createClass'>;
  readonly audit: Pick<AuditLog, 'append'>;
  readonly clock: () => Date;
  /** Keys the ids of imported students (`crypto/importIds.ts`); the same on every instance. */
  readonly idKey: Uint8Array;
  /**
   * Puts off background work that each batch's writes would set off, until the file is written: the
   * roster's full passes (`RosterReconciler.holdFullPasses`: one pass after the file instead of one
   * per batch, each reading the whole roll, decision 0057) and, on CouchDB, this instance's refreshes
   * of the student views (`ViewRefresher.hold`: once after the file instead of in steps beside its
   * writes, decision 0066; other instances, and a page that must be current, still ask for them).
   * Answers the release.
   */
  readonly holdBackgroundWork?: () => () => void;
  /**
   * Waits, between batches, for the event pipeline to come near the end of the log (bounded): a
   * door's check-in then waits behind at most the batches in flight, not the whole file (0065).
   */
  readonly paceBatches?: () => Promise<void>;
}

const fileError = (path: string, message: string, extra: Record<string, unknown> = {}): ApiError =>
  apiError('VALIDATION_FAILED', message, { issues: [{ path, message }], ...extra });

/** What csv-parse gives with `info: true` (its types do not say so, hence the codec). */
const ParsedRecords = t.array(t.type({ record: t.array(t.string), info: t.type({ lines: t.number }) }));

interface CsvRow {
  /** The line the record starts on, which is the spreadsheet's row number. */
  readonly line: number;
  readonly cells: string[];
}

/** Rows of cells, or why the file is not CSV; the reason names a line, never the text there. */
const readCsv = (text: string): E.Either<ApiError, CsvRow[]> => {
  try {
    const parsed = ParsedRecords.decode(
      parse(text, {
        delimiter: detectDelimiter(text),
        relax_column_count: true,
        skip_empty_lines: true,
        // Excel pads rows of a sparse sheet with delimiters only: such a line is an empty row too.
        skip_records_with_empty_values: true,
        info: true,
        to: MAX_IMPORT_ROWS + 2,
      }),
    );
    if (E.isLeft(parsed)) throw new Error('csv-parse answered in an unexpected shape');
    return E.right(
      parsed.right.map(({ record, info }) => ({
        // `lines` is where the record ends; a quoted cell may span lines.
        line: info.lines - record.reduce((n, c) => n + (c.match(/\n/g)?.length ?? 0), 0),
        cells: record,
      })),
    );
  } catch (e) {
    if (e instanceof CsvError) {
      const line = typeof e.lines === 'number' ? ` near line ${e.lines}` : '';
      return E.left(fileError('body', `The file is not valid CSV${line} (${e.code}).`));
    }
    throw e;
  }
};

const localToday = (now: Date): string =>
  // en-CA formats as YYYY-MM-DD.
  new Intl.DateTimeFormat('en-CA', { timeZone: BIRTH_DATE_TIME_ZONE }).format(now);

/**
 * The stored records the rows can match (`matchableBy`), in id order as the roll's pages give them, so
 * the plan is the one every record would give. Where the service knows the active students by name
 * (CouchDB's index, the embedded store's directory), it names them and only their records are read:
 * reading every record took most of a late file's time, 102 rows/s at 110,000 students on CouchDB
 * (decision 0064), 222 rows/s past 90,000 embedded (0068). Otherwise the roll's records are read a
 * page at a time.
 */
const matchable = async (
  deps: StudentImportDeps,
  rows: ReadonlyArray<ImportedRow>,
  idFor: (key: string) => string,
): Promise<StudentRecord[]> => {
  const mayMatch = matchableBy(rows, idFor);
  const matching = deps.activeMatching;
  const out: StudentRecord[] = [];
  if (matching === undefined) {
    await deps.students.eachPage(EXISTING_PAGE, (page) => {
      for (const doc of page) if (mayMatch(doc)) out.push(toRecord(doc));
    });
    return out;
  }
  const keys = new Map<string, NameAndBirth>();
  for (const r of rows) {
    const key: NameAndBirth = [foldName(r.fields.displayName), r.fields.birthDate ?? ''];
    keys.set(nameAndBirthText(key), key);
  }
  const ids = await matching({ keys: [...keys.values()], ids: rows.map((r) => idFor(rowKey(r))) });
  const found = await deps.students.getMany(ids);
  for (const doc of found.values()) if (mayMatch(doc)) out.push(toRecord(doc));
  return out.sort((a, b) => (a.studentId < b.studentId ? -1 : a.studentId > b.studentId ? 1 : 0));
};

export const studentImportService = (deps: StudentImportDeps): StudentImportService => ({
  async importStudents(actor, file, options) {
    const records = readCsv(decodeCsvText(file));
    if (E.isLeft(records)) return records;
    const [headerRow, ...data] = records.right;
    const headers = headerRow?.cells;
    if (headers === undefined) return E.left(fileError('body', 'The file is empty.'));
    if (data.length > MAX_IMPORT_ROWS)
      return E.left(
        apiError(
          'PAYLOAD_TOO_LARGE',
          `A file holds at most ${MAX_IMPORT_ROWS} rows; split it and import each part.`,
        ),
      );
    const columns = mapColumns(headers, options.columns);
    if (E.isLeft(columns))
      return E.left(
        apiError('VALIDATION_FAILED', 'The columns of the file could not all be mapped.', {
          issues: columns.left,
          // Header texts name columns, not children: the office shows them to map by hand.
          headers,
        }),
      );
    const classList = await deps.classes.listClasses();
    const classes = new Map<string, ClassRef>(
      classList.map((c) => [foldName(c.name), { classId: c.classId, nucleusId: c.nucleusId }]),
    );
    const today = localToday(deps.clock());
    const rows: ImportedRow[] = [];
    const errors: ImportRowError[] = [];
    data.forEach(({ line, cells }) => {
      const read = readRow(line, cells, {
        columns: columns.right,
        classes,
        createClasses: options.createClasses,
        today,
      });
      if (E.isLeft(read)) errors.push(...read.left);
      else rows.push(read.right);
    });
    const idFor = (key: string) => derivedStudentId(deps.idKey, key);
    const existing = await matchable(deps, rows, idFor);
    // Classes the file names that do not exist: created before any student (only when asked and applying).
    const missingClasses = new Map<string, string>();
    for (const r of rows)
      if (r.classRef === null && !missingClasses.has(r.classKey)) missingClasses.set(r.classKey, r.className);
    const newClassIds = new Map<string, string>();
    if (!options.dryRun) {
      const at = deps.clock().toISOString();
      for (const [key, name] of missingClasses) {
        const created = await deps.classes.createClass({
          name,
          nucleusId: null,
          createdAt: at,
          updatedAt: at,
        });
        newClassIds.set(key, created.classId);
      }
    }
    const classIdOf = (r: ImportedRow): string =>
      r.classRef?.classId ?? newClassIds.get(r.classKey) ?? `new class ${r.classKey}`;
    const plan = planImport(rows, existing, idFor, classIdOf);
    const applyHeld = async (): Promise<PlannedRow[]> => {
      const release = deps.holdBackgroundWork?.();
      try {
        return await apply(deps, actor, plan.planned, classIdOf, errors, options.correlationId);
      } finally {
        release?.();
      }
    };
    errors.push(...plan.errors);
    const done: PlannedRow[] = options.dryRun ? [...plan.planned] : await applyHeld();
    errors.sort((a, b) => a.row - b.row);
    const errorRows = new Set(errors.map((e) => e.row));
    const outcomes = [
      ...done.map((p) => ({
        row: p.row.row,
        action: p.action,
        studentId: p.studentId,
        changedFields: Object.keys(p.changes).sort(),
      })),
      ...[...errorRows].map((row) => ({ row, action: 'error' as const, studentId: null, changedFields: [] })),
    ].sort((a, b) => a.row - b.row);
    const count = (action: PlannedRow['action']) => done.filter((p) => p.action === action).length;
    return E.right({
      dryRun: options.dryRun,
      rows: data.length,
      created: count('create'),
      updated: count('update'),
      unchanged: count('unchanged'),
      errors,
      outcomes,
      columns: columns.right.columns.map((c) => ({ header: c.header, field: c.field })),
      classesCreated: [...missingClasses.values()],
    });
  },
});

/**
 * Stores the planned rows: creations in bulk batches, updates through the student service's field
 * events. Returns the rows that were stored; a row that could not be is reported in `errors`.
 */
const apply = async (
  deps: StudentImportDeps,
  actor: Actor,
  planned: ReadonlyArray<PlannedRow>,
  classIdOf: (r: ImportedRow) => string,
  errors: ImportRowError[],
  correlationId: string,
): Promise<PlannedRow[]> => {
  const stored: PlannedRow[] = [];
  const notStored = (p: PlannedRow, message: string) =>
    errors.push({ row: p.row.row, column: null, code: 'NOT_STORED', message });
  const audited = (p: PlannedRow, status: number) =>
    deps.audit.append({
      correlation_id: correlationId,
      actor_user_id: actor.principal.userId,
      actor_role: actor.principal.primaryRole,
      endpoint: IMPORT_ENDPOINT,
      outcome: 'SUCCESS',
      details: { status, import: true, row: p.row.row },
      subject_id: p.studentId,
      action: 'MUTATION',
    });
  const creations = planned.filter((p) => p.action === 'create');
  const writeBatch = async (i: number) => {
    const batch: Array<{ plan: PlannedRow; body: CreateStudentBody }> = [];
    for (const p of creations.slice(i, i + IMPORT_BATCH)) {
      const body = CreateStudentBody.decode({ phones: [], ...p.row.fields, classId: classIdOf(p.row) });
      // The rules checked every field with its codec already; a failure here is a class id gone missing.
      if (E.isLeft(body)) notStored(p, 'the row could not be stored');
      else batch.push({ plan: p, body: body.right });
    }
    const results = await deps.studentService.createMany(
      actor,
      batch.map((b) => ({ studentId: b.plan.studentId, body: b.body })),
    );
    const audits: Array<Promise<void>> = [];
    results.forEach((r, k) => {
      const b = batch[k];
      if (b === undefined) return;
      if (E.isLeft(r)) {
        notStored(
          b.plan,
          r.left.code === 'CONFLICT'
            ? 'the same child was being imported at the same time; import the file again'
            : r.left.message,
        );
        return;
      }
      stored.push(b.plan);
      audits.push(audited(b.plan, 201));
    });
    await Promise.all(audits);
  };
  // Batches hold distinct children (the plan gives each row its own id), so several may be written at
  // once: on CouchDB one batch's requests leave CouchDB idle while another's are built (issue #41).
  let nextBatch = 0;
  let failed = false;
  const batchWorker = async () => {
    for (let i = nextBatch; i < creations.length && !failed; i = nextBatch) {
      nextBatch += IMPORT_BATCH;
      await writeBatch(i).catch((e: unknown) => {
        failed = true;
        throw e;
      });
      // Between batches only: a file of one batch, or the last, has nothing left to let the door ahead of.
      if (nextBatch < creations.length) await deps.paceBatches?.();
    }
  };
  // After a failed batch no other starts, and the answer waits for the batches under way: nothing is
  // written behind it, and the file sent again finds each row stored whole or not (decision 0057).
  const ended = await Promise.allSettled(Array.from({ length: BATCHES_AT_ONCE }, batchWorker));
  for (const e of ended) if (e.status === 'rejected') throw e.reason;
  const updates = planned.filter((p) => p.action === 'update');
  let next = 0;
  const worker = async () => {
    for (let p = updates[next++]; p !== undefined; p = updates[next++]) {
      const body = PatchStudentBody.decode(p.changes);
      if (E.isLeft(body)) {
        notStored(p, 'the row could not be stored');
        continue;
      }
      const r: E.Either<ApiError, StudentDoc> = await deps.studentService.patch(
        actor,
        p.studentId,
        body.right,
      );
      if (E.isLeft(r)) notStored(p, r.left.message);
      else {
        stored.push(p);
        await audited(p, 200);
      }
    }
  };
  await Promise.all(Array.from({ length: UPDATE_CONCURRENCY }, worker));
  stored.push(...planned.filter((p) => p.action === 'unchanged'));
  return stored;
};
