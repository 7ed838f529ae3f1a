/** Gathers what `rules/roster.ts` needs from the stores: the roster as it should be right now. */
import type { PickupService } from '../attendance/pickupService.js';
import { dayKey } from '../crypto/dayKeys.js';
import type { AspectDoc } from '../domain/projection.js';
import type { RosterDoc } from '../domain/roster.js';
import { utcDay } from '../rules/checkin.js';
import type { AspectProjection } from '../rules/projections.js';
import { aspectRosterDoc, rosterDocs } from '../rules/roster.js';
import { photosAllowed } from '../rules/students.js';
import type { CheckinStore } from '../store/checkins.js';
import type { ClassStore } from '../store/classes.js';
import { type ProjectionStore, projectionOfDoc } from '../store/projections.js';
import type { StudentStore } from '../store/students.js';
import type { RosterContext } from '../sync/rosterProjector.js';
import type { StudentDirectory } from '../sync/studentDirectory.js';

/** Today and the next two UTC days: the days a tablet may work offline for (as the day keys). */
export const ROSTER_DAYS = 3;
const DAY_MS = 86_400_000;

export interface WantedRoster {
  readonly docs: ReadonlyArray<RosterDoc>;
  readonly context: RosterContext;
}

export const rosterWanted =
  (deps: {
    readonly students: StudentStore;
    readonly directory: StudentDirectory;
    readonly pickups: PickupService;
    readonly classes: ClassStore;
    readonly checkins: CheckinStore;
    readonly projections: ProjectionStore;
    readonly clock: () => Date;
  }) =>
  async (): Promise<WantedRoster> => {
    const now = deps.clock();
    const days = Array.from({ length: ROSTER_DAYS }, (_, i) => utcDay(new Date(now.getTime() + i * DAY_MS)));
    const first = days[0] ?? utcDay(now);
    const last = days[days.length - 1] ?? first;
    // The directory holds every student record, kept current by the change feed that triggers this pass.
    const students = deps.directory.all();
    const adults = await deps.pickups.allowedAdultsOfAll(students.filter((s) => s.status === 'ACTIVE'));
    const secret = await deps.checkins.secret(now.toISOString());
    // Events of a session are dated by the device's clock: read a day either side of the key days.
    const from = utcDay(new Date(Date.parse(first) - DAY_MS));
    const to = utcDay(new Date(Date.parse(last) + DAY_MS));
    // Only version and state of each aspect are kept, a page at a time.
    const aspects: Array<{ version: string | null; state: AspectProjection['state'] }> = [];
    const keep = (doc: AspectDoc) => {
      const p = projectionOfDoc(doc);
      if (p !== undefined) aspects.push({ version: p.version, state: p.state });
    };
    await deps.projections.eachAspectByDay('checkin', from, to, keep);
    await deps.projections.eachAspectByDay('attendance', from, to, keep);
    const sessions = (await deps.classes.listSessions()).filter((s) => days.includes(s.date));
    const docs = rosterDocs({
      students,
      photosAllowed: (id) => photosAllowed(deps.directory.activeConsents(id)),
      adults,
      classes: await deps.classes.listClasses(),
      sessions,
      dayKeys: days.map((day) => ({ day, key: Buffer.from(dayKey(secret, day)).toString('base64url') })),
      aspects,
    });
    return {
      docs,
      context: {
        sessionIds: new Set(sessions.map((s) => s.sessionId)),
        activeIds: new Set(students.filter((s) => s.status === 'ACTIVE').map((s) => s.studentId)),
      },
    };
  };

/** The roster documents of some check-in and attendance aspects (named as aspects), in `context`. */
export const rosterForAspects =
  (deps: { readonly projections: ProjectionStore }) =>
  async (aspects: ReadonlyArray<string>, context: RosterContext): Promise<RosterDoc[]> => {
    const projected = await deps.projections.project(aspects);
    return [...projected.values()].flatMap((p) => {
      const doc = aspectRosterDoc(
        { version: p.version, state: p.state },
        context.sessionIds,
        context.activeIds,
      );
      return doc === undefined ? [] : [doc];
    });
  };
