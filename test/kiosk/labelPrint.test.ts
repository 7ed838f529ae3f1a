/**
 * The kiosk's print job (issue #38 item 4, 0051) against a scripted server: the job is asked for until
 * the server knows the tablet's check-ins, within a bound, then followed to its end; offline, or when
 * the check-ins do not arrive in time, the browser prints. The clock is the test's: each pause moves it.
 */
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import type { Failure } from '../../src/client/transport.js';
import type { ErrorCode } from '../../src/domain/errors.js';
import type { PrintJob } from '../../src/domain/printing.js';
import {
  FOLLOW_MS,
  type PrintProgress,
  printThroughServer,
  SYNC_WAIT_MS,
} from '../../src/kiosk/app/labelPrint.js';

const PRINTER = '6f1c2a8e-9d3b-4c5e-8f7a-1b2c3d4e5f60';
const CHECKIN = '0b7f3a52-1c1d-4e0b-9a57-3c2d1e0f9a88';
const JOB = '9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d';

const refused = (status: number, code: ErrorCode, paths: ReadonlyArray<string> = []): Failure => ({
  kind: 'refused',
  status,
  error: {
    code,
    message: `refused ${status}`,
    correlationId: '00000000-0000-4000-8000-000000000000',
    details: { issues: paths.map((path) => ({ path, message: 'no such check-in' })) },
  },
});
const notSynced = refused(400, 'VALIDATION_FAILED', ['body.checkInIds.0']);

const job = (status: PrintJob['status'], error?: string): PrintJob => ({
  jobId: JOB,
  printerId: PRINTER,
  status,
  attempts: 1,
  createdAt: '2026-11-26T10:00:00.000Z',
  updatedAt: '2026-11-26T10:00:00.000Z',
  ...(error === undefined ? {} : { error: { code: 'PRINTER_UNREACHABLE', message: error } }),
});

interface Script {
  readonly creates: ReadonlyArray<E.Either<Failure, { jobId: string }>>;
  readonly reads?: ReadonlyArray<E.Either<Failure, PrintJob>>;
  readonly online?: boolean;
  readonly shownFor?: number;
}

/** Runs the job against the script; the last answer of each list repeats. */
const runScript = async (script: Script) => {
  let clock = 0;
  let creates = 0;
  let reads = 0;
  let kicks = 0;
  const seen: PrintProgress[] = [];
  const bodies: unknown[] = [];
  const pick = <A>(list: ReadonlyArray<A>, i: number): A => {
    const a = list[Math.min(i, list.length - 1)];
    if (a === undefined) throw new Error('an empty script');
    return a;
  };
  await printThroughServer({
    api: {
      createPrintJob: async (args) => {
        bodies.push(args.body);
        creates += 1;
        return pick(script.creates, creates - 1);
      },
      getPrintJob: async () => {
        reads += 1;
        return pick(script.reads ?? [E.right(job('done'))], reads - 1);
      },
    },
    printerId: PRINTER,
    checkInIds: [CHECKIN],
    online: () => script.online ?? true,
    kick: () => {
      kicks += 1;
    },
    shown: () => clock < (script.shownFor ?? Number.POSITIVE_INFINITY),
    report: (p) => seen.push(p),
    sleep: async (ms) => {
      clock += ms;
    },
    now: () => clock,
  });
  return { seen, kinds: seen.map((p) => p.kind), creates, reads, kicks, bodies, clock };
};

describe('kiosk: labels as a print job on the server (labelPrint)', () => {
  it('offline, the browser prints and nothing is asked of the server', async () => {
    const r = await runScript({ creates: [E.right({ jobId: JOB })], online: false });
    expect(r.kinds).to.deep.equal(['browser']);
    expect(r.creates).to.equal(0);
  });

  it('asks again while the server does not know the check-ins yet, then follows the job to done', async () => {
    const r = await runScript({
      creates: [E.left(notSynced), E.left(notSynced), E.right({ jobId: JOB })],
      reads: [E.right(job('queued')), E.right(job('printing')), E.right(job('done'))],
    });
    expect(r.creates).to.equal(3);
    expect(r.kicks, 'the outbox is asked for a pass meanwhile').to.equal(2);
    expect(r.bodies[2]).to.deep.equal({ printerId: PRINTER, checkInIds: [CHECKIN] });
    expect(r.kinds).to.deep.equal(['sending', 'printing', 'printing', 'done']);
  });

  it('check-ins that do not reach the server within the bound go to the browser', async () => {
    const r = await runScript({ creates: [E.left(notSynced)] });
    expect(r.kinds).to.deep.equal(['sending', 'browser']);
    expect(r.clock).to.be.at.least(SYNC_WAIT_MS);
    expect(r.clock).to.be.below(SYNC_WAIT_MS + 1_000);
  });

  it('a network failure while asking is tried again within the bound, like a check-in not there yet', async () => {
    const r = await runScript({ creates: [E.left({ kind: 'network' }), E.right({ jobId: JOB })] });
    expect(r.kinds).to.deep.equal(['sending', 'done']);
  });

  it("a job that failed says the printer's reason; one retrying says what the last attempt met", async () => {
    const r = await runScript({
      creates: [E.right({ jobId: JOB })],
      reads: [E.right(job('queued', 'connection refused')), E.right(job('failed', 'connection refused'))],
    });
    expect(r.seen).to.deep.equal([
      { kind: 'sending' },
      { kind: 'printing', retrying: 'connection refused' },
      { kind: 'failed', message: 'connection refused' },
    ]);
  });

  it('a refusal other than "not there yet" ends at once with its message', async () => {
    const r = await runScript({ creates: [E.left(refused(403, 'FORBIDDEN_ROLE'))] });
    expect(r.seen).to.deep.equal([{ kind: 'sending' }, { kind: 'failed', message: 'refused 403' }]);
    expect(r.creates).to.equal(1);
  });

  it('a job still open after the bound is reported as unanswered; the following stops', async () => {
    const r = await runScript({ creates: [E.right({ jobId: JOB })], reads: [E.right(job('queued'))] });
    expect(r.kinds.at(-1)).to.equal('unknown');
    expect(r.clock).to.be.at.least(FOLLOW_MS);
    expect(r.clock).to.be.below(FOLLOW_MS + 2_500);
    // Every 0.5 s for the first 5 s, then every 2 s: about 10 + 85 / 2 reads, not 180.
    expect(r.reads).to.be.within(50, 56);
  });

  it('once the volunteer has left the label screen, nothing more is asked or reported', async () => {
    const r = await runScript({
      creates: [E.right({ jobId: JOB })],
      reads: [E.right(job('queued'))],
      shownFor: 2_000,
    });
    expect(r.kinds.every((k) => k === 'sending' || k === 'printing')).to.equal(true);
    expect(r.reads).to.be.at.most(5);
  });
});
