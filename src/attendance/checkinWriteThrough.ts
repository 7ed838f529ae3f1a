/**
 * The check-in records follow the check-in events: after the pipeline resolves a child's check-in
 * aspect for a session, each check-in the projection holds is written to its record (created for a
 * check-in made offline, with the daily code the device printed), and a check-in that lost a conflict
 * is marked SUPERSEDED. Losers go first, so at no point do two records of one child and session
 * read as open.
 */
import { codeFor } from '../crypto/dayKeys.js';
import type { AspectProjection } from '../rules/projections.js';
import type { CheckinStore } from '../store/checkins.js';

export const checkinWriteThrough = (deps: {
  readonly checkins: CheckinStore;
  readonly clock: () => Date;
}): ((p: AspectProjection) => Promise<void>) => {
  let secret: Uint8Array | undefined;
  return async (p) => {
    if (p.kind !== 'checkin') return;
    const state = p.state?.kind === 'checkin' ? p.state : undefined;
    const standing = new Set(state?.checkins.map((c) => c.checkInId));
    for (const e of p.events) {
      if (e.change.type !== 'CHECK_IN' || standing.has(e.change.checkInId)) continue;
      const lost = await deps.checkins.get(e.change.checkInId);
      if (lost === undefined || lost.status === 'SUPERSEDED') continue;
      const { _id: _i, _rev: _r, docType: _d, failedAttempts: _f, ...rest } = lost;
      await deps.checkins.applyProjected({ ...rest, status: 'SUPERSEDED' });
    }
    if (state === undefined) return;
    secret ??= await deps.checkins.secret(deps.clock().toISOString());
    for (const r of state.checkins) {
      await deps.checkins.applyProjected({
        checkInId: r.checkInId,
        studentId: state.studentId,
        sessionId: state.sessionId,
        code: codeFor(secret, state.studentId, new Date(r.checkedInAt)),
        checkedInAt: r.checkedInAt,
        checkedInBy: r.checkedInBy,
        status: r.status,
        checkedOutAt: r.checkedOutAt,
        checkedOutBy: r.checkedOutBy,
        pickupPerson: r.pickupPerson,
        emergency: r.emergency,
        justification: r.justification,
      });
    }
  };
};
