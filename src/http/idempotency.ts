/**
 * Idempotent execution of a mutation: claim (key, principal) in the ledger, run once, store the
 * rendered response, and answer retries with that response. Decisions come from the pure rule in
 * `rules/idempotency.ts`; this module does the IO around them.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { Request } from 'express';
import * as E from 'fp-ts/lib/Either.js';
import { isUuidV4 } from '../domain/codec.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { Claim, ClaimRequest, IdempotencyLedger, LedgerEntry } from '../domain/idempotencyRecord.js';
import { currentDeadline, DeadlinePassed } from '../lib/deadline.js';
import { decideClaim, shouldStore } from '../rules/idempotency.js';
import type { RenderedResponse } from './render.js';

export const IDEMPOTENCY_HEADERS = ['idempotency-key', 'x-idempotency-key'] as const;
export const REPLAY_HEADER = 'Idempotent-Replayed';

export interface IdempotencySettings {
  /** How long a finished response is kept for replay. */
  readonly retentionMs: number;
  /** How long a claim may stay pending before another request may take it over (owner died). */
  readonly leaseMs: number;
  /**
   * How often a waiting request looks at the ledger again, at the latest: the exclusive ledger wakes
   * it as soon as the claim it waits on ends.
   */
  readonly pollMs: number;
}

export const DEFAULT_IDEMPOTENCY_SETTINGS: IdempotencySettings = {
  retentionMs: 24 * 60 * 60 * 1000,
  leaseMs: 60_000,
  pollMs: 25,
};

const keyIssue = (message: string): ApiError =>
  apiError('VALIDATION_FAILED', `The Idempotency-Key header ${message}.`, {
    issues: [{ path: 'headers.idempotency-key', message }],
  });

/** Reads `Idempotency-Key` (or `X-Idempotency-Key`); both present must agree. */
export const idempotencyKeyOf = (req: Request): E.Either<ApiError, string> => {
  const values = IDEMPOTENCY_HEADERS.map((h) => req.headers[h]).filter((v) => v !== undefined);
  if (values.length === 0) return E.left(keyIssue('is required on every mutation'));
  const [first, ...rest] = values;
  if (typeof first !== 'string' || rest.some((v) => v !== first)) {
    return E.left(keyIssue('must be given once (Idempotency-Key and X-Idempotency-Key must agree)'));
  }
  if (!isUuidV4(first)) return E.left(keyIssue('must be a UUID v4'));
  return E.right(first.toLowerCase());
};

/**
 * SHA-256 of the canonical JSON (RFC 8785) of what makes two requests "the same": method, route,
 * path parameters, query and body. Header order, whitespace and key order do not matter.
 */
export const requestFingerprint = (parts: {
  method: string;
  route: string;
  params: unknown;
  query: unknown;
  body: unknown;
}): E.Either<ApiError, string> => {
  let canonical: string | undefined;
  try {
    // A file body is fingerprinted by its digest: canonical JSON of its bytes would be a number per byte.
    const body =
      parts.body instanceof Uint8Array
        ? { sha256: createHash('sha256').update(parts.body).digest('hex') }
        : (parts.body ?? null);
    canonical = canonicalize({ ...parts, body });
  } catch {
    // canonicalize refuses lone surrogates: the body is not valid Unicode text.
    return E.left(
      apiError('VALIDATION_FAILED', 'The request body holds invalid Unicode.', {
        issues: [{ path: 'body', message: 'invalid Unicode (lone surrogate)' }],
      }),
    );
  }
  if (canonical === undefined) return E.left(apiError('VALIDATION_FAILED'));
  return E.right(createHash('sha256').update(canonical, 'utf8').digest('hex'));
};

export type IdempotentOutcome =
  | {
      readonly kind: 'fresh';
      readonly response: RenderedResponse;
      /**
       * Settles (never rejects) once the response is in the ledger, or its write failed and was
       * reported. The caller sends the response only after it, and may write its audit entry meanwhile.
       */
      readonly recorded: Promise<void>;
    }
  | { readonly kind: 'replay'; readonly response: RenderedResponse; readonly correlationId: string }
  | { readonly kind: 'rejected'; readonly error: ApiError };

const replayOf = (entry: Extract<LedgerEntry, { state: 'complete' }>): IdempotentOutcome => ({
  kind: 'replay',
  correlationId: entry.response.correlationId,
  response: {
    status: entry.response.status,
    headers: entry.response.headers,
    contentType: entry.response.contentType,
    body: entry.response.body,
  },
});

export interface ExecuteArgs {
  readonly ledger: IdempotencyLedger;
  readonly clock: () => Date;
  readonly settings: IdempotencySettings;
  readonly key: string;
  readonly principalId: string;
  readonly fingerprint: string;
  readonly correlationId: string;
  /** Runs the handler; called at most once per successful claim. */
  /**
   * Runs the mutation; `freshKey` when the ledger held nothing for the key when this attempt claimed
   * it. Usually no earlier attempt ran, but one that failed (its claim released) or died with a
   * process whose claims were in memory may have run in part: a hint for skipping a read that would
   * find nothing, never for a decision.
   */
  readonly run: (freshKey: boolean) => Promise<RenderedResponse>;
  readonly onStoreFailure?: (what: string) => void;
}

export const executeIdempotently = async (args: ExecuteArgs): Promise<IdempotentOutcome> => {
  const { ledger, settings } = args;
  const now = () => args.clock().getTime();
  const startedWaiting = Date.now();
  const request = (): ClaimRequest => ({
    key: args.key,
    principalId: args.principalId,
    fingerprint: args.fingerprint,
    now: now(),
    leaseMs: settings.leaseMs,
    retentionMs: settings.retentionMs,
  });
  // The common case is a fresh key: try the create-only claim first and read only when it is taken.
  const first = request();
  const claimed = await ledger.claim(first);
  if (claimed !== undefined) return { kind: 'fresh', ...(await runClaimed(args, claimed, first, true)) };
  for (;;) {
    const existing = await ledger.get(args.key, args.principalId);
    const decision = decideClaim(existing, args.fingerprint, now());
    if (decision === 'reject-different-payload') {
      return { kind: 'rejected', error: apiError('IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_PAYLOAD') };
    }
    if (decision === 'replay' && existing?.state === 'complete') return replayOf(existing);
    if (decision === 'wait') {
      // Answered 503 at its deadline already (decision 0046): waiting on is waiting for nobody.
      const deadline = currentDeadline();
      if (deadline?.signal.aborted === true) throw new DeadlinePassed(deadline.limitMs);
      // The winner normally finishes in milliseconds; past two leases something is wrong with the ledger.
      if (Date.now() - startedWaiting > 2 * settings.leaseMs) {
        return {
          kind: 'rejected',
          error: apiError('CONFLICT', 'A request with this Idempotency-Key is still running.'),
        };
      }
      await ledger.changed(args.key, args.principalId, settings.pollMs);
      continue;
    }
    const retry = request();
    const claim = await ledger.claim(retry, decision === 'reclaim' ? existing : undefined);
    // Another request claimed it between our read and our write: read again and follow it.
    if (claim === undefined) continue;
    return { kind: 'fresh', ...(await runClaimed(args, claim, retry, false)) };
  }
};

const runClaimed = async (
  args: ExecuteArgs,
  claim: Claim,
  request: ClaimRequest,
  freshKey: boolean,
): Promise<{ response: RenderedResponse; recorded: Promise<void> }> => {
  // The lease is renewed every third of it while the handler runs: a lease that ran out under a live
  // handler let a duplicate take the key over and run the mutation a second time (two instances on a
  // loaded cluster, a check-in waiting over a minute for the pipeline's backlog: both answered fresh).
  let held = claim;
  let renewals = Promise.resolve();
  const renewEvery = setInterval(
    () => {
      renewals = renewals.then(async () => {
        const renewed = await args.ledger
          .renew(held, request, args.clock().getTime())
          .catch((): Claim | undefined => {
            args.onStoreFailure?.('renew');
            return held;
          });
        // Taken over meanwhile: the handler finishes, and `complete` refuses to store over the new holder.
        if (renewed !== undefined) held = renewed;
      });
    },
    Math.max(1, Math.floor(args.settings.leaseMs / 3)),
  );
  renewEvery.unref();
  let response: RenderedResponse;
  try {
    response = await args.run(freshKey);
  } catch (e) {
    clearInterval(renewEvery);
    await renewals;
    await args.ledger.release(held).catch(() => args.onStoreFailure?.('release'));
    throw e;
  }
  clearInterval(renewEvery);
  await renewals;
  const body = response.body;
  // Bytes (an image) are only ever a read's answer, never a keyed mutation's: nothing to keep.
  if (!shouldStore(response.status) || typeof body !== 'string') {
    await args.ledger.release(held).catch(() => args.onStoreFailure?.('release'));
    return { response, recorded: Promise.resolve() };
  }
  // Not awaited here: the ledger write and the caller's audit write go to different databases and
  // need not wait for each other (decision 0019); the caller awaits both before it answers.
  const recorded = args.ledger
    .complete(
      held,
      request,
      { ...response, body, headers: { ...response.headers }, correlationId: args.correlationId },
      args.clock().getTime(),
    )
    .catch(() => false)
    .then((stored) => {
      if (!stored) args.onStoreFailure?.('complete');
    });
  return { response, recorded };
};
