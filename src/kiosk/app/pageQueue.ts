/**
 * Pages to a child's guardians from the door (decision 0037). Online, a page is sent at once; offline,
 * or while the server does not know the child's check-in yet (checked in on this tablet moments ago, or
 * offline), it waits in `chamada-pages`, a local database that is never replicated, and is sent when
 * the network returns and the roster names the check-in. Each page carries the Idempotency-Key it was
 * made with from the first try to the last, so a resend whose first attempt did reach the server pages
 * nobody twice.
 *
 * A waiting page leaves the queue once the server has answered it for good: sent, or refused (too
 * soon after another page, the child gone, a check-in the server never accepted). The server keeps a
 * 4xx answer for its key, so sending it again could only repeat the refusal. A 503 (the notifier
 * reached nobody) and anything short of an answer keep it waiting.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import PouchDB from 'pouchdb-browser';

export interface PageRequest {
  readonly checkInId: string;
  readonly studentId: string;
  readonly sessionId: string;
  readonly message: string | null;
}

export type PageOutcome =
  | { readonly kind: 'sent'; readonly phonesPaged: number }
  | { readonly kind: 'queued'; readonly why: 'offline' | 'unconfirmed' }
  | { readonly kind: 'rate_limited'; readonly retryAfterSeconds: number }
  | { readonly kind: 'not_in_room' }
  | { readonly kind: 'not_delivered' }
  | { readonly kind: 'failed' };

/** Whether a waiting page may go now: the server knows its check-in, or not yet. */
export type Readiness = 'send' | 'wait';

const QueuedPage = t.type({
  _id: t.string,
  _rev: t.string,
  key: t.string,
  checkInId: t.string,
  studentId: t.string,
  sessionId: t.string,
  message: t.union([t.string, t.null]),
  queuedAt: t.string,
});
type QueuedPage = t.TypeOf<typeof QueuedPage>;

const Sent = t.type({ phonesPaged: t.number });
const Refusal = t.type({
  error: t.type({ code: t.string, details: t.union([t.UnknownRecord, t.undefined]) }),
});
const RetryAfter = t.type({ retryAfterSeconds: t.number });

/** What one attempt came to: an outcome to keep, or none (keep waiting). */
type Attempt = PageOutcome | 'unanswered';

export interface PageQueue {
  /** Sends the page now, or queues it (offline, or `readiness` says the server does not know the check-in). */
  send(page: PageRequest, readiness: Readiness): Promise<PageOutcome>;
  /** How many pages wait, and how many the server refused after they waited. */
  counts(): { readonly waiting: number; readonly refused: number };
  /** Sends the waiting pages that may go; one pass at a time. */
  flush(readiness: (page: PageRequest) => Readiness): Promise<void>;
  onChange(listener: () => void): void;
  load(): Promise<void>;
}

const readJson = async (res: Response): Promise<unknown> => {
  try {
    return await res.json();
  } catch {
    return undefined;
  }
};

const outcomeOf = async (res: Response): Promise<Attempt> => {
  const body = await readJson(res);
  if (res.status === 201) {
    const sent = Sent.decode(body);
    return { kind: 'sent', phonesPaged: E.isRight(sent) ? sent.right.phonesPaged : 0 };
  }
  // The session ended or the token was refused: the page waits for the next sign-in.
  if (res.status === 401 || res.status >= 500)
    return res.status === 503 ? { kind: 'not_delivered' } : 'unanswered';
  const refusal = Refusal.decode(body);
  if (res.status === 429) {
    const wait = E.isRight(refusal) ? RetryAfter.decode(refusal.right.error.details) : undefined;
    return {
      kind: 'rate_limited',
      retryAfterSeconds: wait !== undefined && E.isRight(wait) ? wait.right.retryAfterSeconds : 60,
    };
  }
  if (res.status === 404 || res.status === 409) return { kind: 'not_in_room' };
  return { kind: 'failed' };
};

export const makePageQueue = (authedFetch: typeof fetch): PageQueue => {
  const db = new PouchDB('chamada-pages');
  let waiting: QueuedPage[] = [];
  let refused = 0;
  const listeners: Array<() => void> = [];
  const changed = () => {
    for (const l of listeners) l();
  };

  const load = async () => {
    const all = await db.allDocs({ include_docs: true });
    waiting = all.rows
      .flatMap((r) => {
        const d = QueuedPage.decode(r.doc);
        return E.isRight(d) ? [d.right] : [];
      })
      .sort((a, b) => a.queuedAt.localeCompare(b.queuedAt));
  };

  const post = async (key: string, page: PageRequest): Promise<Attempt> => {
    let res: Response;
    try {
      res = await authedFetch(`/api/v1/check-ins/${encodeURIComponent(page.checkInId)}/page`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
        body: JSON.stringify(page.message === null ? {} : { message: page.message }),
        cache: 'no-store',
      });
    } catch {
      return 'unanswered';
    }
    return outcomeOf(res);
  };

  const enqueue = async (key: string, page: PageRequest) => {
    await db.put({ _id: `page:${key}`, key, ...page, queuedAt: new Date().toISOString() });
    await load();
    changed();
  };

  let flushing: Promise<void> | undefined;
  const flushOnce = async (readiness: (page: PageRequest) => Readiness) => {
    for (const queued of [...waiting]) {
      if (!navigator.onLine) return;
      if (readiness(queued) === 'wait') continue;
      const attempt = await post(queued.key, queued);
      // No answer: the network or the session is gone again; the next pass tries them all.
      if (attempt === 'unanswered') return;
      if (attempt.kind === 'not_delivered') continue;
      if (attempt.kind !== 'sent') refused += 1;
      await db.remove(queued._id, queued._rev);
      await load();
      changed();
    }
  };

  return {
    async send(page, readiness) {
      const key = crypto.randomUUID();
      if (!navigator.onLine || readiness === 'wait') {
        await enqueue(key, page);
        return { kind: 'queued', why: navigator.onLine ? 'unconfirmed' : 'offline' };
      }
      const attempt = await post(key, page);
      if (attempt !== 'unanswered') return attempt;
      // Perhaps it reached the server and the answer was lost: the same key makes the resend harmless.
      await enqueue(key, page);
      return { kind: 'queued', why: 'offline' };
    },
    counts: () => ({ waiting: waiting.length, refused }),
    flush(readiness) {
      flushing ??= flushOnce(readiness).finally(() => {
        flushing = undefined;
      });
      return flushing;
    },
    onChange: (l) => {
      listeners.push(l);
    },
    load,
  };
};
