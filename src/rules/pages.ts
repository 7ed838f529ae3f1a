/**
 * Paging a child's guardians (decision 0037). The limit, counted per child at a session over the pages
 * recorded for them (sent, or being sent; a page the notifier refused is not recorded and costs
 * nothing): one page per `cooldownMs`, and at most `perWindow.limit` pages in any `perWindow.windowMs`
 * (in practice per session: a session rarely lasts longer). A refused request is not a page and is not
 * counted, so pressing again does not push the wait further; the refusal says when a page would be
 * allowed, so obeying Retry-After never earns another 429. Pure: `now` is an argument.
 */
import type { RateLimitPolicy } from './rateLimit.js';

export interface PageLimits {
  readonly cooldownMs: number;
  readonly perWindow: RateLimitPolicy;
}

export const PAGE_LIMITS: PageLimits = {
  cooldownMs: 2 * 60_000,
  perWindow: { limit: 5, windowMs: 60 * 60_000 },
};

export type PageDecision =
  | { readonly allowed: true }
  | {
      readonly allowed: false;
      readonly reason: 'COOLDOWN' | 'TOO_MANY_PAGES';
      readonly retryAfterSeconds: number;
    };

const seconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/** `sentAt`: when each page of the child at the session was recorded, in milliseconds, any order. */
export const decidePage = (
  sentAt: ReadonlyArray<number>,
  now: number,
  limits: PageLimits = PAGE_LIMITS,
): PageDecision => {
  const newestFirst = [...sentAt].sort((a, b) => b - a);
  const last = newestFirst[0];
  if (last !== undefined && now - last < limits.cooldownMs)
    return { allowed: false, reason: 'COOLDOWN', retryAfterSeconds: seconds(last + limits.cooldownMs - now) };
  const { limit, windowMs } = limits.perWindow;
  const inWindow = newestFirst.filter((at) => now - at < windowMs);
  // With `limit` pages in the window, a place frees when the oldest of the newest `limit` leaves it.
  const freeing = inWindow[limit - 1];
  if (freeing !== undefined)
    return { allowed: false, reason: 'TOO_MANY_PAGES', retryAfterSeconds: seconds(freeing + windowMs - now) };
  return { allowed: true };
};

/**
 * The distinct phone numbers on the child's record, which are the N1 guardians' (the record does not
 * tie a phone to a guardian), told apart by their digits so one number written two ways is paged once.
 */
export const guardianPhones = (phones: ReadonlyArray<{ readonly number: string }>): string[] => {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const p of phones) {
    const digits = p.number.replace(/\D/g, '');
    if (digits === '' || seen.has(digits)) continue;
    seen.add(digits);
    out.push(p.number);
  }
  return out;
};

/** The text the guardian's phone shows: the child's name and the volunteer's line, or the default ask. */
export const pageText = (childName: string, message: string | null): string =>
  `Chamada: ${childName} — ${message ?? 'por favor, venha até a sala.'}`;
