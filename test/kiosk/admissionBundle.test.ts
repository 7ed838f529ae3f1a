/**
 * The tablet judges a check-in with the server's own rule: the kiosk's admission module, built by Vite
 * as the kiosk's bundle is (es2022, minified), answers exactly as the server's `decideAdmission` for
 * any command and facts, every refusal (a deactivated session or class among them) and the override.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'chai';
import fc from 'fast-check';
import { build } from 'vite';
import {
  type AdmissionCommand,
  type AdmissionDecision,
  type AdmissionFacts,
  decideAdmission,
  REQUIRED_FIELDS,
} from '../../src/rules/admission.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

const ENTRY = 'src/kiosk/app/admission.ts';

type Decide = (command: AdmissionCommand, facts: AdmissionFacts) => AdmissionDecision;
const hasDecide = (m: unknown): m is { readonly decideAdmission: Decide } =>
  typeof m === 'object' && m !== null && 'decideAdmission' in m && typeof m.decideAdmission === 'function';

const yearMonth = fc
  .tuple(fc.integer({ min: 2012, max: 2026 }), fc.integer({ min: 1, max: 12 }))
  .map(([y, m]) => `${y}-${String(m).padStart(2, '0')}`);
const meetingDate = fc
  .tuple(yearMonth, fc.integer({ min: 1, max: 28 }))
  .map(([ym, d]) => `${ym}-${String(d).padStart(2, '0')}`);

/** True one time in six: fact refusals would otherwise hide the policy ones in most runs. */
const rarely = fc.oneof(
  { arbitrary: fc.constant(false), weight: 5 },
  { arbitrary: fc.constant(true), weight: 1 },
);

const facts: fc.Arbitrary<AdmissionFacts> = fc.record({
  student: fc.option(
    fc.record({
      deleted: rarely,
      visitor: fc.boolean(),
      record: fc.record({
        birthMonth: fc.option(yearMonth, { nil: null }),
        guardianPhone: fc.boolean(),
        allergiesAnswered: fc.boolean(),
        specialNeedsAnswered: fc.boolean(),
        imageConsentAnswered: fc.boolean(),
      }),
    }),
    { nil: undefined, freq: 10 },
  ),
  session: fc.option(
    // Deactivated (0047) one time in six each, like the other refusals of fact.
    fc.record({ date: meetingDate, active: rarely.map((r) => !r), classActive: rarely.map((r) => !r) }),
    { nil: undefined, freq: 10 },
  ),
  room: fc.record({
    capacity: fc.option(fc.integer({ min: 1, max: 12 }), { nil: null }),
    childrenPerVolunteer: fc.option(fc.integer({ min: 1, max: 6 }), { nil: null }),
    ageRange: fc.option(
      fc.record(
        {
          minMonths: fc.integer({ min: 0, max: 120 }),
          maxMonths: fc.integer({ min: 0, max: 180 }),
          bornFrom: yearMonth,
          bornUntil: yearMonth,
        },
        { requiredKeys: [] },
      ),
      { nil: null },
    ),
  }),
  occupancy: fc.record({ checkedIn: fc.nat({ max: 14 }), volunteers: fc.nat({ max: 4 }) }),
  checkins: fc.array(
    fc.record({
      checkInId: fc.constantFrom('c0', 'c1'),
      status: fc.constantFrom('CHECKED_OUT', 'SUPERSEDED', 'CHECKED_OUT', 'CHECKED_IN'),
    }),
    { maxLength: 2 },
  ),
  requiredFields: fc.subarray([...REQUIRED_FIELDS]),
  actorRoles: fc.subarray(['ADMIN', 'CHAMADOR', 'RELATORIOS']),
});

const command: fc.Arbitrary<AdmissionCommand> = fc.record(
  {
    checkInId: fc.uuid(),
    override: fc.record({ justification: fc.string({ minLength: 10, maxLength: 40 }) }),
  },
  { requiredKeys: ['checkInId'] },
);

/** What a decision shows of the rule: its kind and reason, and whether an override passed something. */
const outcome = (d: AdmissionDecision): string =>
  d.kind === 'ADMIT' ? (d.waived.length > 0 ? 'ADMIT_WAIVED' : 'ADMIT') : d.refusal.reason;

describe('kiosk: the bundled admission rule answers as the server does', function () {
  this.timeout(60_000);
  let dir: string;
  let kiosk: Decide;

  before(async () => {
    dir = await makeTempDir('kiosk-admission');
    // The kiosk's own module, as the kiosk's Vite build bundles it (its target, minified).
    const built = await build({
      configFile: false,
      logLevel: 'silent',
      build: {
        target: 'es2022',
        outDir: dir,
        write: false,
        lib: { entry: ENTRY, formats: ['es'], fileName: 'admission' },
      },
    });
    const outputs = (Array.isArray(built) ? built : [built]).flatMap((b) => ('output' in b ? b.output : []));
    const chunk = outputs.find((o) => o.type === 'chunk' && o.isEntry);
    if (chunk === undefined || chunk.type !== 'chunk') throw new Error('the kiosk module was not bundled');
    // The rule's code is in the bundle, not imported from the source tree.
    expect(chunk.code).not.to.match(/from\s*["'][^"']*rules/);
    const file = join(dir, 'admission.mjs');
    await writeFile(file, chunk.code);
    const loaded: unknown = await import(pathToFileURL(file).href);
    if (!hasDecide(loaded)) throw new Error('the bundle exports no decideAdmission');
    kiosk = loaded.decideAdmission;
  });
  after(() => removeDir(dir));

  it('gives the same decision for any command and facts, every outcome reached', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(command, facts, (c, f) => {
        const server = decideAdmission(c, f);
        expect(kiosk(c, f)).to.deep.equal(server);
        seen.add(outcome(server));
      }),
      { seed: 20261128, numRuns: 3000 },
    );
    expect([...seen].sort()).to.deep.equal(
      [
        'ADMIT',
        'ADMIT_WAIVED',
        'AGE_OUT_OF_RANGE',
        'ALREADY_CHECKED_IN',
        'CLASS_DEACTIVATED',
        'RATIO_EXCEEDED',
        'RECORD_INCOMPLETE',
        'ROOM_FULL',
        'SESSION_DEACTIVATED',
        'SESSION_NOT_FOUND',
        'STUDENT_DELETED',
        'STUDENT_NOT_FOUND',
      ].sort(),
    );
  });
});
