import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { boundedString, IsoInstant, object, Uuid } from '../../src/domain/codec.js';
import { toIssues } from '../../src/domain/issues.js';

const Person = object(
  'PersonForTest',
  { name: boundedString(1, 5) },
  { phones: t.array(object('PhoneForTest', { number: t.string })) },
);

describe('codecs', () => {
  it('a closed object decodes its known fields', () => {
    expect(Person.decode({ name: 'Ana', phones: [{ number: '1' }] })).to.deep.equal(
      E.right({ name: 'Ana', phones: [{ number: '1' }] }),
    );
  });

  it('a closed object reports unknown fields, missing fields and bad nested values with their paths', () => {
    const r = Person.decode({ nme: 'Ana', phones: [{ number: 1 }], status: 'DELETED' });
    if (E.isRight(r)) throw new Error('expected a failure');
    expect(toIssues('body', r.left)).to.have.deep.members([
      { path: 'body.nme', message: 'unknown field' },
      { path: 'body.status', message: 'unknown field' },
      { path: 'body.name', message: 'required' },
      { path: 'body.phones.0.number', message: 'expected string' },
    ]);
  });

  it('a closed object refuses __proto__ and constructor keys as unknown fields', () => {
    const r = Person.decode(JSON.parse('{"name":"Ana","__proto__":{"admin":true},"constructor":{}}'));
    if (E.isRight(r)) throw new Error('expected a failure');
    expect(toIssues('body', r.left).map((i) => i.path)).to.have.members([
      'body.__proto__',
      'body.constructor',
    ]);
  });

  it('encoding strips fields the codec does not name, so responses cannot leak them', () => {
    const leaky = { name: 'Ana', secret: 'x' };
    expect(Person.encode(leaky)).to.deep.equal({ name: 'Ana' });
  });

  it('bounded strings hold their bounds', () => {
    expect(E.isRight(boundedString(10, 500).decode('x'.repeat(10)))).to.equal(true);
    expect(E.isRight(boundedString(10, 500).decode('x'.repeat(9)))).to.equal(false);
    expect(E.isRight(boundedString(10, 500).decode('x'.repeat(500)))).to.equal(true);
    expect(E.isRight(boundedString(10, 500).decode('x'.repeat(501)))).to.equal(false);
  });

  const instants: ReadonlyArray<[string, boolean]> = [
    ['2026-11-25T10:00:00Z', true],
    ['2026-11-25T10:00:00.123Z', true],
    ['2026-11-25T10:00:00+00:00', false],
    ['2026-11-25', false],
    ['2026-13-25T10:00:00Z', false],
  ];
  for (const [s, ok] of instants) {
    it(`IsoInstant ${ok ? 'accepts' : 'refuses'} ${s}`, () => {
      expect(E.isRight(IsoInstant.decode(s))).to.equal(ok);
    });
  }

  it('Uuid accepts UUIDs in either case and refuses anything else', () => {
    expect(E.isRight(Uuid.decode('6F1C2A8E-9D3B-4C5E-8F7A-1B2C3D4E5F60'))).to.equal(true);
    expect(E.isRight(Uuid.decode('not-a-uuid'))).to.equal(false);
    expect(E.isRight(Uuid.decode(42))).to.equal(false);
  });
});
