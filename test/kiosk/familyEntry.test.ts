/**
 * A scanned text entering the kiosk (decision 0052): `openFamilyFromPass` opens the family's screen
 * for a current pass, and for anything else a refusal screen naming why; the screen shown and the
 * answer agree, and nothing is written for a refusal (the kiosk it is given cannot record at all:
 * opening a family never records, only its confirm button does).
 */
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import { familyPassText, passIssuer, rosterPassHashes } from '../../src/crypto/familyPass.js';
import { openFamilyFromPass } from '../../src/kiosk/app/familyEntry.js';
import type { Screen } from '../../src/kiosk/app/kiosk.js';
import { buildRosterIndex } from '../../src/kiosk/app/rosterIndex.js';
import { rosterFamilyDocs } from '../../src/rules/roster.js';

const SECRET = new Uint8Array(32).fill(7);

const student = (studentId: string) => ({
  _id: `student:${studentId}`,
  docType: 'rosterStudent',
  studentId,
  displayName: `Criança ${studentId}`,
  classId: 'c1',
  photoRef: null,
  allergies: null,
  specialNeeds: null,
  visitor: false,
  pickup: [],
});

/** Family A's pass was replaced once; family B's child left the tablet (deleted). */
const index = buildRosterIndex([
  student('a1'),
  student('a2'),
  ...rosterFamilyDocs(
    [
      { familyKey: 'famA', studentId: 'a1', guardianName: 'Rita Prado', phoneSuffix: '5678' },
      { familyKey: 'famA', studentId: 'a2', guardianName: 'Rita Prado', phoneSuffix: '5678' },
      { familyKey: 'famB', studentId: 'b1', guardianName: 'Ana Lima', phoneSuffix: '1111' },
    ],
    {
      issuer: passIssuer(SECRET),
      hashesOf: (key) => rosterPassHashes(SECRET, key, key === 'famA' ? 1 : 0),
    },
  ),
]);

const back: Screen = {
  name: 'start',
  render: () => {
    throw new Error('no screen is drawn in these tests');
  },
};
const origin = { selfService: true, back: () => back };

describe('kiosk: a scanned text opens the family, or says why not', () => {
  const current = familyPassText(SECRET, 'famA', 1);
  const cases: ReadonlyArray<{ what: string; text: string; screen: string; outcome: string }> = [
    { what: 'the current pass', text: current, screen: 'family', outcome: 'famA' },
    {
      what: 'the same, in lower case with spaces',
      text: ` ${current.toLowerCase()} `,
      screen: 'family',
      outcome: 'famA',
    },
    {
      what: 'a replaced pass',
      text: familyPassText(SECRET, 'famA', 0),
      screen: 'family-refused',
      outcome: 'REVOKED',
    },
    {
      what: "another deployment's pass",
      text: familyPassText(new Uint8Array(32), 'famA', 1),
      screen: 'family-refused',
      outcome: 'OTHER_DEPLOYMENT',
    },
    {
      what: 'a foreign QR code',
      text: 'https://example.org/',
      screen: 'family-refused',
      outcome: 'NOT_A_PASS',
    },
    { what: 'a damaged pass', text: current.slice(0, -1), screen: 'family-refused', outcome: 'NOT_A_PASS' },
    {
      what: 'a pass with one character changed',
      text: `${current.slice(0, -1)}${current.endsWith('A') ? 'B' : 'A'}`,
      screen: 'family-refused',
      outcome: 'UNKNOWN_PASS',
    },
    {
      what: 'a family with no child left on the tablet',
      text: familyPassText(SECRET, 'famB', 0),
      screen: 'family-refused',
      outcome: 'NO_CHILDREN',
    },
  ];
  for (const { what, text, screen, outcome } of cases) {
    it(`${what}: ${screen}, ${outcome}`, async () => {
      const shown: string[] = [];
      const got = await openFamilyFromPass(
        { index: () => index, show: (s) => shown.push(s.name) },
        text,
        origin,
      );
      expect(shown).to.deep.equal([screen]);
      expect(E.isRight(got) ? got.right : got.left).to.equal(outcome);
    });
  }
});
