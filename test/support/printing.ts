/** Printers and print jobs through the API, as the office and the door use them (0051). */
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import * as t from 'io-ts';
import { call, decodeAs } from './http.js';
import { createdId } from './seed.js';
import { authHeaders, DEV_TOKENS, mutate } from './testService.js';

export const PrintJobC = t.intersection([
  t.type({ jobId: t.string, printerId: t.string, status: t.string, attempts: t.number }),
  t.partial({ error: t.type({ code: t.string, message: t.string }) }),
]);
export type PrintJobSeen = t.TypeOf<typeof PrintJobC>;

export const createPrinter = (
  url: string,
  body: {
    name: string;
    protocol: 'ipp' | 'zpl';
    uri: string;
    layout: string;
    labelLanguage?: string;
    /** The print agent that sends its jobs (0054). */
    agentId?: string;
  },
): Promise<string> => createdId(url, '/api/v1/printers', body, 'printerId');

/** Queues a job as the door does (CHAMADOR) and answers its id. */
export const printLabels = async (
  url: string,
  printerId: string,
  checkInIds: ReadonlyArray<string>,
): Promise<string> => {
  const r = await mutate(
    `${url}/api/v1/print-jobs`,
    'POST',
    { printerId, checkInIds },
    DEV_TOKENS.DEV_CALLER_TOKEN,
  );
  expect(r.status, r.text).to.equal(202);
  return decodeAs(t.type({ jobId: t.string }), r.json).jobId;
};

export const readJob = async (url: string, jobId: string): Promise<PrintJobSeen> => {
  const r = await call(`${url}/api/v1/print-jobs/${jobId}`, {
    headers: authHeaders(DEV_TOKENS.DEV_CALLER_TOKEN),
  });
  expect(r.status, r.text).to.equal(200);
  return decodeAs(PrintJobC, r.json);
};

/**
 * The job once it is `done` or `failed`, read every 50 ms; a job still open after `polls` reads fails
 * the test (a bound on the loop, not a timing assertion).
 */
export const finishedJob = async (url: string, jobId: string, polls = 600): Promise<PrintJobSeen> => {
  for (let i = 0; i < polls; i += 1) {
    const job = await readJob(url, jobId);
    if (job.status === 'done' || job.status === 'failed') return job;
    await sleep(50);
  }
  throw new Error(`print job ${jobId} did not finish`);
};

/** Queues a job for `checkInIds` on `printerId` and answers it once it is `done` or `failed`. */
export const printedJob = async (
  url: string,
  printerId: string,
  checkInIds: ReadonlyArray<string>,
): Promise<PrintJobSeen> => finishedJob(url, await printLabels(url, printerId, checkInIds));

/** Checks children in as the door does and answers their check-in ids and codes. */
export const checkInAll = async (
  url: string,
  sessionId: string,
  studentIds: ReadonlyArray<string>,
): Promise<Array<{ checkInId: string; code: string }>> => {
  const out: Array<{ checkInId: string; code: string }> = [];
  for (const studentId of studentIds) {
    const r = await mutate(
      `${url}/api/v1/check-in`,
      'POST',
      { studentId, sessionId },
      DEV_TOKENS.DEV_CALLER_TOKEN,
    );
    expect(r.status, r.text).to.equal(201);
    out.push(decodeAs(t.type({ checkInId: t.string, code: t.string }), r.json));
  }
  return out;
};
