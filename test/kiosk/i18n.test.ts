/** The kiosk's labels built from server values: what a volunteer reads at the check-out desk. */
import { expect } from 'chai';
import { type Lang, pickupAdultLabel } from '../../src/kiosk/app/i18n.js';

describe('kiosk: the label of an adult who may collect a child', () => {
  const cases: ReadonlyArray<[Lang, string, 'N1' | 'N2' | 'N3', string]> = [
    // The guardian's relationship is the server's code; the level already says it.
    ['pt-BR', 'guardian', 'N1', 'Maria (Responsável)'],
    ['en', 'guardian', 'N1', 'Maria (Guardian)'],
    // A grant's relationship is what the admin typed, shown as typed.
    ['pt-BR', 'avó', 'N2', 'Maria — avó (Autorizado)'],
    ['en', 'avó', 'N2', 'Maria — avó (Authorised adult)'],
    ['pt-BR', 'tia', 'N3', 'Maria — tia (Autorização temporária)'],
    ['pt-BR', '  ', 'N2', 'Maria (Autorizado)'],
  ];
  for (const [lang, relationship, level, expected] of cases) {
    it(`${lang}, ${JSON.stringify(relationship)}, ${level} → ${expected}`, () => {
      expect(pickupAdultLabel(lang, { name: 'Maria', relationship, level })).to.equal(expected);
    });
  }
});
