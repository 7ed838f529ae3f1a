import { Writable } from 'node:stream';
import { expect } from 'chai';
import fc from 'fast-check';
import pino from 'pino';
import { createLogger, REDACTED, redactedPaths } from '../../src/log/logger.js';
import { compileRedaction } from '../../src/log/redaction.js';

const sinkTo = (lines: string[]): Writable =>
  new Writable({
    write(chunk: Buffer, _e, done) {
      lines.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((l) => l !== ''),
      );
      done();
    },
  });

/** A line without its time, which differs between two loggers. */
const withoutTime = (line: string): unknown => {
  const { time: _time, ...rest } = JSON.parse(line) as Record<string, unknown>;
  return rest;
};

describe('log redaction', () => {
  const redact = compileRedaction(['secret', 'headers.cookie', '*.password'], 'X');
  const cases: ReadonlyArray<[string, Record<string, unknown>, Record<string, unknown>]> = [
    ['a top-level key', { secret: 's', id: 1 }, { secret: 'X', id: 1 }],
    ['a top-level key whatever its type', { secret: { a: 1 } }, { secret: 'X' }],
    [
      'a key of any object one level down',
      { user: { password: 'p', id: 'u' } },
      { user: { password: 'X', id: 'u' } },
    ],
    [
      'a key of one named object',
      { headers: { cookie: 'c', accept: 'a' } },
      { headers: { cookie: 'X', accept: 'a' } },
    ],
    ['not that key in another object', { other: { cookie: 'c' } }, { other: { cookie: 'c' } }],
    ['not two levels down', { a: { b: { password: 'p' } } }, { a: { b: { password: 'p' } } }],
    ['not inside arrays', { list: [{ password: 'p' }] }, { list: [{ password: 'p' }] }],
    ['nothing listed', { id: 'x', n: 2 }, { id: 'x', n: 2 }],
  ];
  for (const [what, line, expected] of cases) {
    it(`censors ${what}`, () => expect(redact(line)).to.deep.equal(expected));
  }

  it('never changes the logged object, and returns a line without listed keys as it is', () => {
    const user = { password: 'p' };
    const line = { user };
    expect(redact(line)).not.to.equal(line);
    expect(user.password).to.equal('p');
    const clean = { id: 'x', nested: { n: 1 } };
    expect(redact(clean)).to.equal(clean);
  });

  it('keeps the prototype of a censored object', () => {
    const err = Object.assign(new Error('boom'), { password: 'p' });
    const out = redact({ err });
    expect(out.err).to.be.instanceOf(Error);
    expect(out.err).to.have.property('password', 'X');
  });

  for (const bad of ['a.b.c', '*', 'a.*', '', '.a', 'a.']) {
    it(`refuses the path ${JSON.stringify(bad)}, which it could not honour`, () =>
      expect(() => compileRedaction([bad], 'X')).to.throw(/unsupported redaction path/));
  }

  it("writes the same lines as pino's own redact option with the service's paths", () => {
    const paths = redactedPaths();
    const sensitive = paths.map((p) => p.split('.').at(-1) ?? p).filter((k) => k !== '*');
    const key = fc.constantFrom(...sensitive, 'headers', 'id', 'route', 'status', 'student', 'user');
    const leaf = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null));
    const inner = fc.oneof(leaf, fc.array(leaf, { maxLength: 3 }), fc.dictionary(key, leaf, { maxKeys: 4 }));
    const line = fc.dictionary(key, inner, { maxKeys: 6 });
    fc.assert(
      fc.property(line, fc.string({ maxLength: 8 }), (obj, msg) => {
        const ours: string[] = [];
        const theirs: string[] = [];
        createLogger('info', sinkTo(ours)).info(structuredClone(obj), msg);
        pino(
          { level: 'info', base: { service: 'chamada' }, redact: { paths, censor: REDACTED } },
          sinkTo(theirs),
        ).info(structuredClone(obj), msg);
        expect(ours.map(withoutTime)).to.deep.equal(theirs.map(withoutTime));
      }),
      { numRuns: 500 },
    );
  });
});
