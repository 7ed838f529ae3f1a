/**
 * The family pass rule (decision 0049): a tablet checks a scanned pass against its roster, offline,
 * holding only hashes. Table-driven cases for each refusal, then properties over many families,
 * generations and secrets: a current pass verifies and names its family, a tampered one never
 * does, a replaced one is REVOKED, another deployment's is refused as such.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { sha256 } from '../../src/crypto/bytes.js';
import { familyPassText, passIssuer, rosterPassHashes } from '../../src/crypto/familyPass.js';
import {
  base32,
  familyGuardianName,
  firstName,
  type PassBook,
  readPassText,
  verifyFamilyPass,
} from '../../src/rules/familyPass.js';

const SECRET = new Uint8Array(32).fill(7);

/** A roster's passes for families at the given generations, as the full pass writes them. */
const bookOf = (secret: Uint8Array, families: ReadonlyArray<readonly [string, number]>): PassBook => ({
  issuer: passIssuer(secret),
  families: families.map(([familyKey, generation]) => ({
    familyKey,
    guardianName: `G ${familyKey}`,
    studentIds: [`child-of-${familyKey}`],
    ...rosterPassHashes(secret, familyKey, generation),
  })),
});

const verify = (text: string, book: PassBook, listed?: (id: string) => boolean) =>
  verifyFamilyPass(text, book, sha256, listed);

describe('family pass: reading and verifying (table)', () => {
  const book = bookOf(SECRET, [
    ['famA', 0],
    ['famB', 2],
  ]);
  const passA = familyPassText(SECRET, 'famA', 0);

  it('base32 is RFC 4648 without padding', () => {
    const table: ReadonlyArray<readonly [string, string]> = [
      ['', ''],
      ['f', 'MY'],
      ['fo', 'MZXQ'],
      ['foo', 'MZXW6'],
      ['foob', 'MZXW6YQ'],
      ['fooba', 'MZXW6YTB'],
      ['foobar', 'MZXW6YTBOI'],
    ];
    for (const [text, encoded] of table)
      expect(base32(new TextEncoder().encode(text)), text).to.equal(encoded);
  });

  it('a pass is CHAMADA:FP1, an 8-character issuer and a 26-character token, all QR-alphanumeric', () => {
    expect(passA).to.match(/^CHAMADA:FP1:[A-Z2-7]{8}:[A-Z2-7]{26}$/);
  });

  it('each outcome, by what was scanned', () => {
    const issuerOf = (text: string) => text.split(':')[2] ?? '';
    const otherIssuer = issuerOf(familyPassText(new Uint8Array(32).fill(9), 'famA', 0));
    const table: ReadonlyArray<readonly [string, string, string]> = [
      ['the current pass', passA, 'famA'],
      ['in lower case, with spaces around', `  ${passA.toLowerCase()}\n`, 'famA'],
      ['the current pass of a family revoked twice', familyPassText(SECRET, 'famB', 2), 'famB'],
      ['a pass the last revocation replaced', familyPassText(SECRET, 'famB', 1), 'REVOKED'],
      ['the first pass, two revocations ago', familyPassText(SECRET, 'famB', 0), 'REVOKED'],
      ['a pass of a generation not issued yet', familyPassText(SECRET, 'famB', 3), 'UNKNOWN_PASS'],
      ['a family the roster does not have', familyPassText(SECRET, 'famC', 0), 'UNKNOWN_PASS'],
      ['another deployment’s pass', passA.replace(issuerOf(passA), otherIssuer), 'OTHER_DEPLOYMENT'],
      ['an address', 'https://example.org/', 'NOT_A_PASS'],
      ['a pass cut short', passA.slice(0, -1), 'NOT_A_PASS'],
      ['a pass with a character no token has', `${passA.slice(0, -1)}1`, 'NOT_A_PASS'],
      ['another version', passA.replace('FP1', 'FP2'), 'NOT_A_PASS'],
      ['nothing', '', 'NOT_A_PASS'],
    ];
    for (const [what, text, expected] of table) {
      const got = verify(text, book);
      expect(E.isRight(got) ? got.right.familyKey : got.left, what).to.equal(expected);
    }
  });

  it('names the family’s guardian and its children the tablet holds; none held is NO_CHILDREN', () => {
    expect(verify(passA, book)).to.deep.equal(
      E.right({ familyKey: 'famA', guardianName: 'G famA', studentIds: ['child-of-famA'] }),
    );
    expect(verify(passA, book, () => false)).to.deep.equal(E.left('NO_CHILDREN'));
  });

  it('a roster from a server without issuer reads every well-formed pass by its hash alone', () => {
    const got = verify(passA, { ...book, issuer: undefined });
    expect(E.isRight(got) && got.right.familyKey).to.equal('famA');
  });

  it('a card names people by the first word of their name; the family by the guardian most children give', () => {
    expect(firstName('  Maria  da Silva ')).to.equal('Maria');
    const table: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [['Rita Prado', 'Rita P.', 'João Prado'], 'Rita'],
      [['João Prado', 'Rita Prado'], 'João'],
      [['Rita', 'Álvaro', 'Rita', 'Álvaro'], 'Álvaro'],
      [[], ''],
    ];
    for (const [names, expected] of table) expect(familyGuardianName(names), names.join()).to.equal(expected);
  });

  it('reading alone tells a pass from anything else', () => {
    expect(E.isRight(readPassText(passA))).to.equal(true);
    expect(readPassText('CHAMADA:FP1:')).to.deep.equal(E.left('NOT_A_PASS'));
  });
});

describe('family pass: properties', () => {
  const secretArb = fc.uint8Array({ minLength: 32, maxLength: 32 });
  const keyArb = fc.string({ minLength: 1, maxLength: 22 });
  const familiesArb = fc.uniqueArray(fc.tuple(keyArb, fc.integer({ min: 0, max: 8 })), {
    minLength: 1,
    maxLength: 6,
    selector: ([k]) => k,
  });

  it('every family’s current pass verifies, and names that family', () => {
    fc.assert(
      fc.property(secretArb, familiesArb, (secret, families) => {
        const book = bookOf(secret, families);
        for (const [key, generation] of families) {
          const got = verify(familyPassText(secret, key, generation), book);
          expect(E.isRight(got) && got.right.familyKey).to.equal(key);
        }
      }),
    );
  });

  it('a pass with any one character changed never verifies', () => {
    fc.assert(
      fc.property(
        secretArb,
        familiesArb,
        fc.nat(),
        fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567:1x'.split('')),
        (secret, families, at, replacement) => {
          const [key, generation] = families[0] ?? ['', 0];
          const pass = familyPassText(secret, key, generation);
          const i = at % pass.length;
          fc.pre(pass[i] !== replacement && pass[i]?.toLowerCase() !== replacement);
          const tampered = `${pass.slice(0, i)}${replacement}${pass.slice(i + 1)}`;
          expect(E.isLeft(verify(tampered, bookOf(secret, families)))).to.equal(true);
        },
      ),
    );
  });

  it('after a revocation the replaced pass is REVOKED and the new one verifies', () => {
    fc.assert(
      fc.property(secretArb, familiesArb, (secret, families) => {
        const [key, generation] = families[0] ?? ['', 0];
        const before = familyPassText(secret, key, generation);
        const after = bookOf(
          secret,
          families.map(([k, g]) => [k, k === key ? g + 1 : g] as const),
        );
        expect(verify(before, after)).to.deep.equal(E.left('REVOKED'));
        const renewed = verify(familyPassText(secret, key, generation + 1), after);
        expect(E.isRight(renewed) && renewed.right.familyKey).to.equal(key);
      }),
    );
  });

  it('a pass made with another secret is another deployment’s, even for the same family', () => {
    fc.assert(
      fc.property(secretArb, secretArb, familiesArb, (secret, other, families) => {
        fc.pre(secret.some((b, i) => b !== other[i]));
        const [key, generation] = families[0] ?? ['', 0];
        const foreign = familyPassText(other, key, generation);
        const got = verify(foreign, bookOf(secret, families));
        // 40 bits of issuer: two deployments share one about once in a trillion pairs, and then the
        // token's hash still matches no family.
        expect(E.isLeft(got)).to.equal(true);
        if (passIssuer(secret) !== passIssuer(other)) expect(got).to.deep.equal(E.left('OTHER_DEPLOYMENT'));
      }),
    );
  });
});
