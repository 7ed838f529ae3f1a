/** Gathers what `rules/roster.ts` needs from the stores: the roster as it should be right now. */

import { createHmac } from 'node:crypto';
import { dayKey } from '../crypto/dayKeys.js';
import type { AllowedAdult } from '../domain/pickup.js';
import type { AspectDoc } from '../domain/projection.js';
import type { RosterDoc } from '../domain/roster.js';
import type { StudentDoc } from '../domain/student.js';
import { utcDay } from '../rules/checkin.js';
import type { AspectProjection } from '../rules/projections.js';
import { aspectRosterDoc, rosterDocs } from '../rules/roster.js';
import { photosAllowed } from '../rules/students.js';
import type { CheckinStore } from '../store/checkins.js';
import type { ClassStore } from '../store/classes.js';
import { type ProjectionStore, projectionOfDoc } from '../store/projections.js';
import type { StudentStore } from '../store/students.js';
import type { RosterContext } from './rosterReconciler.js';
import type { StudentDirectory } from './studentDirectory.js';

/**
 * A guardian phone's family key: a keyed hash under the check-in secret (which never leaves the
 * server), so tablets can group siblings without holding the number, and cannot recover it from the
 * key by trying the few billion phone numbers there are.
 */
export const familyKeyOf =
  (secret: Uint8Array) =>
  (phoneDigits: string): string =>
    createHmac('sha256', secret).update(`chamada-family:${phoneDigits}`).digest('base64url').slice(0, 22);

/** Today and the next two UTC days: the days a tablet may check children in offline for. */
export const KEY_DAYS = 3;
const DAY_MS = 86_400_000;

const dayAfter = (day: string, n: number): string => utcDay(new Date(Date.parse(day) + n * DAY_MS));

export interface RosterWindow {
  /** Codes derive from the UTC day of the check-in, so the keys follow UTC days. */
  readonly keyDays: ReadonlyArray<string>;
  /**
   * Sessions are dated on the ministry's own calendar, which is a UTC day behind in the Americas in
   * the evening (21:00 in Brazil is already tomorrow in UTC) and a day ahead east of UTC in the
   * morning. The service knows no time zone, so sessions are taken a day either side of the key days:
   * wherever the tablet is, its today and next two days are inside.
   */
  readonly sessionDays: ReadonlyArray<string>;
  /** Events of a session are dated by the device's clock: a day either side of the session days. */
  readonly aspectFrom: string;
  readonly aspectTo: string;
}

export const rosterWindow = (now: Date): RosterWindow => {
  const today = utcDay(now);
  const keyDays = Array.from({ length: KEY_DAYS }, (_, i) => dayAfter(today, i));
  const sessionDays = Array.from({ length: KEY_DAYS + 2 }, (_, i) => dayAfter(today, i - 1));
  return {
    keyDays,
    sessionDays,
    aspectFrom: dayAfter(today, -2),
    aspectTo: dayAfter(today, KEY_DAYS + 1),
  };
};

export interface WantedRoster {
  readonly docs: ReadonlyArray<RosterDoc>;
  readonly context: RosterContext;
}

export const rosterWanted =
  (deps: {
    readonly students: StudentStore;
    readonly directory: StudentDirectory;
    /** Who may collect each child: the pickup service answers it (the tablets' gate checks it offline). */
    readonly pickups: {
      allowedAdultsOfAll(students: ReadonlyArray<StudentDoc>): Promise<Map<string, AllowedAdult[]>>;
    };
    readonly classes: Pick<ClassStore, 'listSessions' | 'listClasses'>;
    readonly checkins: CheckinStore;
    readonly projections: ProjectionStore;
    readonly clock: () => Date;
    /** The stored thumbnail of a child's photo by its key, as base64 (photoService). */
    readonly thumbnail?: (studentId: string, photoRef: string) => Promise<string | undefined>;
  }) =>
  async (): Promise<WantedRoster> => {
    const now = deps.clock();
    const days = rosterWindow(now);
    // The directory holds every student record, kept current by the change feed that triggers this pass.
    const students = deps.directory.all();
    const adults = await deps.pickups.allowedAdultsOfAll(students.filter((s) => s.status === 'ACTIVE'));
    const secret = await deps.checkins.secret(now.toISOString());
    // Only version and state of each aspect are kept, a page at a time.
    const aspects: Array<{ version: string | null; state: AspectProjection['state'] }> = [];
    const keep = (doc: AspectDoc) => {
      const p = projectionOfDoc(doc);
      if (p !== undefined) aspects.push({ version: p.version, state: p.state });
    };
    await deps.projections.eachAspectByDay('checkin', days.aspectFrom, days.aspectTo, keep);
    await deps.projections.eachAspectByDay('attendance', days.aspectFrom, days.aspectTo, keep);
    const sessions = (await deps.classes.listSessions()).filter((s) => days.sessionDays.includes(s.date));
    const allowed = (id: string) => photosAllowed(deps.directory.activeConsents(id));
    const thumbnails = new Map<string, { photoRef: string; data: string }>();
    const thumbnail = deps.thumbnail;
    if (thumbnail !== undefined) {
      for (const s of students) {
        const photoRef = s.photoRef;
        if (s.status !== 'ACTIVE' || photoRef === null || !allowed(s.studentId)) continue;
        const data = await thumbnail(s.studentId, photoRef);
        if (data !== undefined) thumbnails.set(s.studentId, { photoRef, data });
      }
    }
    const docs = rosterDocs({
      students,
      photosAllowed: allowed,
      thumbnails,
      familyKey: familyKeyOf(secret),
      adults,
      classes: await deps.classes.listClasses(),
      sessions,
      dayKeys: days.keyDays.map((day) => ({
        day,
        key: Buffer.from(dayKey(secret, day)).toString('base64url'),
      })),
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
