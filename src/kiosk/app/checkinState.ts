/**
 * What the desk shows for a child at a session: the roster's check-in state as last pulled from the
 * server, with this tablet's own events laid over it until the roster reflects them. The server stays
 * the judge: once a pulled document names a check-in, its status there wins (a check-in that lost a
 * conflict shows SUPERSEDED). The version a new event names as `baseVersion` is the last change this
 * tablet knows of: its own latest unreflected event, else the roster's version. Pure.
 */
import type { RosterCheckinDoc } from './rosterIndex.js';

export interface LocalCheckinEvent {
  readonly eventId: string;
  readonly type: 'CHECK_IN' | 'CHECK_OUT' | 'EMERGENCY_CHECKOUT';
  readonly sessionId: string;
  readonly studentId: string;
  readonly checkInId: string;
  readonly clientTimestamp: string;
}

export type CheckinStatus = 'CHECKED_IN' | 'CHECKED_OUT' | 'SUPERSEDED' | 'UNKNOWN';

export interface CheckinView {
  readonly checkInId: string;
  readonly status: CheckinStatus;
  readonly checkedInAt: string;
  readonly checkedOutAt: string | null;
  /** Closed by an emergency check-out (with a justification, without the code). */
  readonly emergency: boolean;
  /** Made or changed on this tablet and not yet reflected by the roster. */
  readonly pending: boolean;
}

export interface AspectView {
  readonly version: string | null;
  readonly checkins: ReadonlyArray<CheckinView>;
}

const statusOf = (s: string): CheckinStatus =>
  s === 'CHECKED_IN' || s === 'CHECKED_OUT' || s === 'SUPERSEDED' ? s : 'UNKNOWN';

const inOrder = (a: LocalCheckinEvent, b: LocalCheckinEvent): number =>
  a.clientTimestamp !== b.clientTimestamp
    ? a.clientTimestamp.localeCompare(b.clientTimestamp)
    : a.eventId.localeCompare(b.eventId);

export const aspectView = (
  roster: RosterCheckinDoc | undefined,
  local: ReadonlyArray<LocalCheckinEvent>,
  refused: ReadonlySet<string>,
): AspectView => {
  const checkins = new Map<string, CheckinView>();
  for (const c of roster?.checkins ?? []) {
    checkins.set(c.checkInId, {
      checkInId: c.checkInId,
      status: statusOf(c.status),
      checkedInAt: c.checkedInAt,
      checkedOutAt: c.checkedOutAt,
      emergency: c.emergency,
      pending: false,
    });
  }
  const known = new Set(checkins.keys());
  let version = roster?.version ?? null;
  for (const e of [...local].sort(inOrder)) {
    if (refused.has(e.eventId) || e.eventId === roster?.version) continue;
    const current = checkins.get(e.checkInId);
    if (e.type === 'CHECK_IN') {
      if (known.has(e.checkInId) || current !== undefined) continue;
      checkins.set(e.checkInId, {
        checkInId: e.checkInId,
        status: 'CHECKED_IN',
        checkedInAt: e.clientTimestamp,
        checkedOutAt: null,
        emergency: false,
        pending: true,
      });
    } else {
      // The roster's word on a check-in it has closed (or superseded) is final.
      if (current === undefined || current.status !== 'CHECKED_IN') continue;
      checkins.set(e.checkInId, {
        ...current,
        status: 'CHECKED_OUT',
        checkedOutAt: e.clientTimestamp,
        emergency: e.type === 'EMERGENCY_CHECKOUT',
        pending: true,
      });
    }
    version = e.eventId;
  }
  return {
    version,
    checkins: [...checkins.values()].sort((a, b) => a.checkedInAt.localeCompare(b.checkedInAt)),
  };
};

/** The check-in a child is in now, if any: the latest one still CHECKED_IN. */
export const openCheckin = (view: AspectView): CheckinView | undefined =>
  [...view.checkins].reverse().find((c) => c.status === 'CHECKED_IN');

/** The latest check-in, open or not, for the desk's status line. */
export const latestCheckin = (view: AspectView): CheckinView | undefined => view.checkins.at(-1);
