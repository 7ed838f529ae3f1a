/** Dates in the date fields (office and kiosk): dd/mm/aaaa or yyyy-mm-dd typed, ISO dates sent. */
import { expect } from 'chai';
import { type DateLang, formatDate, formatInstant, parseDate } from '../../src/client/dates.js';

describe('client: dates typed and shown', () => {
  const parses: ReadonlyArray<[DateLang, string, string | undefined]> = [
    ['pt-BR', '24/12/2026', '2026-12-24'],
    ['pt-BR', ' 5/3/2019 ', '2019-03-05'],
    ['pt-BR', '29/02/2024', '2024-02-29'],
    // Not on the calendar, or not the day first.
    ['pt-BR', '29/02/2026', undefined],
    ['pt-BR', '31/04/2026', undefined],
    ['pt-BR', '00/01/2026', undefined],
    ['pt-BR', '12/13/2026', undefined],
    ['pt-BR', '2026-12-24', undefined],
    ['pt-BR', '24/12/26', undefined],
    ['pt-BR', '24-12-2026', undefined],
    ['pt-BR', '', undefined],
    ['en', '2026-12-24', '2026-12-24'],
    ['en', '2019-3-5', '2019-03-05'],
    ['en', '2026-02-30', undefined],
    ['en', '12/24/2026', undefined],
    ['en', '24/12/2026', undefined],
  ];
  for (const [lang, typed, iso] of parses)
    it(`${lang}: "${typed}" ${iso === undefined ? 'is no date' : `is ${iso}`}`, () =>
      expect(parseDate(typed, lang)).to.equal(iso));

  it('shows an ISO date as dd/mm/aaaa in Portuguese and as yyyy-mm-dd in English, and reads it back', () => {
    expect(formatDate('2026-03-04', 'pt-BR')).to.equal('04/03/2026');
    expect(formatDate('2026-03-04', 'en')).to.equal('2026-03-04');
    for (const lang of ['pt-BR', 'en'] as const)
      expect(parseDate(formatDate('2026-03-04', lang), lang)).to.equal('2026-03-04');
  });

  it('shows what is not an ISO date as it came', () => {
    expect(formatDate('soon', 'pt-BR')).to.equal('soon');
  });

  it("shows an instant on the office's clock as its day and time", () => {
    const at = new Date(2026, 11, 24, 9, 5);
    expect(formatInstant(at, 'pt-BR')).to.equal('24/12/2026 09:05');
    expect(formatInstant(at, 'en')).to.equal('2026-12-24 09:05');
  });
});
