/**
 * Print agents (issue #38 item 3, decision 0054): the server side. An ADMIN issues an agent a token;
 * the agent calls for the jobs of the printers that name it, and reports how each went.
 *
 * - **Claims**: a job is handed to an agent by the same compare-and-swap claim the worker takes
 *   (`claimedBy: agent:<agentId>`, `leaseUntil`). Jobs the agent holds under a live lease are handed
 *   again on each call, so an answer lost on the way loses no job; the agent knows the ids it is
 *   running or has printed and does not print them twice. A lapsed lease (the agent gone mid-job) is
 *   claimed afresh, as an attempt of its own.
 * - **Reports** are idempotent in effect: `done` ends the job whoever holds it now (the printer took
 *   it: printing it again would be the fault); `failed` and `printing` count only from the claim's
 *   holder; a report on a finished job changes nothing and answers its state.
 * - **Rendering**: the server lays the labels out (the same `layOut` and font metrics as its own
 *   worker); the agent turns them into the printer's language, because only it can ask an IPP printer
 *   which formats it takes.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import * as E from 'fp-ts/lib/Either.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { Actor, Principal } from '../domain/principal.js';
import {
  AGENT_TOKEN_PREFIX,
  type AgentJob,
  type AgentJobReport,
  type CreatePrintAgentBody,
  MAX_AGENT_JOBS,
  type PrintAgentDoc,
  parseAgentToken,
} from '../domain/printAgents.js';
import type { PrinterDoc, PrintJobDoc } from '../domain/printing.js';
import { requestScopedId } from '../lib/requestIds.js';
import { layOut } from '../rules/labels.js';
import { afterFailure } from '../rules/printRetry.js';
import type { PrintAgentStore } from '../store/printAgents.js';
import type { PrinterStore } from '../store/printers.js';
import type { PrintJobFields, PrintJobStore } from '../store/printJobs.js';
import type { PrintService } from './printService.js';
import { measure } from './render.js';

export interface PrintAgentServiceDeps {
  readonly agents: PrintAgentStore;
  readonly printers: Pick<PrinterStore, 'list' | 'get'>;
  readonly jobs: PrintJobStore;
  readonly content: Pick<PrintService, 'contentOf'>;
  readonly clock: () => Date;
  /** Derives each agent's secret from its id: a retried issue answers the same token (0054). */
  readonly tokenKey: Uint8Array;
  /** How long a claim for an agent lasts (30 s); a `printing` report renews it. */
  readonly leaseMs?: number;
  /** How often a waiting call looks again for jobs another instance queued, or lapsed leases (1 s). */
  readonly recheckMs?: number;
}

export interface AgentJobState {
  readonly jobId: string;
  readonly status: PrintJobDoc['status'];
  readonly error?: { code: NonNullable<PrintJobDoc['error']>['code']; message: string };
  readonly leaseUntil?: string;
}

export interface PrintAgentService {
  issue(
    actor: Actor,
    body: CreatePrintAgentBody,
  ): Promise<E.Either<ApiError, { agent: PrintAgentDoc; token: string }>>;
  list(): Promise<PrintAgentDoc[]>;
  revoke(agentId: string): Promise<E.Either<ApiError, PrintAgentDoc>>;
  /** The principal of an agent's token; undefined when the token is not one, revoked or wrong. */
  authenticate(token: string): Promise<Principal | undefined>;
  /**
   * The jobs claimed for the agent, waiting up to `waitMs` for a new one; those it already holds come
   * with the answer (at once when `waitMs` is 0, as the agent asks after a start or a lost answer).
   */
  jobsFor(agentId: string, waitMs: number): Promise<AgentJob[]>;
  report(agentId: string, jobId: string, report: AgentJobReport): Promise<E.Either<ApiError, AgentJobState>>;
  /** A job was queued: calls waiting for jobs look now. */
  wake(): void;
}

export const isAgentToken = (token: string): boolean => token.startsWith(AGENT_TOKEN_PREFIX);

export const agentOwner = (agentId: string): string => `agent:${agentId}`;

const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_RECHECK_MS = 1_000;
const CAS_TRIES = 3;
/** `lastSeenAt` is written at most this often (each call would be a write otherwise). */
const SEEN_EVERY_MS = 60_000;

const fieldsOf = (job: PrintJobDoc): PrintJobFields => {
  const { _id: _i, _rev: _r, docType: _d, ...fields } = job;
  return fields;
};

const stateOf = (job: PrintJobDoc): AgentJobState => ({
  jobId: job.jobId,
  status: job.status,
  ...(job.error === null ? {} : { error: job.error }),
  ...(job.leaseUntil === null ? {} : { leaseUntil: job.leaseUntil }),
});

export const printAgentService = (deps: PrintAgentServiceDeps): PrintAgentService => {
  const { agents, printers, jobs, clock } = deps;
  const leaseMs = deps.leaseMs ?? DEFAULT_LEASE_MS;
  const recheckMs = deps.recheckMs ?? DEFAULT_RECHECK_MS;
  const waiting = new Set<() => void>();
  /** How many times a job was queued here: a call that was looking meanwhile looks again. */
  let woken = 0;

  const secretOf = (agentId: string): string =>
    createHmac('sha256', deps.tokenKey).update(`print agent ${agentId}`).digest('base64url');
  const hashed = (s: string): Uint8Array => {
    const b = createHash('sha256').update(s).digest();
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  };
  const digestOf = (secret: string): string => createHash('sha256').update(secret).digest('base64url');
  /** Both hashed again to one length, then compared in constant time. */
  const sameText = (a: string, b: string): boolean => timingSafeEqual(hashed(a), hashed(b));

  const save = async (job: PrintJobDoc, next: Partial<PrintJobFields>): Promise<PrintJobDoc | undefined> => {
    const saved = await jobs.update(job, { ...fieldsOf(job), ...next, updatedAt: clock().toISOString() });
    return saved === 'CONFLICT' ? undefined : saved;
  };

  const seen = async (agent: PrintAgentDoc): Promise<void> => {
    const now = clock();
    if (agent.lastSeenAt !== undefined && now.getTime() - Date.parse(agent.lastSeenAt) < SEEN_EVERY_MS)
      return;
    const { _id: _i, _rev: _r, docType: _d, ...fields } = agent;
    // A lost race is someone else's write of the same fact.
    await agents.update(agent, { ...fields, lastSeenAt: now.toISOString() });
  };

  /** The job handed to the agent: its labels laid out for the printer, or undefined when it ended here. */
  const handOut = async (job: PrintJobDoc, printer: PrinterDoc): Promise<AgentJob | undefined> => {
    const content = await deps.content.contentOf(job, printer);
    if (content === undefined) {
      await save(job, {
        status: 'failed',
        claimedBy: null,
        leaseUntil: null,
        error: { code: 'NOTHING_TO_PRINT', message: 'none of the check-ins of the job exists any more' },
      });
      return undefined;
    }
    return {
      jobId: job.jobId,
      printer: {
        printerId: printer.printerId,
        protocol: printer.protocol,
        uri: printer.uri,
        layout: printer.layout,
      },
      labels: content.map((c) => {
        const placed = layOut(c, printer.layout, measure);
        return { ...placed, texts: [...placed.texts] };
      }),
      attempt: Math.max(1, job.attempts),
      leaseUntil: job.leaseUntil ?? clock().toISOString(),
    };
  };

  /** Claims what is ready for the agent now, and answers it with what it already holds. */
  /** `fresh`: claimed by this call; otherwise the agent already held it. */
  const claimNow = async (agentId: string): Promise<Array<{ job: AgentJob; fresh: boolean }>> => {
    const owner = agentOwner(agentId);
    const served = new Map(
      (await printers.list()).filter((p) => p.agentId === agentId).map((p) => [p.printerId, p] as const),
    );
    if (served.size === 0) return [];
    const open = (await jobs.unfinished())
      .filter((j) => served.has(j.printerId))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.jobId.localeCompare(b.jobId));
    const out: Array<{ job: AgentJob; fresh: boolean }> = [];
    for (const job of open) {
      if (out.length >= MAX_AGENT_JOBS) break;
      const printer = served.get(job.printerId);
      if (printer === undefined) continue;
      const now = clock().getTime();
      const leased = job.claimedBy !== null && Date.parse(job.leaseUntil ?? '') > now;
      let held: PrintJobDoc | undefined;
      if (leased) {
        if (job.claimedBy !== owner) continue;
        held = job;
      } else {
        if (Date.parse(job.notBefore) > now) continue;
        // Past its bound after an attempt met the printer: it fails with what it met (as the worker's).
        if (now >= Date.parse(job.giveUpAt) && job.error !== null) {
          await save(job, { status: 'failed', claimedBy: null, leaseUntil: null });
          continue;
        }
        held = await save(job, {
          status: 'printing',
          attempts: job.attempts + 1,
          claimedBy: owner,
          leaseUntil: new Date(now + leaseMs).toISOString(),
        });
      }
      if (held === undefined) continue;
      const given = await handOut(held, printer);
      if (given !== undefined) out.push({ job: given, fresh: !leased });
    }
    return out;
  };

  const pause = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiting.add(done);
    });

  return {
    async issue(actor, body) {
      const agentId = requestScopedId(actor.requestKey, 'print agent');
      const secret = secretOf(agentId);
      const created = await agents.create({
        agentId,
        name: body.name,
        secretDigest: digestOf(secret),
        createdAt: clock().toISOString(),
        createdBy: actor.principal.userId,
        revokedAt: null,
      });
      const agent = created === 'EXISTS' ? await agents.get(agentId) : created;
      if (agent === undefined) throw new Error(`print agent ${agentId} vanished after its creation`);
      return E.right({ agent, token: `${AGENT_TOKEN_PREFIX}${agentId}_${secret}` });
    },
    list: () => agents.list(),
    async revoke(agentId) {
      for (let i = 0; i < CAS_TRIES; i += 1) {
        const agent = await agents.get(agentId.toLowerCase());
        if (agent === undefined) return E.left(apiError('NOT_FOUND', 'No such print agent.'));
        if (agent.revokedAt !== null) return E.right(agent);
        const { _id: _i, _rev: _r, docType: _d, ...fields } = agent;
        const saved = await agents.update(agent, { ...fields, revokedAt: clock().toISOString() });
        if (saved !== 'CONFLICT') return E.right(saved);
      }
      return E.left(apiError('CONFLICT', 'The print agent kept changing; try again.'));
    },
    async authenticate(token) {
      const parsed = parseAgentToken(token);
      if (parsed === undefined) return undefined;
      const agent = await agents.get(parsed.agentId);
      if (agent === undefined || agent.revokedAt !== null) return undefined;
      // Digests of equal length, compared in constant time: timing tells nothing of the secret.
      if (!sameText(agent.secretDigest, digestOf(parsed.secret))) return undefined;
      // Bookkeeping for the office's list: a failed write does not refuse the agent.
      await seen(agent).catch(() => undefined);
      return {
        userId: agentOwner(agent.agentId),
        roles: [],
        primaryRole: 'PRINT_AGENT',
        permissions: [],
        authMode: 'agent',
        printAgentId: agent.agentId,
      };
    },
    async jobsFor(agentId, waitMs) {
      const until = clock().getTime() + waitMs;
      for (;;) {
        const wokenBefore = woken;
        const found = await claimNow(agentId);
        const left = until - clock().getTime();
        // Jobs the agent already holds come with any answer, but only a new one ends the wait: an agent
        // printing a job would otherwise be answered at once, again and again, until its report lands.
        if (found.some((f) => f.fresh) || left <= 0) return found.map((f) => f.job);
        // A job queued while this call was looking is looked for again at once, not a second later.
        if (woken === wokenBefore) await pause(Math.min(left, recheckMs));
      }
    },
    async report(agentId, jobId, report) {
      const owner = agentOwner(agentId);
      const notYours = () => E.left(apiError('NOT_FOUND', 'No such print job for this agent.'));
      for (let i = 0; i < CAS_TRIES; i += 1) {
        const job = await jobs.get(jobId.toLowerCase());
        if (job === undefined) return notYours();
        const printer = await printers.get(job.printerId);
        if (printer?.agentId !== agentId) return notYours();
        if (job.status === 'done' || job.status === 'failed') return E.right(stateOf(job));
        const holds = job.claimedBy === owner;
        const now = clock().getTime();
        let saved: PrintJobDoc | undefined;
        if (report.status === 'done') {
          saved = await save(job, {
            status: 'done',
            error: null,
            claimedBy: null,
            leaseUntil: null,
            sent: report.sent ?? null,
          });
        } else if (!holds) {
          // A report from an attempt whose claim lapsed: the job has moved on without it.
          return E.right(stateOf(job));
        } else if (report.status === 'printing') {
          saved = await save(job, { leaseUntil: new Date(now + leaseMs).toISOString() });
        } else {
          if (report.error === undefined)
            return E.left(
              apiError('VALIDATION_FAILED', 'A failed attempt says what it met.', {
                issues: [{ path: 'body.error', message: 'required when status is failed' }],
              }),
            );
          const next = afterFailure(report.error.code, job.attempts, now, Date.parse(job.giveUpAt));
          saved = await save(job, {
            status: next.retry ? 'queued' : 'failed',
            error: report.error,
            claimedBy: null,
            leaseUntil: null,
            ...(next.retry ? { notBefore: new Date(next.at).toISOString() } : {}),
          });
        }
        if (saved !== undefined) return E.right(stateOf(saved));
      }
      return E.left(apiError('CONFLICT', 'The print job kept changing; report again.'));
    },
    wake() {
      woken += 1;
      for (const done of [...waiting]) done();
    },
  };
};
