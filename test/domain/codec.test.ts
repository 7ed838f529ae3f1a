import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import {
  boundedArray,
  boundedInt,
  boundedString,
  calendarDate,
  IsoInstant,
  object,
  PathId,
  ShortText,
  Text,
  Uuid,
} from '../../src/domain/codec.js';
import { toIssues } from '../../src/domain/issues.js';
import { SchemaRegistry, toSchema } from '../../src/http/openapi/jsonSchema.js';

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

  it('the limits the OpenAPI document states are the ones the codecs enforce (OWASP API4)', () => {
    const reg = new SchemaRegistry();
    const cases: ReadonlyArray<[t.Mixed, Record<string, unknown>, unknown, unknown]> = [
      [
        Uuid,
        { maxLength: 36 },
        '6f1c2a8e-9d3b-4c5e-8f7a-1b2c3d4e5f60',
        `${'6f1c2a8e-9d3b-4c5e-8f7a-1b2c3d4e5f60'}0`,
      ],
      [IsoInstant, { maxLength: 30 }, '2026-11-27T01:00:00.123456789Z', '2026-11-27T01:00:00.1234567890Z'],
      [calendarDate(), { maxLength: 10 }, '2026-11-27', '2026-11-270'],
      [ShortText, { maxLength: 1_000 }, 'x'.repeat(1_000), 'x'.repeat(1_001)],
      [Text, { maxLength: 20_000 }, 'x'.repeat(20_000), 'x'.repeat(20_001)],
      [PathId, { minLength: 1, maxLength: 200 }, 'x'.repeat(200), ''],
      [boundedArray(t.number, 3), { maxItems: 3 }, [1, 2, 3], [1, 2, 3, 4]],
      [boundedInt(0, 999), { type: 'integer', format: 'int32', minimum: 0, maximum: 999 }, 999, 1_000],
      [boundedInt(0, 2 ** 40), { type: 'integer', format: 'int64' }, 2 ** 40, 0.5],
    ];
    for (const [codec, stated, within, beyond] of cases) {
      expect(toSchema(codec, reg), codec.name).to.deep.include(stated);
      expect(E.isRight(codec.decode(within)), `${codec.name} accepts its bound`).to.equal(true);
      expect(E.isLeft(codec.decode(beyond)), `${codec.name} refuses past it`).to.equal(true);
    }
  });
});
