/**
 * The print agent (issue #38 item 3, decision 0054): runs on the church's network, keeps one call out
 * to the server open for jobs (a long poll: the church opens no port), prints each job to its printer
 * with the service's own transports, and reports how it went.
 *
 * - **Never twice**: the ids of the jobs it is running, and of those it printed, are remembered while
 *   it runs. A job handed again (an answer lost, a lease that lapsed while a report could not get
 *   through) is reported again, not printed again. Reports are kept until the server takes them,
 *   each under its own Idempotency-Key, resent with the same key.
 * - **Reconnects** with a doubling wait (1 s up to 30 s, with jitter) when the server cannot be
 *   reached or answers 5xx; a 401 (the token revoked or wrong) ends the agent, since no retry cures it.
 * - **One job at a time per printer**, in the order handed; printers in parallel, as the worker.
 * - **Stops gracefully**: it stops calling, lets the jobs under way end (each bounded) and sends their
 *   reports, within a bound.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import * as E from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import { AgentJobList, type AgentJobReport, parseAgentToken } from '../domain/printAgents.js';
import { printerAddress } from '../domain/printing.js';
import { keyedLock } from '../lib/keyedLock.js';
import { attemptFailure, type Sent, sendToPrinter } from '../printing/transports.js';
import type { PlacedLabel } from '../rules/labels.js';
import { ATTEMPT_TIMEOUT_MS } from '../rules/printRetry.js';

type AgentJob = t.TypeOf<typeof AgentJobList>['items'][number];
export type AgentPrinter = AgentJob['printer'];

export interface AgentLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export interface PrintAgentOptions {
  /** The service's base URL (`https://chamada.example.org`). */
  readonly server: string;
  readonly token: string;
  /** Seconds each call waits for a job (25). */
  readonly waitS?: number;
  /** Hosts the agent may print to; empty: any (the ADMIN chose each printer's URI). */
  readonly printerHosts?: ReadonlyArray<string>;
  readonly log: AgentLog;
  /** Sends a job; the printer's transport by default (tests replace it only to count). */
  readonly send?: (
    printer: AgentPrinter,
    labels: ReadonlyArray<PlacedLabel>,
    deadline: number,
  ) => Promise<Sent>;
  /** The longest wait between attempts to reach the server (30 s). */
  readonly longestBackoffMs?: number;
}

export interface RunningAgent {
  /** Stops calling for jobs and waits for the jobs under way and their reports (at most `graceMs`). */
  stop(graceMs?: number): Promise<void>;
  /** Settles when the agent ends: `stopped`, or `refused` when the server refused its token. */
  readonly ended: Promise<'stopped' | 'refused'>;
}

const FIRST_BACKOFF_MS = 1_000;
const DEFAULT_LONGEST_BACKOFF_MS = 30_000;
/** Remembered printed jobs: far more than a lease's worth of jobs. */
const REMEMBERED = 5_000;

class Refused extends Error {
  constructor() {
    super('the server refused the agent token');
    this.name = 'Refused';
  }
}

class Unreachable extends Error {
  constructor(readonly why: string) {
    super(`the server could not be reached: ${why}`);
    this.name = 'Unreachable';
  }
}

export const startPrintAgent = (options: PrintAgentOptions): RunningAgent => {
  const { log } = options;
  const parsed = parseAgentToken(options.token);
  if (parsed === undefined) throw new Error('not a print agent token (cpa_<agentId>_<secret>)');
  const base = options.server.replace(/\/+$/, '');
  const waitS = options.waitS ?? 25;
  const longest = options.longestBackoffMs ?? DEFAULT_LONGEST_BACKOFF_MS;
  const send = options.send ?? sendToPrinter;
  const hosts = options.printerHosts ?? [];
  const stopping = new AbortController();
  const lock = keyedLock();
  /** Jobs handed and not yet reported to the server. */
  const running = new Set<string>();
  /** Jobs printed (or failed) whose report is sent or on its way: never printed again. */
  const reported = new Map<string, AgentJobReport>();
  const under = new Set<Promise<void>>();
  let refused = false;

  const headers = (extra: Record<string, string> = {}): Record<string, string> => ({
    Authorization: `Bearer ${options.token}`,
    'X-Device-Id': parsed.agentId,
    ...extra,
  });

  /** One call to the server; a network failure or 5xx is `Unreachable`, a 401 `Refused`. */
  const request = async (path: string, init: RequestInit, timeoutMs: number): Promise<Response> => {
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        ...init,
        signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), ...(init.signal ? [init.signal] : [])]),
      });
    } catch (e) {
      // fetch says "fetch failed"; the cause names the network's answer (ECONNREFUSED, ENOTFOUND…).
      const cause = e instanceof Error && e.cause instanceof Error ? e.cause.message : undefined;
      throw new Unreachable(cause ?? (e instanceof Error ? e.name : typeof e));
    }
    if (res.status === 401) {
      await res.body?.cancel();
      throw new Refused();
    }
    if (res.status >= 500 || res.status === 429) {
      await res.body?.cancel();
      throw new Unreachable(`HTTP ${res.status}`);
    }
    return res;
  };

  const backoff = (failures: number): number => {
    const wait = Math.min(longest, FIRST_BACKOFF_MS * 2 ** Math.min(failures, 10));
    return wait / 2 + Math.random() * (wait / 2);
  };

  /** Sends a report until the server takes it (same key each time); drops it on a 4xx other than 401. */
  const sendReport = async (jobId: string, report: AgentJobReport): Promise<void> => {
    const key = randomUUID();
    for (let failures = 0; !refused; failures += 1) {
      try {
        const res = await request(
          `/api/v1/print-agents/me/jobs/${jobId}/status`,
          {
            method: 'POST',
            headers: headers({ 'Content-Type': 'application/json', 'Idempotency-Key': key }),
            body: JSON.stringify(report),
          },
          15_000,
        );
        const body = await res.text();
        if (res.ok) log.info({ jobId, reported: report.status }, 'print job reported');
        else log.warn({ jobId, status: res.status, body: body.slice(0, 300) }, 'the server refused a report');
        return;
      } catch (e) {
        if (e instanceof Refused) {
          refused = true;
          return;
        }
        // A report outlives a stop's start: a printed job the server never hears of prints again.
        await sleep(backoff(failures));
      }
    }
  };

  const remember = (jobId: string, report: AgentJobReport) => {
    reported.set(jobId, report);
    if (reported.size > REMEMBERED) {
      const oldest = reported.keys().next();
      if (oldest.done !== true) reported.delete(oldest.value);
    }
  };

  const print = async (job: AgentJob): Promise<AgentJobReport> => {
    const address = printerAddress(job.printer.uri);
    if (hosts.length > 0 && (address === undefined || !hosts.includes(address.host)))
      return {
        status: 'failed',
        error: {
          code: 'PRINTER_REFUSED',
          message: "the printer's host is not one the agent's PRINTER_HOSTS allows",
        },
      };
    try {
      const sent = await send(job.printer, job.labels, Date.now() + ATTEMPT_TIMEOUT_MS);
      return { status: 'done', sent };
    } catch (e) {
      const error = attemptFailure(e);
      // A report's message is bounded (`AgentJobReport`).
      return { status: 'failed', error: { ...error, message: error.message.slice(0, 500) } };
    }
  };

  const take = (job: AgentJob): void => {
    const known = reported.get(job.jobId);
    if (known !== undefined) {
      // Handed again: its report did not land before the lease lapsed. Tell again; never print again.
      if (!running.has(job.jobId)) {
        running.add(job.jobId);
        track(sendReport(job.jobId, known).finally(() => running.delete(job.jobId)));
      }
      return;
    }
    if (running.has(job.jobId)) return;
    running.add(job.jobId);
    track(
      lock
        .run(job.printer.printerId, async () => {
          const report = await print(job);
          remember(job.jobId, report);
          log.info(
            {
              jobId: job.jobId,
              printerId: job.printer.printerId,
              attempt: job.attempt,
              outcome: report.status,
              code: report.error?.code,
            },
            report.status === 'done' ? 'print job printed' : 'print job attempt failed',
          );
          await sendReport(job.jobId, report);
        })
        .finally(() => running.delete(job.jobId)),
    );
  };

  const track = (p: Promise<void>) => {
    under.add(p);
    void p.finally(() => under.delete(p));
  };

  const loop = async (): Promise<'stopped' | 'refused'> => {
    let failures = 0;
    /** The last call was answered: the next may wait. */
    let fresh = false;
    log.info({ server: base, agentId: parsed.agentId }, 'print agent started');
    while (!stopping.signal.aborted && !refused) {
      try {
        // After a start or a failure, no wait: the jobs it holds (an answer lost on the way) come at once.
        const wait = fresh ? waitS : 0;
        const res = await request(
          `/api/v1/print-agents/me/jobs?wait=${wait}`,
          { headers: headers(), signal: stopping.signal },
          (waitS + 15) * 1000,
        );
        const json: unknown = await res.json();
        if (!res.ok) throw new Unreachable(`HTTP ${res.status}`);
        const decoded = AgentJobList.decode(json);
        if (E.isLeft(decoded)) throw new Unreachable('an answer that is not a job list');
        if (failures > 0) log.info({ after: failures }, 'the server is reached again');
        failures = 0;
        fresh = true;
        for (const job of decoded.right.items) take(job);
      } catch (e) {
        if (e instanceof Refused) refused = true;
        if (stopping.signal.aborted || refused) break;
        if (failures === 0)
          log.warn(
            { why: e instanceof Unreachable ? e.why : String(e) },
            'cannot reach the server; retrying',
          );
        failures += 1;
        fresh = false;
        await sleep(backoff(failures), undefined, { signal: stopping.signal }).catch(() => undefined);
      }
    }
    if (refused) log.error({}, 'the server refused the agent token (revoked?); the agent ends');
    return refused ? 'refused' : 'stopped';
  };

  const ended = loop();

  return {
    ended,
    async stop(graceMs = 20_000) {
      stopping.abort();
      await ended;
      const timer = new AbortController();
      const grace = sleep(graceMs, 'late' as const, { signal: timer.signal }).catch(() => 'done' as const);
      const all = Promise.allSettled([...under]).then(() => 'done' as const);
      const outcome = await Promise.race([all, grace]);
      timer.abort();
      if (outcome === 'late') log.warn({ unreported: running.size }, 'stopped with jobs under way');
    },
  };
};
