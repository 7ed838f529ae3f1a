/**
 * Recurring schedules (decision 0031): create, list, change, end, skip or add a date, and
 * materialise each schedule's sessions for today and the next 27 days. Every decision is the pure
 * rules' (`rules/schedules.ts`); here the schedule, the window's sessions and their check-ins are read
 * and the plan written.
 *
 * A session's id is derived from its schedule and date, so making sessions twice, after a restart or
 * on several instances at once, writes each once: a create of a taken id is refused by the store and
 * the existing session is kept.
 */
import { createHash } from 'node:crypto';
import * as E from 'fp-ts/lib/Either.js';
import { isActive, statusOf } from '../domain/classes.js';
import { type ApiError, apiError } from '../domain/errors.js';
import {
  type CreateScheduleBody,
  DEFAULT_TIME_ZONE,
  type PatchScheduleBody,
  type ScheduleDoc,
  type ScheduleFields,
} from '../domain/schedules.js';
import { keyedLock } from '../lib/keyedLock.js';
import { placementRefusal } from '../rules/deactivation.js';
import {
  addDays,
  localDate,
  occurrences,
  planMaterialisation,
  type SessionShape,
  sessionOf,
  WINDOW_DAYS,
} from '../rules/schedules.js';
import type { CheckinStore } from '../store/checkins.js';
import type { ClassStore } from '../store/classes.js';
import type { ScheduleStore } from '../store/schedules.js';
import { statusRefusalError } from './classService.js';

/** A name-based UUID (version 8 layout) of a schedule's meeting on a date: the same everywhere. */
export const scheduleSessionId = (scheduleId: string, date: string): string => {
  const h = createHash('sha256').update(`chamada schedule session\u0000${scheduleId}\u0000${date}`).digest();
  h[6] = ((h[6] ?? 0) & 0x0f) | 0x80;
  h[8] = ((h[8] ?? 0) & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
};

export interface MaterialiseResult {
  readonly created: number;
  readonly updated: number;
  readonly removed: number;
}

export interface ScheduleService {
  create(body: CreateScheduleBody): Promise<E.Either<ApiError, ScheduleDoc>>;
  list(): Promise<ScheduleDoc[]>;
  patch(scheduleId: string, body: PatchScheduleBody): Promise<E.Either<ApiError, ScheduleDoc>>;
  end(scheduleId: string, lastDate: string | undefined): Promise<E.Either<ApiError, ScheduleDoc>>;
  skipDate(scheduleId: string, date: string): Promise<E.Either<ApiError, ScheduleDoc>>;
  addDate(scheduleId: string, date: string): Promise<E.Either<ApiError, ScheduleDoc>>;
  /** Makes every active schedule's sessions for the window; what a periodic job and the start run. */
  materialiseAll(): Promise<MaterialiseResult>;
  /** The same for one class's schedules (once the class is reactivated). */
  materialiseClass(classId: string): Promise<MaterialiseResult>;
}

export interface ScheduleServiceDeps {
  readonly schedules: ScheduleStore;
  readonly classes: Pick<
    ClassStore,
    'getClass' | 'getSessions' | 'createSessionWithId' | 'updateSession' | 'removeSession'
  >;
  readonly checkins: Pick<CheckinStore, 'sessionsWithCheckins'>;
  readonly clock: () => Date;
}

const invalid = (path: string, message: string): ApiError =>
  apiError('VALIDATION_FAILED', message, { issues: [{ path, message }] });
const notFound = (): ApiError => apiError('NOT_FOUND', 'No such schedule.');

const fieldsOf = (d: ScheduleDoc): ScheduleFields => {
  const { _id: _i, _rev: _r, docType: _t, scheduleId: _s, ...fields } = d;
  return fields;
};

export const scheduleService = (deps: ScheduleServiceDeps): ScheduleService => {
  const locks = keyedLock();

  const materialise = async (schedule: ScheduleDoc): Promise<MaterialiseResult> => {
    const now = deps.clock();
    const today = localDate(now, schedule.timeZone);
    const last = addDays(today, WINDOW_DAYS - 1);
    const cls = await deps.classes.getClass(schedule.classId);
    const nucleusId = cls?.nucleusId ?? null;
    const dates = Array.from({ length: WINDOW_DAYS }, (_, i) => addDays(today, i));
    const idOf = (date: string) => scheduleSessionId(schedule.scheduleId, date);
    const docs = await deps.classes.getSessions(dates.map(idOf));
    const byDate = new Map([...docs.values()].map((d) => [d.date, d]));
    const existing = new Map<string, SessionShape>(byDate);
    const wanted = occurrences(schedule, today, last).map((d) => sessionOf(schedule, nucleusId, d));
    // A class that is gone (damage: classes are never deleted) stops nothing, as before.
    const classActive = cls === undefined || isActive(cls);
    const input = { classActive, wanted, existing, now: now.toISOString(), today };
    let plan = planMaterialisation({ ...input, checkedIn: new Set() });
    // Check-ins are read only when something would change or go: the usual run changes nothing.
    if (plan.update.length + plan.remove.length > 0) {
      const touched = [...plan.update.map((s) => s.date), ...plan.remove];
      const withCheckins = await deps.checkins.sessionsWithCheckins(touched.map(idOf));
      plan = planMaterialisation({
        ...input,
        checkedIn: new Set(touched.filter((d) => withCheckins.has(idOf(d)))),
      });
    }
    const at = now.toISOString();
    let created = 0;
    let updated = 0;
    let removed = 0;
    for (const s of plan.create) {
      const r = await deps.classes.createSessionWithId(idOf(s.date), { ...s, createdAt: at, updatedAt: at });
      if (r !== 'EXISTS') created += 1;
    }
    for (const s of plan.update) {
      const current = byDate.get(s.date);
      if (current === undefined) continue;
      // A conflict means another instance or an edit got there first; the next run looks again.
      const r = await deps.classes.updateSession(current, {
        ...s,
        createdAt: current.createdAt,
        updatedAt: at,
      });
      if (r !== 'CONFLICT') updated += 1;
    }
    for (const date of plan.remove) {
      const current = byDate.get(date);
      if (current !== undefined && (await deps.classes.removeSession(current)) === 'REMOVED') removed += 1;
    }
    return { created, updated, removed };
  };

  /** Reads, changes and stores a schedule, then brings its sessions in line; one change at a time per schedule. */
  const change = (
    scheduleId: string,
    next: (current: ScheduleDoc) => E.Either<ApiError, ScheduleFields>,
  ): Promise<E.Either<ApiError, ScheduleDoc>> =>
    locks.run(scheduleId, async () => {
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const current = await deps.schedules.get(scheduleId);
        if (current === undefined) return E.left(notFound());
        const fields = next(current);
        if (E.isLeft(fields)) return fields;
        const stored = await deps.schedules.update(current, {
          ...fields.right,
          updatedAt: deps.clock().toISOString(),
        });
        if (stored === 'CONFLICT') continue;
        await materialise(stored);
        return E.right(stored);
      }
      return E.left(apiError('CONFLICT', 'The schedule changed while this request ran; try again.'));
    });

  const activeOnly =
    (f: (s: ScheduleFields) => E.Either<ApiError, ScheduleFields>) =>
    (current: ScheduleDoc): E.Either<ApiError, ScheduleFields> =>
      current.status === 'ENDED'
        ? E.left(apiError('CONFLICT', 'The schedule has ended.', { reason: 'SCHEDULE_ENDED' }))
        : f(fieldsOf(current));

  /** Brings the sessions of the chosen schedules in line, each under its lock. */
  const materialiseWhere = async (chosen: (s: ScheduleDoc) => boolean): Promise<MaterialiseResult> => {
    const totals = { created: 0, updated: 0, removed: 0 };
    for (const s of await deps.schedules.list()) {
      if (!chosen(s)) continue;
      if (s.status !== 'ACTIVE' && s.until !== null && s.until < localDate(deps.clock(), s.timeZone))
        continue;
      // Read again under the lock: a change that ran meanwhile has already brought its sessions in line.
      const r = await locks.run(s.scheduleId, async () => {
        const fresh = await deps.schedules.get(s.scheduleId);
        return fresh === undefined ? { created: 0, updated: 0, removed: 0 } : materialise(fresh);
      });
      totals.created += r.created;
      totals.updated += r.updated;
      totals.removed += r.removed;
    }
    return totals;
  };

  return {
    async create(body) {
      if (body.until !== undefined && body.until !== null && body.until < body.from)
        return E.left(invalid('body.until', 'until must not be before from'));
      const cls = await deps.classes.getClass(body.classId);
      if (cls === undefined) return E.left(invalid('body.classId', 'no class with this id'));
      // A schedule is sessions to come: none for a deactivated class, as by hand.
      const closed = placementRefusal('session', statusOf(cls));
      if (closed !== undefined) return E.left(statusRefusalError('session', closed));
      const at = deps.clock().toISOString();
      const created = await deps.schedules.create({
        classId: body.classId,
        weekdays: [...body.weekdays],
        localTime: body.localTime,
        durationMinutes: body.durationMinutes ?? null,
        timeZone: body.timeZone ?? DEFAULT_TIME_ZONE,
        title: body.title ?? null,
        from: body.from,
        until: body.until ?? null,
        skipDates: [],
        extraDates: [],
        status: 'ACTIVE',
        createdAt: at,
        updatedAt: at,
      });
      await locks.run(created.scheduleId, () => materialise(created));
      return E.right(created);
    },

    list: () => deps.schedules.list(),

    patch: (scheduleId, body) =>
      change(
        scheduleId,
        activeOnly((s) => {
          const next: ScheduleFields = {
            ...s,
            ...body,
            weekdays: body.weekdays === undefined ? s.weekdays : [...body.weekdays],
          };
          return next.until !== null && next.until < next.from
            ? E.left(invalid('body.until', 'until must not be before from'))
            : E.right(next);
        }),
      ),

    end: (scheduleId, lastDate) =>
      change(
        scheduleId,
        activeOnly((s) => {
          const last = lastDate ?? localDate(deps.clock(), s.timeZone);
          // Ending never extends: an earlier `until` stays.
          const until = s.until !== null && s.until < last ? s.until : last;
          return E.right({ ...s, until, status: 'ENDED' });
        }),
      ),

    skipDate: (scheduleId, date) =>
      change(
        scheduleId,
        activeOnly((s) =>
          E.right({
            ...s,
            skipDates: [...new Set([...s.skipDates, date])].sort(),
            extraDates: s.extraDates.filter((d) => d !== date),
          }),
        ),
      ),

    addDate: (scheduleId, date) =>
      change(
        scheduleId,
        activeOnly((s) =>
          E.right({
            ...s,
            extraDates: [...new Set([...s.extraDates, date])].sort(),
            skipDates: s.skipDates.filter((d) => d !== date),
          }),
        ),
      ),

    materialiseAll: () => materialiseWhere(() => true),
    materialiseClass: (classId) => materialiseWhere((s) => s.classId === classId),
  };
};
