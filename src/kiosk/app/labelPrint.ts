/**
 * Labels sent as a print job to the server's printer this tablet chose (issue #38 item 4, 0051): right
 * after the check-in, off the volunteer's path (the label screen is already shown, "Concluir" works at
 * once), with the printer's answer on screen. The check-ins go to the server through the outbox; a job
 * can name them only once they are there, so the tablet asks for the job until the server knows them,
 * for a bounded time, and otherwise the labels go through the browser's print dialog as before: a
 * label printed minutes later, after the family has left the door, would help nobody.
 *
 * The codes printed are the check-in records' (the server reads them when it renders): a reprint is a
 * new job for the same check-ins and prints the same codes.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import type { Api } from '../../client/endpoints.js';
import { detailsOf, type Failure, failureMessage } from '../../client/transport.js';

const IssuePaths = t.type({ issues: t.array(t.type({ path: t.string })) });

/** How long the tablet waits for its check-ins to reach the server before it prints through the browser. */
export const SYNC_WAIT_MS = 10_000;
/** How long it follows a job: the server's own bound for a printer that is off (60 s by default), and some. */
export const FOLLOW_MS = 90_000;
const STEP_MS = 500;
/**
 * A job read every 0.5 s for its first 5 s (a printer that answers has printed by then), then every
 * 2 s: a printer that is off is retried by the server for up to a minute, and the tablet's requests
 * count against its device's rate limit with its sync's.
 */
const FAST_READS = 10;
const SLOW_STEP_MS = 2_000;

export type PrintProgress =
  /** Waiting for the check-ins to reach the server, or for its answer to the job. */
  | { readonly kind: 'sending' }
  /** Queued or being sent; `retrying` says what the last attempt met. */
  | { readonly kind: 'printing'; readonly retrying?: string }
  | { readonly kind: 'done' }
  | { readonly kind: 'failed'; readonly message: string }
  /** No server to print through (offline, or the check-ins did not reach it in time): the browser prints. */
  | { readonly kind: 'browser' }
  /** Followed for the bound without an end: the job may still print. */
  | { readonly kind: 'unknown' };

export interface PrintRun {
  readonly api: Pick<Api, 'createPrintJob' | 'getPrintJob'>;
  readonly printerId: string;
  readonly checkInIds: ReadonlyArray<string>;
  /** Whether the tablet's last sync pass reached the server. */
  readonly online: () => boolean;
  /** Asks the outbox for a pass now (the check-ins may still be on the tablet). */
  readonly kick: () => void;
  /** False once the volunteer has left the label screen: nobody reads the answer any more. */
  readonly shown: () => boolean;
  readonly report: (p: PrintProgress) => void;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => number;
}

/** The server does not know one of the check-ins yet: the tablet's event has not been applied there. */
const notThereYet = (f: Failure): boolean =>
  f.kind === 'refused' &&
  f.status === 400 &&
  (detailsOf(f, IssuePaths)?.issues ?? []).some((i) => i.path.startsWith('body.checkInIds'));

/** A failure worth asking again within the bound (the server briefly out of reach, a rate limit). */
const passing = (f: Failure): boolean =>
  f.kind === 'network' || (f.kind === 'refused' && (f.status === 429 || f.status === 503));

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Queues the job once the server knows the check-ins, then follows it to its end, reporting as it goes. */
export const printThroughServer = async (run: PrintRun): Promise<void> => {
  const sleep = run.sleep ?? pause;
  const now = run.now ?? Date.now;
  if (!run.online()) return run.report({ kind: 'browser' });
  run.report({ kind: 'sending' });
  const syncBound = now() + SYNC_WAIT_MS;
  let jobId: string | undefined;
  while (jobId === undefined) {
    if (!run.shown()) return;
    const answer = await run.api.createPrintJob({
      body: { printerId: run.printerId, checkInIds: [...run.checkInIds] },
    });
    if (E.isRight(answer)) {
      jobId = answer.right.jobId;
      break;
    }
    const failure = answer.left;
    if (!notThereYet(failure) && !passing(failure))
      return run.report({ kind: 'failed', message: failureMessage(failure) });
    if (now() >= syncBound || !run.online()) return run.report({ kind: 'browser' });
    run.kick();
    await sleep(STEP_MS);
  }
  const followBound = now() + FOLLOW_MS;
  for (let reads = 1; run.shown() && now() < followBound; reads += 1) {
    const read = await run.api.getPrintJob({ params: { jobId } });
    if (E.isRight(read)) {
      const job = read.right;
      if (job.status === 'done') return run.report({ kind: 'done' });
      if (job.status === 'failed')
        return run.report({ kind: 'failed', message: job.error?.message ?? job.status });
      run.report(
        job.error === undefined ? { kind: 'printing' } : { kind: 'printing', retrying: job.error.message },
      );
    }
    await sleep(reads < FAST_READS ? STEP_MS : SLOW_STEP_MS);
  }
  if (run.shown()) run.report({ kind: 'unknown' });
};
