/**
 * Retention under the LGPD (decision 0045): the ADMIN's periods, what the next run would end (the
 * preview) and the run itself. Both ask the pure rule (`rules/retention.ts`) over the same listing, so
 * the preview is what a run started at that moment would end.
 *
 * A run, in order, each step idempotent and its marker written last, so a run cut short (a crash, a
 * stop) leaves nothing half ended that the next run does not find and finish:
 * 1. waits until the event pipeline has projected every stored event (after a restore, its replay),
 *    since check-ins and marks are found through their projections;
 * 2. erases the stored photos of deleted students;
 * 3. ends the check-ins and marks past the attendance period, a hundred aspects at a time: their
 *    records, then their events (retired), then conflict records and the aspects last;
 * 4. deletes the pages past their period;
 * 5. anonymises the deleted students past their period: their events' payloads, the projections of
 *    those events, their check-ins' adults, consents' names, pickup adults, their pages, and the
 *    record last (its `anonymisedAt` is what says the student is done). After steps 3 and 4, so what
 *    they end is counted there and not rewritten here first;
 * 6. removes the subjects of audit entries past the audit period, then moves the audit checkpoint;
 * 7. purges the idempotency records past their 24 hours, as the minute purge does (decision 0012),
 *    so that after a run nothing past its period is left anywhere.
 */
import * as E from 'fp-ts/lib/Either.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { AspectDoc } from '../domain/projection.js';
import {
  DEFAULT_RETENTION,
  IDEMPOTENCY_HOURS,
  MAX_PREVIEW_IDS,
  PERIOD_RULES,
  RETENTION_SETTINGS,
  type RetentionBody,
  type RetentionConfig,
  type RetentionCounts,
  type RetentionPeriods,
  type RetentionPreview,
} from '../domain/retention.js';
import {
  anonymisedAuditDetails,
  anonymisedCheckinFields,
  anonymisedConsentFields,
  anonymisedPayload,
  anonymisedStudent,
  aspectEndsNow,
  auditEntryAnonymisedNow,
  type Cutoffs,
  cutoffsOf,
  deletionTimeOf,
  isAnonymisedAudit,
  pageEndsNow,
  photoErasedNow,
  studentAnonymisedNow,
} from '../rules/retention.js';
import type { AuditRetention } from '../store/auditRetention.js';
import type { CheckinStore } from '../store/checkins.js';
import type { ConsentStore } from '../store/consents.js';
import type { EventStore } from '../store/events.js';
import type { PageStore } from '../store/pages.js';
import type { PhotoStore } from '../store/photos.js';
import type { PickupStore } from '../store/pickups.js';
import type { ProjectionRetention, ProjectionStore } from '../store/projections.js';
import type { RetentionConfigStore } from '../store/retentionConfig.js';
import { type StudentStore, toRecord } from '../store/students.js';
import type { SubjectRecords } from '../store/subjectRecords.js';
import type { EventPipeline } from '../sync/pipelineRuntime.js';
import type { StudentDirectory } from '../sync/studentDirectory.js';

export interface RetentionDeps {
  readonly config: RetentionConfigStore;
  readonly students: StudentStore;
  readonly directory: Pick<StudentDirectory, 'upsertStudent'>;
  readonly photos: Pick<PhotoStore, 'remove' | 'studentsWithPhotos'>;
  readonly events: Pick<EventStore, 'anonymise' | 'retire'>;
  readonly subjects: Pick<SubjectRecords, 'eventsOf' | 'checkinsOf'>;
  readonly consents: Pick<ConsentStore, 'listForSubject' | 'anonymise'>;
  readonly pickups: Pick<PickupStore, 'removeOfStudent'>;
  readonly checkins: Pick<CheckinStore, 'anonymiseRecords' | 'removeRecords'>;
  readonly pages: Pick<PageStore, 'listAll' | 'ofStudent' | 'remove'>;
  readonly projections: Pick<ProjectionStore, 'eachAspectByDay'> & ProjectionRetention;
  readonly audit: AuditRetention;
  /** The idempotency ledger's own purge (`src/jobs/idempotencyPurge.ts` runs it every minute). */
  readonly idempotency: { purgeExpired(now: number): Promise<number> };
  readonly pipeline: Pick<EventPipeline, 'catchUp'>;
  readonly clock: () => Date;
  /** When the job runs next (`RETENTION_AT`), for the preview. */
  readonly nextRunAt: (now: Date) => Date;
}

/** A run asked to stop between two of its steps (the service is stopping). */
export class RetentionStopped extends Error {
  override readonly name = 'RetentionStopped';
  constructor() {
    super('the retention run stopped before its end; the next run goes on from where it was');
  }
}

export interface RetentionService {
  config(): Promise<RetentionConfig>;
  saveConfig(body: RetentionBody): Promise<E.Either<ApiError, RetentionConfig>>;
  preview(): Promise<RetentionPreview>;
  /** One run at the clock's now; `signal` stops it between two steps (and its wait for the pipeline). */
  run(signal?: AbortSignal): Promise<RetentionCounts>;
}

/** A check-in or attendance aspect past its period, with what ends with it. */
interface EndedAspect {
  readonly aspect: string;
  readonly eventIds: ReadonlyArray<string>;
  readonly checkInIds: ReadonlyArray<string>;
}

interface Plan {
  readonly studentIds: ReadonlyArray<string>;
  readonly photoStudentIds: ReadonlyArray<string>;
  readonly checkins: ReadonlyArray<EndedAspect>;
  readonly marks: ReadonlyArray<EndedAspect>;
  readonly pages: ReadonlyArray<{ readonly docId: string; readonly pageId: string }>;
}

/** Students read at once while the run looks for deleted ones. */
const STUDENT_PAGE = 500;

const endedAspect = (doc: AspectDoc): EndedAspect => ({
  aspect: doc.aspect,
  eventIds: doc.events.map((e) => e.eventId),
  checkInIds: [
    ...new Set(
      doc.events.flatMap((e) =>
        e.type === 'CHECK_IN' && typeof e.payload.checkInId === 'string' ? [e.payload.checkInId] : [],
      ),
    ),
  ],
});

/** `checkin:<sessionId>:<studentId>` → its two ids. */
const checkinAspectIds = (aspect: string): { sessionId: string; studentId: string } => {
  const [, sessionId = '', studentId = ''] = aspect.split(':');
  return { sessionId, studentId };
};

/**
 * Aspects ended together: each step of a batch is a read and a write of each database it touches,
 * where one aspect at a time cost about ten round trips per check-in (23 ms each in the benchmark).
 */
const ASPECT_BATCH = 100;

const inBatches = <A>(items: ReadonlyArray<A>): A[][] => {
  const out: A[][] = [];
  for (let i = 0; i < items.length; i += ASPECT_BATCH) out.push(items.slice(i, i + ASPECT_BATCH));
  return out;
};

/** Resolves when `work` does, or as soon as `signal` aborts (what `work` does later is ignored). */
const untilAborted = (work: Promise<unknown>, signal: AbortSignal): Promise<unknown> =>
  signal.aborted
    ? Promise.resolve()
    : Promise.race([
        work,
        new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true })),
      ]);

const listed = (ids: ReadonlyArray<string>) => ({ count: ids.length, ids: ids.slice(0, MAX_PREVIEW_IDS) });

export const configView = (periods: RetentionPeriods, updatedAt: string | null): RetentionConfig => ({
  ...periods,
  idempotencyHours: IDEMPOTENCY_HOURS,
  updatedAt,
  periods: RETENTION_SETTINGS.map((setting) => ({
    setting,
    days: periods[setting],
    ...PERIOD_RULES[setting],
  })),
});

export const retentionService = (deps: RetentionDeps): RetentionService => {
  const periodsNow = async (): Promise<RetentionPeriods> =>
    (await deps.config.get())?.periods ?? DEFAULT_RETENTION;

  const plan = async (cutoffs: Cutoffs): Promise<Plan> => {
    const studentIds: string[] = [];
    const statusOf = new Map<string, 'ACTIVE' | 'DELETED'>();
    await deps.students.eachPage(STUDENT_PAGE, (page) => {
      for (const s of page) {
        statusOf.set(s.studentId, s.status);
        const facts = {
          status: s.status,
          deletedAt: deletionTimeOf(s),
          anonymisedAt: s.anonymisedAt ?? null,
        };
        if (studentAnonymisedNow(facts, cutoffs)) studentIds.push(s.studentId);
      }
    });
    const photoStudentIds = (await deps.photos.studentsWithPhotos()).filter((id) => {
      const status = statusOf.get(id);
      return status !== undefined && photoErasedNow({ status });
    });
    const aspectsOf = async (kind: 'checkin' | 'attendance'): Promise<EndedAspect[]> => {
      const out: EndedAspect[] = [];
      await deps.projections.eachAspectByDay(kind, '', cutoffs.attendanceBeforeDay, (doc) => {
        if (aspectEndsNow(doc.day, cutoffs)) out.push(endedAspect(doc));
      });
      return out;
    };
    const pages = (await deps.pages.listAll())
      .filter((p) => pageEndsNow(p.sentAt, cutoffs))
      .map((p) => ({ docId: p._id, pageId: p.pageId }));
    return {
      studentIds,
      photoStudentIds,
      checkins: await aspectsOf('checkin'),
      marks: await aspectsOf('attendance'),
      pages,
    };
  };

  const auditPending = async (
    cutoffs: Cutoffs,
    visit: (entries: ReadonlyArray<{ readonly _id: string; readonly audit_id: string }>) => Promise<void>,
  ): Promise<void> =>
    deps.audit.eachBefore(cutoffs.auditBefore, (page) =>
      visit(
        page.filter((e) =>
          auditEntryAnonymisedNow(
            { created_at: e.created_at, anonymised: isAnonymisedAudit(e.details) },
            cutoffs,
          ),
        ),
      ),
    );

  const anonymiseStudent = async (studentId: string, at: string): Promise<boolean> => {
    const events = await deps.subjects.eventsOf(studentId);
    const eventIds = events.map((e) => e.eventId);
    await deps.events.anonymise(eventIds, anonymisedPayload, at);
    const aspects = [...new Set(events.flatMap((e) => (e.aspect === undefined ? [] : [e.aspect])))];
    await deps.projections.anonymiseAspects(aspects, anonymisedPayload);
    // What the admission rule found on arrival names the child's age; nothing derives it again.
    await deps.projections.removeAdmissionExceptions(eventIds);
    await deps.checkins.anonymiseRecords(
      (await deps.subjects.checkinsOf(studentId)).map((c) => c.checkInId),
      anonymisedCheckinFields,
    );
    await deps.consents.anonymise(
      (await deps.consents.listForSubject('STUDENT', studentId)).map((c) => c.consentId),
      anonymisedConsentFields,
    );
    await deps.pickups.removeOfStudent(studentId);
    await deps.pages.remove((await deps.pages.ofStudent(studentId)).map((p) => p._id));
    await deps.photos.remove(studentId);
    // The record last: its `anonymisedAt` tells the next run this student is done.
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const current = await deps.students.get(studentId);
      if (current === undefined || (current.anonymisedAt ?? null) !== null) return false;
      const updated = await deps.students.update(current, anonymisedStudent(toRecord(current), at));
      if (updated === 'CONFLICT') continue;
      deps.directory.upsertStudent(updated);
      return true;
    }
    throw new Error('the student record kept changing during its anonymisation');
  };

  return {
    async config() {
      const stored = await deps.config.get();
      return stored === undefined
        ? configView(DEFAULT_RETENTION, null)
        : configView(stored.periods, stored.updatedAt);
    },

    async saveConfig(body) {
      const at = deps.clock().toISOString();
      const saved = await deps.config.save(body, at);
      if (saved === 'CONFLICT')
        return E.left(apiError('CONFLICT', 'The retention configuration kept changing; try again.'));
      return E.right(configView(body, at));
    },

    async preview() {
      const now = deps.clock();
      const periods = await periodsNow();
      const cutoffs = cutoffsOf(periods, now);
      const p = await plan(cutoffs);
      // Counted as they are read, the first ids kept: on a first run the range may be years long.
      const auditIds: string[] = [];
      let auditCount = 0;
      await auditPending(cutoffs, async (entries) => {
        for (const e of entries) if (auditIds.length < MAX_PREVIEW_IDS) auditIds.push(e.audit_id);
        auditCount += entries.length;
      });
      return {
        asOf: now.toISOString(),
        nextRunAt: deps.nextRunAt(now).toISOString(),
        periods,
        cutoffs,
        studentsAnonymised: listed(p.studentIds),
        photosErased: listed(p.photoStudentIds),
        checkInsDeleted: listed(p.checkins.flatMap((a) => a.checkInIds)),
        marksDeleted: listed(p.marks.map((a) => a.aspect)),
        pagesDeleted: listed(p.pages.map((x) => x.pageId)),
        auditEntriesAnonymised: { count: auditCount, ids: auditIds },
      };
    },

    async run(signal = new AbortController().signal) {
      const step = () => {
        if (signal.aborted) throw new RetentionStopped();
      };
      // The pipeline stops after this job does: a stop must not wait for a replay to end.
      await untilAborted(deps.pipeline.catchUp(), signal);
      step();
      const now = deps.clock();
      const at = now.toISOString();
      const cutoffs = cutoffsOf(await periodsNow(), now);
      const p = await plan(cutoffs);
      let photosErased = 0;
      for (const id of p.photoStudentIds) {
        step();
        if (await deps.photos.remove(id)) photosErased += 1;
      }
      let checkInsDeleted = 0;
      for (const batch of inBatches(p.checkins)) {
        step();
        checkInsDeleted += await deps.checkins.removeRecords(
          batch.flatMap((a) => a.checkInIds),
          batch.map((a) => checkinAspectIds(a.aspect)),
        );
        await deps.events.retire(
          batch.flatMap((a) => a.eventIds),
          at,
        );
        await deps.projections.retireAspects(batch.map((a) => a.aspect));
      }
      let marksDeleted = 0;
      for (const batch of inBatches(p.marks)) {
        step();
        await deps.events.retire(
          batch.flatMap((a) => a.eventIds),
          at,
        );
        marksDeleted += await deps.projections.retireAspects(batch.map((a) => a.aspect));
      }
      step();
      const pagesDeleted = await deps.pages.remove(p.pages.map((x) => x.docId));
      let studentsAnonymised = 0;
      for (const id of p.studentIds) {
        step();
        if (await anonymiseStudent(id, at)) studentsAnonymised += 1;
      }
      let auditEntriesAnonymised = 0;
      await auditPending(cutoffs, async (entries) => {
        step();
        auditEntriesAnonymised += await deps.audit.anonymise(entries, (d) => anonymisedAuditDetails(d, at));
      });
      await deps.audit.markDone(cutoffs.auditBefore);
      step();
      const idempotencyRecordsDeleted = await deps.idempotency.purgeExpired(now.getTime());
      return {
        studentsAnonymised,
        photosErased,
        checkInsDeleted,
        marksDeleted,
        pagesDeleted,
        auditEntriesAnonymised,
        idempotencyRecordsDeleted,
      };
    },
  };
};
