import { expect } from 'chai';
import { weeklyAttendance, weekOf } from '../../src/rules/weeklyAttendance.js';

describe('weekly attendance (the office chart and table)', () => {
  const cases: ReadonlyArray<readonly [string, string]> = [
    ['2026-11-22', '2026-11-22'], // a Sunday is its own week
    ['2026-11-25', '2026-11-22'], // the Wednesday after it
    ['2026-11-28', '2026-11-22'], // the Saturday closes it
    ['2026-11-29', '2026-11-29'], // the next Sunday opens another
    ['2027-01-02', '2026-12-27'], // across the year's end
  ];
  for (const [date, week] of cases)
    it(`${date} belongs to the week of ${week}`, () => expect(weekOf(date)).to.equal(week));

  it('counts present and absent per week and class, sorted, leaving classless rows out', () => {
    const rows = [
      { date: '2026-11-25', classId: 'b', present: true },
      { date: '2026-11-22', classId: 'a', present: true },
      { date: '2026-11-22', classId: 'a', present: false },
      { date: '2026-11-29', classId: 'a', present: true },
      { date: '2026-11-23', classId: null, present: true },
      { date: '2026-11-22', classId: 'b', present: false },
    ];
    expect(weeklyAttendance(rows)).to.deep.equal([
      { week: '2026-11-22', classId: 'a', present: 1, absent: 1 },
      { week: '2026-11-22', classId: 'b', present: 1, absent: 1 },
      { week: '2026-11-29', classId: 'a', present: 1, absent: 0 },
    ]);
    expect(weeklyAttendance([])).to.deep.equal([]);
  });
});
