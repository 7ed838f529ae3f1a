import { expect } from 'chai';
import { aspectView, type LocalCheckinEvent, openCheckin } from '../../src/kiosk/app/checkinState.js';
import type { RosterCheckinDoc } from '../../src/kiosk/app/rosterIndex.js';

const local = (
  eventId: string,
  type: LocalCheckinEvent['type'],
  checkInId: string,
  clientTimestamp: string,
): LocalCheckinEvent => ({ eventId, type, sessionId: 'S', studentId: 'K', checkInId, clientTimestamp });

const roster = (version: string | null, checkins: RosterCheckinDoc['checkins']): RosterCheckinDoc => ({
  _id: 'checkin:S:K',
  docType: 'rosterCheckin',
  sessionId: 'S',
  studentId: 'K',
  version,
  checkins,
});

const inEvent = local('e1', 'CHECK_IN', 'c1', '2026-11-26T10:00:00.000Z');
const outEvent = local('e2', 'CHECK_OUT', 'c1', '2026-11-26T11:00:00.000Z');

describe("kiosk: a child's check-in state, the roster with the tablet's own events over it", () => {
  it('shows an offline check-in as open and pending, and bases the next change on it', () => {
    const view = aspectView(undefined, [inEvent], new Set());
    expect(openCheckin(view)).to.include({ checkInId: 'c1', status: 'CHECKED_IN', pending: true });
    expect(view.version).to.equal('e1');
  });

  it('chains an offline check-out on the offline check-in', () => {
    const view = aspectView(undefined, [outEvent, inEvent], new Set());
    expect(openCheckin(view)).to.equal(undefined);
    expect(view.checkins[0]).to.include({ status: 'CHECKED_OUT', pending: true });
    expect(view.version).to.equal('e2');
  });

  it("takes the roster's word once it names the check-in", () => {
    const pulled = roster('e1', [
      {
        checkInId: 'c1',
        status: 'CHECKED_IN',
        checkedInAt: inEvent.clientTimestamp,
        checkedOutAt: null,
        emergency: false,
      },
    ]);
    const view = aspectView(pulled, [inEvent], new Set());
    expect(view.checkins[0]).to.include({ status: 'CHECKED_IN', pending: false });
    expect(view.version).to.equal('e1');
  });

  it('shows a check-in that lost a conflict as superseded, and ignores a check-out built on it', () => {
    const pulled = roster('admin-event', [
      {
        checkInId: 'c1',
        status: 'SUPERSEDED',
        checkedInAt: inEvent.clientTimestamp,
        checkedOutAt: null,
        emergency: false,
      },
    ]);
    const view = aspectView(pulled, [inEvent, outEvent], new Set());
    expect(view.checkins[0]).to.include({ status: 'SUPERSEDED', pending: false });
    expect(openCheckin(view)).to.equal(undefined);
    expect(view.version).to.equal('admin-event');
  });

  it("shows an offline emergency check-out as one, and the roster's emergency flag once pulled", () => {
    const emergency = local('e3', 'EMERGENCY_CHECKOUT', 'c1', '2026-11-26T10:30:00.000Z');
    const offline = aspectView(undefined, [inEvent, emergency], new Set());
    expect(offline.checkins[0]).to.include({ status: 'CHECKED_OUT', emergency: true, pending: true });
    const pulled = roster('admin-emergency', [
      {
        checkInId: 'c1',
        status: 'CHECKED_OUT',
        checkedInAt: inEvent.clientTimestamp,
        checkedOutAt: '2026-11-26T10:30:00.000Z',
        emergency: true,
      },
    ]);
    // This tablet's own check-out lost to an ADMIN's emergency check-out: the roster's outcome shows.
    const lost = aspectView(pulled, [inEvent, outEvent], new Set());
    expect(lost.checkins[0]).to.include({
      status: 'CHECKED_OUT',
      emergency: true,
      checkedOutAt: '2026-11-26T10:30:00.000Z',
      pending: false,
    });
    expect(lost.version).to.equal('admin-emergency');
  });

  it('forgets events the server refused', () => {
    const view = aspectView(undefined, [inEvent], new Set(['e1']));
    expect(view.checkins).to.deep.equal([]);
    expect(view.version).to.equal(null);
  });
});
