/**
 * A scanned family pass checked on the tablet (decision 0049): the roster's family documents as the
 * server's full pass writes them, read by the kiosk's index, and the pass checked with WebCrypto's
 * SHA-256 (Node's `globalThis.crypto`, the same interface as the browser's), offline.
 */
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import { familyPassText, passIssuer, rosterPassHashes } from '../../src/crypto/familyPass.js';
import { checkFamilyPass } from '../../src/kiosk/app/familyPass.js';
import { buildRosterIndex } from '../../src/kiosk/app/rosterIndex.js';
import { rosterFamilyDocs } from '../../src/rules/roster.js';
import { aRosterStudent } from '../support/fixtures.js';

const SECRET = new Uint8Array(32).fill(3);

const student = (studentId: string) => aRosterStudent(studentId, `Criança ${studentId}`);

/** The roster of two families, the first with its pass revoked once. */
const roster = (students: ReadonlyArray<string>) => {
  const generations = new Map([['famA', 1]]);
  return buildRosterIndex([
    ...students.map(student),
    ...rosterFamilyDocs(
      [
        { familyKey: 'famA', studentId: 'a1', guardianName: 'Rita Prado', phoneSuffix: '5678' },
        { familyKey: 'famA', studentId: 'a2', guardianName: 'Rita Prado', phoneSuffix: '5678' },
        { familyKey: 'famB', studentId: 'b1', guardianName: 'Ana Lima', phoneSuffix: '1111' },
      ],
      {
        issuer: passIssuer(SECRET),
        hashesOf: (key) => rosterPassHashes(SECRET, key, generations.get(key) ?? 0),
      },
    ),
  ]);
};

describe('family pass at the kiosk', () => {
  it('the index holds each family and the issuer', () => {
    const index = roster(['a1', 'a2', 'b1']);
    expect([...index.families.keys()].sort()).to.deep.equal(['famA', 'famB']);
    expect(index.families.get('famA')).to.include({ guardianName: 'Rita', phoneSuffix: '5678' });
    expect(index.passIssuer).to.equal(passIssuer(SECRET));
  });

  it('checks a scanned pass offline: the current one opens the family, a replaced one is revoked', async () => {
    const index = roster(['a1', 'a2', 'b1']);
    const outcome = async (text: string) => {
      const got = await checkFamilyPass(index, text);
      return E.isRight(got) ? got.right : got.left;
    };
    expect(await outcome(familyPassText(SECRET, 'famA', 1))).to.deep.equal({
      familyKey: 'famA',
      guardianName: 'Rita',
      studentIds: ['a1', 'a2'],
    });
    expect(await outcome(familyPassText(SECRET, 'famA', 0))).to.equal('REVOKED');
    expect(await outcome(familyPassText(SECRET, 'famC', 0))).to.equal('UNKNOWN_PASS');
    expect(await outcome(familyPassText(new Uint8Array(32), 'famB', 0))).to.equal('OTHER_DEPLOYMENT');
    expect(await outcome('https://example.org/')).to.equal('NOT_A_PASS');
  });

  it('a child the tablet no longer holds is not offered; a family with none left has no children', async () => {
    const index = roster(['a2']);
    const famA = await checkFamilyPass(index, familyPassText(SECRET, 'famA', 1));
    expect(E.isRight(famA) && famA.right.studentIds).to.deep.equal(['a2']);
    expect(await checkFamilyPass(index, familyPassText(SECRET, 'famB', 0))).to.deep.equal(
      E.left('NO_CHILDREN'),
    );
  });
});
