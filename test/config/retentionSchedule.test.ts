/** When the retention job runs each day (decision 0045): RETENTION_AT in RETENTION_TIME_ZONE. */
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import { decodeConfig } from '../../src/config/config.js';

const decoded = (env: Record<string, string>) => decodeConfig({ JWT_SECRET: 'x'.repeat(40), ...env });

describe('the retention job’s daily time', () => {
  it('is 03:30 in São Paulo by default, and read from RETENTION_AT and RETENTION_TIME_ZONE', () => {
    const defaults = decoded({});
    const set = decoded({ RETENTION_AT: '23:05', RETENTION_TIME_ZONE: 'UTC' });
    expect(E.isRight(defaults) && defaults.right.retention).to.deep.equal({
      at: { hour: 3, minute: 30 },
      timeZone: 'America/Sao_Paulo',
    });
    expect(E.isRight(set) && set.right.retention).to.deep.equal({
      at: { hour: 23, minute: 5 },
      timeZone: 'UTC',
    });
  });

  // what, environment, the variable the problem names
  const bad: ReadonlyArray<readonly [string, Record<string, string>, string]> = [
    ['a time that is not HH:MM', { RETENTION_AT: '3:30' }, 'RETENTION_AT'],
    ['a time past 23:59', { RETENTION_AT: '24:00' }, 'RETENTION_AT'],
    ['an unknown time zone', { RETENTION_TIME_ZONE: 'America/Atlantis' }, 'RETENTION_TIME_ZONE'],
  ];
  for (const [what, env, variable] of bad)
    it(`refuses ${what}, naming ${variable}`, () => {
      const d = decoded(env);
      expect(E.isLeft(d) && d.left.join('\n')).to.contain(variable);
    });
});
