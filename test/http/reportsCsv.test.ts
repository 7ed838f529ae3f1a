import { expect } from 'chai';
import { attendanceCsv } from '../../src/http/routes/reportsRoutes.js';
import { neutralise } from '../../src/lib/csvFormulas.js';

const row = (displayName: string) => ({
  date: '2026-11-26',
  sessionId: null,
  classId: 'class-a',
  studentId: 'student-1',
  displayName,
  mark: 'PRESENT' as const,
  present: true,
  markedBy: null,
  markedAt: null,
  checkedInAt: null,
  checkedOutAt: null,
});

const csvOf = (names: ReadonlyArray<string>): string =>
  attendanceCsv({
    from: '2026-11-26',
    to: '2026-11-26',
    rows: names.map(row),
    totals: { rows: names.length, present: names.length, absent: 0 },
  });

describe("reports: the server's CSV escapes formulas by the kiosk's rule", () => {
  it('escapes every cell the shared rule escapes, leading blanks and full-width signs included', () => {
    for (const attack of ['=Carla', '@SUM(A1)', '  =1+1', '\u00a0=1', '\uff1d1+1', '\uff20SUM(A1)']) {
      expect(neutralise(attack)).to.equal(`'${attack}`);
      expect(csvOf([attack]), JSON.stringify(attack)).to.contain(`,'${attack},`);
    }
  });

  it('leaves ordinary names and signs after the first character alone', () => {
    for (const plain of ['João Pedro Araújo', 'Ana-Lúcia', 'a=b']) {
      expect(csvOf([plain]), plain).to.contain(`,${plain},`);
    }
  });
});
