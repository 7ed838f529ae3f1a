import { expect } from 'chai';
import { keepDayKeys } from '../../src/kiosk/app/dayKeys.js';

describe('kiosk: day keys remembered a day longer than the roster keeps them', () => {
  it("keeps yesterday's key after UTC midnight, so a late check-out can still be verified", () => {
    // Pulled at 20:30 in Brazil (23:30 UTC on the 25th), then again at 21:30 (00:30 UTC on the 26th).
    const first = keepDayKeys(
      new Map(),
      new Map([
        ['2026-11-25', 'k25'],
        ['2026-11-26', 'k26'],
        ['2026-11-27', 'k27'],
      ]),
      '2026-11-25',
    );
    const second = keepDayKeys(
      first,
      new Map([
        ['2026-11-26', 'k26'],
        ['2026-11-27', 'k27'],
        ['2026-11-28', 'k28'],
      ]),
      '2026-11-26',
    );
    expect([...second]).to.deep.equal([
      ['2026-11-25', 'k25'],
      ['2026-11-26', 'k26'],
      ['2026-11-27', 'k27'],
      ['2026-11-28', 'k28'],
    ]);
  });

  it('forgets keys older than yesterday, across a month end', () => {
    const kept = keepDayKeys(
      new Map([
        ['2026-11-29', 'old'],
        ['2026-11-30', 'k30'],
      ]),
      new Map([['2026-12-01', 'k01']]),
      '2026-12-01',
    );
    expect([...kept.keys()]).to.deep.equal(['2026-11-30', '2026-12-01']);
  });

  it("takes the server's key over a remembered one for the same day", () => {
    const kept = keepDayKeys(
      new Map([['2026-11-26', 'stale']]),
      new Map([['2026-11-26', 'fresh']]),
      '2026-11-26',
    );
    expect(kept.get('2026-11-26')).to.equal('fresh');
  });
});
