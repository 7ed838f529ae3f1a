/**
 * From a check-in's answer to the printer holding the label (0051, issue #38): the door checks a
 * child in, asks for the label at once (`POST /api/v1/print-jobs`), and the service renders it and
 * sends it to a real IPP Everywhere printer (`ippeveprinter`, PWG Raster only, as the package
 * starts it, with a print command that returns at once: test/support/ippEverywhere.ts). The time is from the check-in's answer to the instant
 * the service recorded the printer's acceptance of the Print-Job (the job's `updatedAt` when it is
 * `done`; the service runs in this process, on the same clock). One door, one family at a time, each
 * its own child, each child a family whose stub carries its pass's QR code; the row is the p95 of
 * each run, the median of the runs.
 *
 * `print-agent` (0054): the same, the printer served by a print agent (in this process, its waiting
 * call to the service over HTTP, as `npm run print-agent` keeps one), so the time adds the agent's
 * wake-up, the job's hand-out and its report.
 */
import { randomUUID } from 'node:crypto';
import * as t from 'io-ts';
import { type RunningAgent, startPrintAgent } from '../../src/printAgent/agent.js';
import {
  type DnsSd,
  requirePrintTools,
  startDnsSd,
  startIppEverywhere,
} from '../../test/support/ippEverywhere.js';
import { createdId, seedSmallRoster } from '../../test/support/seed.js';
import {
  authHeaders,
  DEV_TOKENS,
  mutationHeaders,
  startTestService,
} from '../../test/support/testService.js';
import { median, percentile, spread } from '../stats.js';
import type { ScenarioResult } from './types.js';

const Answer = t.type({ checkInId: t.string });
const Accepted = t.type({ jobId: t.string });
const Job = t.type({ status: t.string, updatedAt: t.string });

const post = async <C extends t.Mixed>(url: string, body: unknown, codec: C): Promise<t.TypeOf<C>> => {
  const res = await fetch(url, {
    method: 'POST',
    headers: mutationHeaders(DEV_TOKENS.DEV_CALLER_TOKEN, randomUUID()),
    body: JSON.stringify(body),
  });
  const json: unknown = await res.json();
  const decoded = codec.decode(json);
  if (decoded._tag === 'Left') throw new Error(`${url} answered ${res.status}: ${JSON.stringify(json)}`);
  return decoded.right;
};

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

export const printLatencyThroughAgent = (quick: boolean): Promise<ScenarioResult> => measure(quick, 'agent');

export const printLatency = (quick: boolean): Promise<ScenarioResult> => measure(quick, 'service');

const measure = async (quick: boolean, via: 'service' | 'agent'): Promise<ScenarioResult> => {
  await requirePrintTools();
  const dnsSd: DnsSd = await startDnsSd();
  const printer = await startIppEverywhere();
  // The door polls its job as fast as the bench can; the per-device limit would answer 429.
  const svc = await startTestService({ env: { LOG_LEVEL: 'warn', RATE_LIMIT_REQUESTS: '0' } });
  let running: RunningAgent | undefined;
  try {
    const runs = quick ? 2 : 3;
    const perRun = quick ? 20 : 50;
    const warmUp = 3;
    const { classId, sessionId } = await seedSmallRoster(svc.url, [], new Date().toISOString().slice(0, 10));
    // Each child a family of its own (a guardian phone), so each stub carries its family pass's QR code
    // as a family's does at the door (0051, item 4).
    const studentIds: string[] = [];
    for (let i = 0; i < warmUp + runs * perRun; i += 1)
      studentIds.push(
        await createdId(
          svc.url,
          '/api/v1/students',
          {
            displayName: `Criança ${i + 1}`,
            guardianName: `Responsável ${i + 1}`,
            phones: [{ number: `11 9${String(70_000_000 + i)}`, qualifier: 'mãe' }],
            classId,
          },
          'studentId',
        ),
      );
    const roster = { sessionId, studentIds };
    let agentId: string | undefined;
    if (via === 'agent') {
      const issued = await fetch(`${svc.url}/api/v1/print-agents`, {
        method: 'POST',
        headers: mutationHeaders(DEV_TOKENS.DEV_ADMIN_TOKEN, randomUUID()),
        body: JSON.stringify({ name: 'Bench' }),
      });
      const agent = t
        .type({ agent: t.type({ agentId: t.string }), token: t.string })
        .decode(await issued.json());
      if (agent._tag === 'Left') throw new Error('no print agent');
      agentId = agent.right.agent.agentId;
      running = startPrintAgent({ server: svc.url, token: agent.right.token, log: quiet });
    }
    const printerRes = await fetch(`${svc.url}/api/v1/printers`, {
      method: 'POST',
      headers: mutationHeaders(DEV_TOKENS.DEV_ADMIN_TOKEN, randomUUID()),
      body: JSON.stringify({
        name: 'Bench',
        protocol: 'ipp',
        uri: printer.uri,
        layout: 'brother62',
        ...(agentId === undefined ? {} : { agentId }),
      }),
    });
    const printerId = t.type({ printerId: t.string }).decode(await printerRes.json());
    if (printerId._tag === 'Left') throw new Error('no printer');
    let next = 0;
    const family = async (): Promise<number> => {
      const studentId = roster.studentIds[next] ?? '';
      next += 1;
      const checkIn = await post(
        `${svc.url}/api/v1/check-in`,
        { studentId, sessionId: roster.sessionId },
        Answer,
      );
      const answered = Date.now();
      const { jobId } = await post(
        `${svc.url}/api/v1/print-jobs`,
        { printerId: printerId.right.printerId, checkInIds: [checkIn.checkInId] },
        Accepted,
      );
      for (let i = 0; i < 2_000; i += 1) {
        const res = await fetch(`${svc.url}/api/v1/print-jobs/${jobId}`, {
          headers: authHeaders(DEV_TOKENS.DEV_CALLER_TOKEN),
        });
        const job = Job.decode(await res.json());
        if (job._tag === 'Right' && job.right.status === 'done')
          return Date.parse(job.right.updatedAt) - answered;
        if (job._tag === 'Right' && job.right.status === 'failed')
          throw new Error(`print job ${jobId} failed`);
        await new Promise((r) => setTimeout(r, 5));
      }
      const last = await fetch(`${svc.url}/api/v1/print-jobs/${jobId}`, {
        headers: authHeaders(DEV_TOKENS.DEV_CALLER_TOKEN),
      });
      throw new Error(`print job ${jobId} did not finish: ${await last.text()}`);
    };
    for (let i = 0; i < warmUp; i += 1) await family();
    const p95s: number[] = [];
    const all: number[] = [];
    for (let r = 0; r < runs; r += 1) {
      const samples: number[] = [];
      for (let i = 0; i < perRun; i += 1) samples.push(await family());
      p95s.push(percentile(samples, 95));
      all.push(...samples);
    }
    return {
      scenario:
        via === 'agent'
          ? "check-in's answer → the printer holds the label, through a print agent (p95 of a run, one door)"
          : "check-in's answer → the IPP Everywhere printer holds the label (p95 of a run, one door)",
      unit: 'ms',
      median: median(p95s),
      spread: spread(p95s),
      p99Ms: percentile(all, 99),
      baseline: undefined,
      ratio: undefined,
      target: 'p95 ≤ 500 ms (issue #38)',
      runs,
    };
  } finally {
    await running?.stop(5_000);
    await svc.dispose();
    await printer.stop();
    await dnsSd.stop();
  }
};
