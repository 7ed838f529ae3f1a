/**
 * The print worker (0051): sends queued jobs to their printers, off every request's path.
 *
 * - A job is claimed by compare-and-swap before it is sent (`claimedBy`, `leaseUntil`), so of two
 *   instances on one CouchDB one sends it; a lease that lapsed (its worker died) is taken again.
 * - Jobs to one printer go one at a time, in the order they are taken (a family's labels stay
 *   together); different printers print at once.
 * - A failed attempt is tried again after `afterFailure`'s wait, or the job fails with the attempt's
 *   error (`printRetry.ts`): a printer that is off makes no job wait past its give-up instant.
 * - A job created here is taken at once (`wake`); a sweep every few seconds finds the rest: jobs
 *   left by a stop or by another instance, and retries whose timer was lost with a restart. A job
 *   whose bound passed while no worker held it (the service was down) still gets one attempt:
 *   nothing acknowledged is lost.
 * - A printer a print agent serves (0054) is left to its agent; the worker only fails its jobs once
 *   their bound has passed with no agent holding them.
 */
import { randomUUID } from 'node:crypto';
import type { PrinterDoc, PrintJobDoc } from '../domain/printing.js';
import { keyedLock } from '../lib/keyedLock.js';
import { layOut, type PlacedLabel } from '../rules/labels.js';
import { printerIssues } from '../rules/printers.js';
import { afterFailure, attemptBudget } from '../rules/printRetry.js';
import type { PrinterStore } from '../store/printers.js';
import type { PrintJobFields, PrintJobStore } from '../store/printJobs.js';
import type { PrintService } from './printService.js';
import { measure } from './render.js';
import { attemptFailure, type Sent, sendToPrinter } from './transports.js';

export interface PrintWorkerDeps {
  readonly jobs: PrintJobStore;
  readonly printers: Pick<PrinterStore, 'get'>;
  readonly content: Pick<PrintService, 'contentOf'>;
  readonly clock: () => Date;
  /** PRINTER_HOSTS, checked again when a job is sent: a printer set up before it changed is not reached. */
  readonly allowedHosts?: ReadonlyArray<string>;
  /** How often unfinished jobs are looked for (5 s). */
  readonly sweepMs?: number;
  /** Told of each job's end and of the worker's own failures (a store that does not answer). */
  readonly onJobEnd?: (job: PrintJobDoc) => void;
  readonly onError?: (e: unknown, where: string) => void;
  /** Sends a job; the printer's transport by default (tests replace it only to count). */
  readonly send?: (
    printer: PrinterDoc,
    labels: ReadonlyArray<PlacedLabel>,
    deadline: number,
  ) => Promise<Sent>;
}

export interface PrintWorker {
  /** A job is waiting: take it now. */
  wake(jobId: string): void;
  /** Stops taking jobs and waits for the attempts under way (each is bounded). */
  stop(): Promise<void>;
}

const DEFAULT_SWEEP_MS = 5_000;
/** A claim outlives its attempt by this much, so a slow store write does not hand the job to another. */
const LEASE_SLACK_MS = 5_000;
const PURGE_EVERY_MS = 60 * 60 * 1000;

const fieldsOf = (job: PrintJobDoc): PrintJobFields => {
  const { _id: _i, _rev: _r, docType: _d, ...fields } = job;
  return fields;
};

export const printWorker = (deps: PrintWorkerDeps): PrintWorker => {
  const owner = `service:${randomUUID()}`;
  const send = deps.send ?? sendToPrinter;
  const lock = keyedLock();
  const timers = new Map<string, NodeJS.Timeout>();
  /** Jobs this worker is looking at or sending, so a sweep does not take them twice. */
  const busy = new Set<string>();
  const running = new Set<Promise<void>>();
  let stopped = false;
  let lastPurge = 0;
  const report = (e: unknown, where: string) => deps.onError?.(e, where);

  const schedule = (jobId: string, at: number) => {
    if (stopped) return;
    clearTimeout(timers.get(jobId));
    const timer = setTimeout(
      () => {
        timers.delete(jobId);
        take(jobId);
      },
      Math.max(0, at - deps.clock().getTime()),
    );
    timer.unref();
    timers.set(jobId, timer);
  };

  /** Writes the job's next state; undefined when another writer changed it first. */
  const save = async (job: PrintJobDoc, next: Partial<PrintJobFields>): Promise<PrintJobDoc | undefined> => {
    const saved = await deps.jobs.update(job, {
      ...fieldsOf(job),
      ...next,
      updatedAt: deps.clock().toISOString(),
    });
    return saved === 'CONFLICT' ? undefined : saved;
  };

  const finish = async (job: PrintJobDoc, next: Partial<PrintJobFields>) => {
    const saved = await save(job, { ...next, claimedBy: null, leaseUntil: null });
    if (saved !== undefined && (saved.status === 'done' || saved.status === 'failed')) deps.onJobEnd?.(saved);
    return saved;
  };

  /** One attempt at a job, under its printer's lock. */
  const attempt = async (read: PrintJobDoc): Promise<void> => {
    const now = deps.clock().getTime();
    if (read.status === 'done' || read.status === 'failed') return;
    if (read.claimedBy !== null && read.claimedBy !== owner && Date.parse(read.leaseUntil ?? '') > now)
      return;
    const served = await deps.printers.get(read.printerId);
    if (served?.agentId !== undefined) {
      // Its agent sends it (0054). Past its bound with no agent holding it (the agent is gone), the job
      // fails here, so the door's screen is not left showing "queued" for ever.
      if (now >= Date.parse(read.giveUpAt))
        await finish(read, {
          status: 'failed',
          error: read.error ?? {
            code: 'PRINTER_UNREACHABLE',
            message: 'no print agent took the job before its bound',
          },
        });
      return;
    }
    if (Date.parse(read.notBefore) > now) {
      schedule(read.jobId, Date.parse(read.notBefore));
      return;
    }
    const giveUpAt = Date.parse(read.giveUpAt);
    // Past its bound: a job that already met the printer fails with what it met; one no worker held
    // while the bound passed (a stopped service) gets its one attempt.
    if (now >= giveUpAt && read.error !== null) {
      await finish(read, { status: 'failed' });
      return;
    }
    const budget = attemptBudget(now, Math.max(giveUpAt, now + 1_000));
    const claimed = await save(read, {
      status: 'printing',
      attempts: read.attempts + 1,
      claimedBy: owner,
      leaseUntil: new Date(now + budget + LEASE_SLACK_MS).toISOString(),
    });
    if (claimed === undefined) return;
    const printer = await deps.printers.get(claimed.printerId);
    if (printer === undefined) {
      await finish(claimed, {
        status: 'failed',
        error: { code: 'PRINTER_REMOVED', message: 'the printer was removed before the job printed' },
      });
      return;
    }
    if (printerIssues(printer, deps.allowedHosts ?? []).length > 0) {
      await finish(claimed, {
        status: 'failed',
        error: { code: 'PRINTER_REFUSED', message: "the printer's host is not one PRINTER_HOSTS allows" },
      });
      return;
    }
    const content = await deps.content.contentOf(claimed, printer);
    if (content === undefined) {
      await finish(claimed, {
        status: 'failed',
        error: { code: 'NOTHING_TO_PRINT', message: 'none of the check-ins of the job exists any more' },
      });
      return;
    }
    const labels = content.map((c) => layOut(c, printer.layout, measure));
    try {
      const sent = await send(printer, labels, now + budget);
      await finish(claimed, { status: 'done', error: null, sent });
    } catch (e) {
      const error = attemptFailure(e);
      const ended = deps.clock().getTime();
      const next = afterFailure(error.code, claimed.attempts, ended, giveUpAt);
      if (next.retry) {
        const saved = await finish(claimed, {
          status: 'queued',
          error,
          notBefore: new Date(next.at).toISOString(),
        });
        if (saved !== undefined) schedule(saved.jobId, next.at);
      } else await finish(claimed, { status: 'failed', error });
    }
  };

  function take(jobId: string): void {
    if (stopped || busy.has(jobId)) return;
    busy.add(jobId);
    const run = (async () => {
      try {
        const job = await deps.jobs.get(jobId);
        if (job === undefined) return;
        await lock.run(job.printerId, async () => {
          // Read again under the lock: the job may have moved while it waited its turn.
          const current = await deps.jobs.get(jobId);
          if (current !== undefined && !stopped) await attempt(current);
        });
      } catch (e) {
        report(e, 'print job');
      } finally {
        busy.delete(jobId);
      }
    })();
    running.add(run);
    void run.finally(() => running.delete(run));
  }

  const sweep = async () => {
    try {
      const now = deps.clock().getTime();
      for (const job of await deps.jobs.unfinished()) {
        if (busy.has(job.jobId) || timers.has(job.jobId)) continue;
        take(job.jobId);
      }
      if (now - lastPurge >= PURGE_EVERY_MS) {
        lastPurge = now;
        await deps.jobs.purgeExpired(deps.clock());
      }
    } catch (e) {
      report(e, 'print job sweep');
    }
  };

  const sweeper = setInterval(() => void sweep(), deps.sweepMs ?? DEFAULT_SWEEP_MS);
  sweeper.unref();
  void sweep();

  return {
    wake: take,
    async stop() {
      stopped = true;
      clearInterval(sweeper);
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      await Promise.allSettled([...running]);
    },
  };
};
