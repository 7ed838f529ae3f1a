/**
 * Reports read the pipeline's projections, never the raw events: presence by session, class or date
 * range (marks and check-ins together), and the conflict records, paged by detection time.
 */
import type { AspectDoc, ConflictDoc } from '../domain/projection.js';
import type { AspectKind, CheckinState } from '../rules/projections.js';
import type { ClassStore } from '../store/classes.js';
import type { ProjectionStore } from '../store/projections.js';
import { projectionOfDoc } from '../store/projections.js';
import type { StudentStore } from '../store/students.js';

export interface AttendanceQuery {
  readonly from: string;
  readonly to: string;
  readonly sessionId?: string;
  readonly classId?: string;
  /** One child's history (the office's child page). */
  readonly studentId?: string;
}

export interface AttendanceRow {
  readonly date: string;
  readonly sessionId: string | null;
  readonly classId: string | null;
  readonly studentId: string;
  readonly displayName: string | null;
  readonly mark: 'PRESENT' | 'ABSENT' | null;
  readonly markedBy: string | null;
  readonly markedAt: string | null;
  readonly checkedInAt: string | null;
  readonly checkedOutAt: string | null;
  /** Present when marked present or checked in (a check-in is presence even without a mark). */
  readonly present: boolean;
}

export interface AttendanceReport {
  readonly from: string;
  readonly to: string;
  readonly rows: ReadonlyArray<AttendanceRow>;
  readonly totals: { readonly rows: number; readonly present: number; readonly absent: number };
}

export interface ConflictPage {
  readonly items: ReadonlyArray<ConflictDoc>;
  /** The position after the last item, when more may follow. */
  readonly next: readonly [string, string] | undefined;
}

export interface ReportService {
  attendance(query: AttendanceQuery): Promise<AttendanceReport>;
  conflicts(query: {
    from?: string;
    to?: string;
    subjectId?: string;
    after?: readonly [string, string];
    limit: number;
  }): Promise<ConflictPage>;
}

interface Cell {
  date: string;
  sessionId: string | null;
  studentId: string;
  mark: 'PRESENT' | 'ABSENT' | null;
  markedBy: string | null;
  markedAt: string | null;
  checkedInAt: string | null;
  checkedOutAt: string | null;
}

export const reportService = (deps: {
  readonly projections: ProjectionStore;
  readonly students: StudentStore;
  readonly classes: ClassStore;
}): ReportService => ({
  async attendance(query) {
    const cells = new Map<string, Cell>();
    const cellOf = (studentId: string, sessionId: string | null, date: string): Cell => {
      const key = `${studentId}|${sessionId ?? date}`;
      const found = cells.get(key);
      if (found !== undefined) return found;
      const fresh: Cell = {
        date,
        sessionId,
        studentId,
        mark: null,
        markedBy: null,
        markedAt: null,
        checkedInAt: null,
        checkedOutAt: null,
      };
      cells.set(key, fresh);
      return fresh;
    };
    const kinds: AspectKind[] = ['attendance', 'checkin'];
    // A page of aspects at a time, keeping only the cells: a day of a few thousand check-ins no longer
    // holds every aspect (each with its events) in memory at once.
    const visit = (doc: AspectDoc): void => {
      // Recomputed from the stored events, so a report never trusts a stale folded value.
      const state = projectionOfDoc(doc)?.state;
      if (state === null || state === undefined) return;
      if (query.studentId !== undefined && state.studentId !== query.studentId) return;
      if (state.kind === 'attendance') {
        const cell = cellOf(state.studentId, state.sessionId, state.day);
        cell.mark = state.mark;
        cell.markedBy = state.markedBy;
        cell.markedAt = state.markedAt;
      } else if (state.kind === 'checkin') {
        const first = (state satisfies CheckinState).checkins[0];
        if (first === undefined) return;
        const last = state.checkins[state.checkins.length - 1];
        const cell = cellOf(state.studentId, state.sessionId, first.checkedInAt.slice(0, 10));
        cell.checkedInAt = first.checkedInAt;
        cell.checkedOutAt = last?.checkedOutAt ?? null;
      }
    };
    for (const kind of kinds) await deps.projections.eachAspectByDay(kind, query.from, query.to, visit);
    const sessionIds = [...new Set([...cells.values()].flatMap((c) => c.sessionId ?? []))];
    const sessions = new Map<string, { classId: string; date: string }>();
    for (const id of sessionIds) {
      const s = await deps.classes.getSession(id);
      if (s !== undefined) sessions.set(id, { classId: s.classId, date: s.date });
    }
    const students = await deps.students.getMany([...new Set([...cells.values()].map((c) => c.studentId))]);
    const rows: AttendanceRow[] = [];
    for (const c of cells.values()) {
      const session = c.sessionId === null ? undefined : sessions.get(c.sessionId);
      const student = students.get(c.studentId);
      const classId = session?.classId ?? student?.classId ?? null;
      if (query.sessionId !== undefined && c.sessionId !== query.sessionId) continue;
      if (query.classId !== undefined && classId !== query.classId) continue;
      rows.push({
        date: session?.date ?? c.date,
        sessionId: c.sessionId,
        classId,
        studentId: c.studentId,
        displayName: student?.displayName ?? null,
        mark: c.mark,
        markedBy: c.markedBy,
        markedAt: c.markedAt,
        checkedInAt: c.checkedInAt,
        checkedOutAt: c.checkedOutAt,
        present: c.mark === 'PRESENT' || c.checkedInAt !== null,
      });
    }
    rows.sort(
      (a, b) =>
        a.date.localeCompare(b.date) ||
        (a.sessionId ?? '').localeCompare(b.sessionId ?? '') ||
        (a.displayName ?? '').localeCompare(b.displayName ?? '', 'pt-BR') ||
        a.studentId.localeCompare(b.studentId),
    );
    const present = rows.filter((r) => r.present).length;
    return {
      from: query.from,
      to: query.to,
      rows,
      totals: { rows: rows.length, present, absent: rows.length - present },
    };
  },

  async conflicts(query) {
    const found = await deps.projections.conflicts(query);
    const items = found.slice(0, query.limit);
    const last = items[items.length - 1];
    return {
      items,
      next: found.length > query.limit && last !== undefined ? [last.detectedAt, last._id] : undefined,
    };
  },
});
