/**
 * When a print job is tried again (0051). A printer that is off, unreachable or answering garbage is
 * tried again (and so is one that answers it is busy or not accepting jobs) after a wait that doubles from 1 s up to 10 s, until the job's give-up instant; an attempt
 * is not started when it could not end before that instant. A printer that answered and refused the
 * job, one that lists no format the service renders, or a job with nothing left to print is not tried
 * again: the same job would meet the same answer.
 */
import type { PrintFailureCode } from '../domain/printing.js';

export const FIRST_WAIT_MS = 1_000;
export const LONGEST_WAIT_MS = 10_000;

/** An attempt's own bound: connecting, the printer's answers and sending the document. */
export const ATTEMPT_TIMEOUT_MS = 10_000;

const TRANSIENT: ReadonlySet<PrintFailureCode> = new Set([
  'PRINTER_UNREACHABLE',
  'PRINTER_TIMEOUT',
  'PRINTER_BAD_ANSWER',
  'PRINTER_BUSY',
]);

export const isTransient = (code: PrintFailureCode): boolean => TRANSIENT.has(code);

export type AfterFailure = { readonly retry: true; readonly at: number } | { readonly retry: false };

/**
 * What follows the failed attempt number `attempts` (1 for the first), ended at `now` (ms), for a job
 * that gives up at `giveUpAt` (ms). `attemptMs` is how long an attempt may take.
 */
export const afterFailure = (
  code: PrintFailureCode,
  attempts: number,
  now: number,
  giveUpAt: number,
  attemptMs: number = ATTEMPT_TIMEOUT_MS,
): AfterFailure => {
  if (!isTransient(code)) return { retry: false };
  const wait = Math.min(LONGEST_WAIT_MS, FIRST_WAIT_MS * 2 ** Math.max(0, attempts - 1));
  const at = now + wait;
  // An attempt that starts at `at` must be able to end before the job gives up; the last attempt
  // is then shortened rather than skipped when at least a second of it fits.
  if (at >= giveUpAt) return { retry: false };
  return at + Math.min(attemptMs, 1_000) <= giveUpAt ? { retry: true, at } : { retry: false };
};

/** How long an attempt that starts at `now` may take: its own bound, or what is left before giving up. */
export const attemptBudget = (
  now: number,
  giveUpAt: number,
  attemptMs: number = ATTEMPT_TIMEOUT_MS,
): number => Math.max(1_000, Math.min(attemptMs, giveUpAt - now));
