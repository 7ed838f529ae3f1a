import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { isUuid } from '../../src/domain/codec.js';
import type { ConflictRecordFull, ConflictSide } from '../../src/rules/projections.js';
import { conflictAuditKey } from '../../src/sync/projector.js';

const side = (eventId: string, role: string, serverTimestamp: string): ConflictSide => ({
  eventId,
  userId: `${role}-user`,
  role,
  deviceId: null,
  clientTimestamp: '2026-11-26T10:00:00.000Z',
  serverTimestamp,
  change: { type: 'STUDENT_FIELD_SET', field: 'allergies' },
});

const conflict = (overrides: Partial<ConflictRecordFull> = {}): ConflictRecordFull => ({
  aspect: 'student:s-1:allergies',
  kind: 'student',
  subjectId: 's-1',
  policy: 'ADMIN_PRECEDENCE',
  winner: side('11111111-1111-4111-8111-111111111111', 'ADMIN', '2026-11-26T12:00:00.000Z'),
  loser: side('22222222-2222-4222-8222-222222222222', 'CHAMADOR', '2026-11-26T12:00:05.000Z'),
  detectedAt: '2026-11-26T12:00:05.000Z',
  ...overrides,
});

describe('the audit key of a conflict decision', () => {
  it('is the same for the same decision, whichever copy of it is keyed', () => {
    const key = conflictAuditKey(conflict());
    expect(conflictAuditKey(structuredClone(conflict()))).to.deep.equal(key);
    expect(isUuid(key.auditId)).to.equal(true);
    expect(key.at).to.equal('2026-11-26T12:00:05.000Z');
  });

  it('keeps milliseconds of a finer server time, as the log stores them', () => {
    expect(conflictAuditKey(conflict({ detectedAt: '2026-11-26T12:00:05.123456Z' })).at).to.equal(
      '2026-11-26T12:00:05.123Z',
    );
  });

  const base = conflictAuditKey(conflict()).auditId;
  const rows: ReadonlyArray<[string, Partial<ConflictRecordFull>]> = [
    ['another winner', { winner: side(randomUUID(), 'ADMIN', '2026-11-26T12:00:00.000Z') }],
    ['another loser', { loser: side(randomUUID(), 'CHAMADOR', '2026-11-26T12:00:05.000Z') }],
    ['another policy', { policy: 'LAST_WRITER_WINS' }],
    ['another aspect', { aspect: 'student:s-1:specialNeeds' }],
  ];
  for (const [what, overrides] of rows) {
    it(`differs for ${what}: a changed decision is a new entry`, () => {
      expect(conflictAuditKey(conflict(overrides)).auditId).not.to.equal(base);
    });
  }
});
