/**
 * Paging a checked-in child's guardians from the door (decision 0037): the page goes through the
 * notifier to the phones on the child's record, and the answer says how many were reached, never
 * which. The limit comes from the pure rule (`rules/pages.ts`) over the pages recorded for the child
 * at the session; the record is claimed under its sequence number before anything is sent, so two
 * instances cannot both send the one page the limit allows. A page the notifier refused on every phone
 * is not a page: its claim is released, the request answers 503, and a retry (with the same
 * Idempotency-Key: a 5xx is not kept for replay, nor is the limit's 429) tries again.
 */
import * as E from 'fp-ts/lib/Either.js';
import type { CheckinDoc } from '../domain/checkin.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { PageDoc } from '../domain/pages.js';
import type { Actor } from '../domain/principal.js';
import { requestScopedId } from '../lib/requestIds.js';
import type { Notifier } from '../notify/notifier.js';
import { decidePage, guardianPhones, PAGE_LIMITS, type PageLimits, pageText } from '../rules/pages.js';
import type { CheckinStore } from '../store/checkins.js';
import type { ClassStore } from '../store/classes.js';
import type { PageStore } from '../store/pages.js';
import type { StudentStore } from '../store/students.js';

export const PAGE_PURPOSE = 'guardian-page';

/** Claims lost to concurrent pages of the same child before the request gives up (409). */
const CLAIM_ATTEMPTS = 5;

export interface PageServiceDeps {
  readonly checkins: Pick<CheckinStore, 'get'>;
  readonly students: Pick<StudentStore, 'get'>;
  readonly classes: Pick<ClassStore, 'getSession'>;
  readonly pages: PageStore;
  readonly notifier: Notifier;
  readonly clock: () => Date;
  readonly limits?: PageLimits;
  /** Told of each phone the notifier refused (the error only; the number is never passed on). */
  readonly onNotifierFailure?: (e: unknown) => void;
}

export interface PageService {
  page(actor: Actor, checkInId: string, message: string | null): Promise<E.Either<ApiError, PageDoc>>;
  ofSession(sessionId: string): Promise<E.Either<ApiError, PageDoc[]>>;
}

const notOpen = (c: CheckinDoc): ApiError | undefined =>
  c.status === 'CHECKED_OUT'
    ? apiError('CONFLICT', 'The child is already checked out.', { reason: 'ALREADY_CHECKED_OUT' })
    : c.status === 'SUPERSEDED'
      ? apiError('CONFLICT', 'This check-in lost to a concurrent check-in of the same child.', {
          reason: 'CHECKIN_SUPERSEDED',
        })
      : undefined;

export const pageService = (deps: PageServiceDeps): PageService => {
  const limits = deps.limits ?? PAGE_LIMITS;

  /** Sends the claimed page to every phone; the claim becomes SENT, or is released when none took it. */
  const deliver = async (
    claim: PageDoc,
    phones: ReadonlyArray<string>,
    childName: string,
  ): Promise<E.Either<ApiError, PageDoc>> => {
    const text = pageText(childName, claim.message);
    const results = await Promise.allSettled(
      phones.map((phone) => deps.notifier.sendMessage(phone, text, PAGE_PURPOSE)),
    );
    for (const r of results) if (r.status === 'rejected') deps.onNotifierFailure?.(r.reason);
    const phonesPaged = results.filter((r) => r.status === 'fulfilled').length;
    const phonesFailed = results.length - phonesPaged;
    if (phonesPaged === 0) {
      await deps.pages.release(claim);
      return E.left(apiError('NOTIFICATION_FAILED', undefined, { phonesFailed }));
    }
    const { _id: _i, _rev: _r, docType: _d, ...fields } = claim;
    const sent = { ...fields, status: 'SENT' as const, phonesPaged, phonesFailed };
    const updated = await deps.pages.update(claim, sent);
    // Only this request writes its claim; should another attempt of it have, the page went out all the same.
    return E.right(updated === 'CONFLICT' ? { ...claim, ...sent } : updated);
  };

  return {
    async page(actor, checkInId, message) {
      const checkin = await deps.checkins.get(checkInId);
      if (checkin === undefined) return E.left(apiError('NOT_FOUND', 'No such check-in.'));
      const closed = notOpen(checkin);
      if (closed !== undefined) return E.left(closed);
      const student = await deps.students.get(checkin.studentId);
      if (student === undefined) return E.left(apiError('NOT_FOUND', 'No such student.'));
      const phones = guardianPhones(student.phones);
      if (phones.length === 0) {
        return E.left(
          apiError('CONFLICT', "The child's record has no guardian phone to page.", {
            reason: 'NO_GUARDIAN_PHONE',
          }),
        );
      }
      const { sessionId, studentId } = checkin;
      // Every attempt of one keyed request names the same page, so a retry finds its own.
      const pageId = requestScopedId(actor.requestKey, 'guardian-page');
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt += 1) {
        const pages = await deps.pages.ofChild(sessionId, studentId);
        const mine = pages.find((p) => p.pageId === pageId);
        // Sent by an earlier attempt whose answer was lost: answered again, not sent again.
        if (mine?.status === 'SENT') return E.right(mine);
        // Claimed by an earlier attempt that stopped before the notifier answered: sent now.
        if (mine !== undefined) return deliver(mine, phones, student.displayName);
        const now = deps.clock();
        const decision = decidePage(
          pages.map((p) => Date.parse(p.sentAt)),
          now.getTime(),
          limits,
        );
        if (!decision.allowed) {
          return E.left(
            apiError(
              'RATE_LIMITED',
              decision.reason === 'COOLDOWN'
                ? 'This child was paged moments ago; page again later.'
                : "This child's guardians were paged too often in the last hour; page again later.",
              { reason: decision.reason, retryAfterSeconds: decision.retryAfterSeconds },
              { 'Retry-After': String(decision.retryAfterSeconds) },
            ),
          );
        }
        const claim = await deps.pages.claim({
          seq: pages.reduce((max, p) => Math.max(max, p.seq), 0) + 1,
          pageId,
          checkInId,
          studentId,
          sessionId,
          message,
          status: 'SENDING',
          sentAt: now.toISOString(),
          sentBy: actor.principal.userId,
          deviceId: actor.deviceId,
          phonesPaged: 0,
          phonesFailed: 0,
        });
        // Another request took that number first: read again, and the limit decides on it.
        if (claim === 'TAKEN') continue;
        return deliver(claim, phones, student.displayName);
      }
      return E.left(apiError('CONFLICT', 'This child is being paged by another request; try again.'));
    },

    async ofSession(sessionId) {
      if ((await deps.classes.getSession(sessionId)) === undefined)
        return E.left(apiError('NOT_FOUND', 'No such session.'));
      const pages = await deps.pages.ofSession(sessionId);
      return E.right(pages.sort((a, b) => a.sentAt.localeCompare(b.sentAt) || a._id.localeCompare(b._id)));
    },
  };
};
