/**
 * A batching writer: items queue on a subject and are written in bulk, one batch at a time. When no
 * write is under way an item is written at once (no added latency at low load); everything that
 * arrives while a write is under way forms the next batch, up to `maxBatch` items. Under load, a burst
 * of requests costs one bulk write instead of one write each, and a request never waits on a timer.
 * Batches are written in queue order: items settle in the order they were submitted, which is what
 * lets `flush` wait on the last one only.
 *
 * A failed write is caught inside its batch: that batch's items are reported failed and the stream
 * goes on with the next batch. The writer knows nothing of PouchDB; the write function is given.
 * Used by the audit log and by the bulk puts of the hot stores (`src/store/batchedPut.ts`).
 *
 * A batch carries the items of several callers, so it is written outside any one caller's deadline
 * (`deadline.ts`), and each caller waits for its item's result even past its own: a write is followed
 * to its end, so its writer knows whether it landed (`boundedFetch.ts`, decision 0046).
 */
import {
  catchError,
  defer,
  map,
  Observable,
  type ObservableInput,
  type OperatorFunction,
  of,
  Subject,
  type Subscription,
  take,
  throwIfEmpty,
} from 'rxjs';
import { detached } from './deadline.js';

export type ItemResult<R = void> =
  | { readonly ok: true; readonly value: R }
  | { readonly ok: false; readonly error: unknown };

export interface BatchResult<A, R = void> {
  readonly items: ReadonlyArray<A>;
  /** One per item, in the same order. */
  readonly results: ReadonlyArray<ItemResult<R>>;
}

/** Writes one batch and reports each item's result in order; the first value emitted is taken. */
export type WriteBatch<A, R = void> = (
  items: ReadonlyArray<A>,
) => ObservableInput<ReadonlyArray<ItemResult<R>>>;

export interface BatchingOptions {
  /** The most items one write takes; what is left waits for the next write. */
  readonly maxBatch?: number;
}

export const DEFAULT_MAX_BATCH = 200;

export class WriteReportedNothing extends Error {
  constructor() {
    super('the batch write completed without reporting results');
    this.name = 'WriteReportedNothing';
  }
}

export class WriterClosed extends Error {
  constructor() {
    super('the batch writer is closed');
    this.name = 'WriterClosed';
  }
}

/**
 * Each source item is written at once when no write is under way; items that arrive during a write
 * are queued and written together (at most `maxBatch` a write) when it completes. Completes once the
 * source has completed and the queue is written. RxJS has buffers closed by time, count or a notifier,
 * but none closed by "the previous write finished", which is the batching that adds no latency.
 */
export const batchWhileBusy =
  <A, B>(write: (batch: ReadonlyArray<A>) => Observable<B>, maxBatch: number): OperatorFunction<A, B> =>
  (source) =>
    new Observable<B>((subscriber) => {
      const queue: A[] = [];
      let busy = false;
      let ended = false;
      let pumping = false;
      let inFlight: Subscription | undefined;
      const pump = (): void => {
        // A write that completes synchronously calls back in here; the loop below takes the rest.
        if (pumping) return;
        pumping = true;
        try {
          while (!busy && !subscriber.closed && queue.length > 0) {
            busy = true;
            const running = write(queue.splice(0, Math.max(1, maxBatch))).subscribe({
              next: (value) => subscriber.next(value),
              error: (e: unknown) => subscriber.error(e),
              complete: () => {
                busy = false;
                inFlight = undefined;
                pump();
              },
            });
            if (busy) inFlight = running;
          }
          if (!busy && ended && queue.length === 0) subscriber.complete();
        } finally {
          pumping = false;
        }
      };
      const upstream = source.subscribe({
        next: (item) => {
          queue.push(item);
          pump();
        },
        error: (e: unknown) => subscriber.error(e),
        complete: () => {
          ended = true;
          pump();
        },
      });
      return () => {
        upstream.unsubscribe();
        inFlight?.unsubscribe();
      };
    });

const failedAll = <A, R>(items: ReadonlyArray<A>, error: unknown): BatchResult<A, R> => ({
  items,
  results: items.map((): ItemResult<R> => ({ ok: false, error })),
});

export const batchWrites$ = <A, R = void>(
  items$: Observable<A>,
  write: WriteBatch<A, R>,
  options: BatchingOptions = {},
): Observable<BatchResult<A, R>> =>
  items$.pipe(
    batchWhileBusy(
      (batch) =>
        defer(() => write(batch)).pipe(
          take(1),
          throwIfEmpty(() => new WriteReportedNothing()),
          map(
            (results): BatchResult<A, R> => ({
              items: batch,
              // A write that reports fewer results than items has not vouched for the rest.
              results: batch.map((_, i) => results[i] ?? { ok: false, error: new WriteReportedNothing() }),
            }),
          ),
          catchError((error: unknown) => of(failedAll<A, R>(batch, error))),
        ),
      options.maxBatch ?? DEFAULT_MAX_BATCH,
    ),
  );

export interface BatchWriter<A, R = void> {
  /** Resolves with the item's result once its batch is written; rejects with the reason it failed. */
  submit(item: A): Promise<R>;
  /** Resolves once every item submitted before the call has settled, stored or failed. */
  flush(): Promise<void>;
  /** Takes no more items, writes what is queued and resolves when the last write has settled. */
  close(): Promise<void>;
}

interface Pending<A, R> {
  readonly item: A;
  readonly settle: (result: ItemResult<R>) => void;
}

const asError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

export const batchWriter = <A, R = void>(
  write: WriteBatch<A, R>,
  options: BatchingOptions = {},
): BatchWriter<A, R> => {
  const pending$ = new Subject<Pending<A, R>>();
  let closed = false;
  // Items settle in submission order, so the last submitted item settling means all before it have.
  // This is a promise of its own, not the caller's: a caller's rejection stays the caller's to handle.
  let lastSettled: Promise<void> = Promise.resolve();
  const stopped = new Promise<void>((resolve) => {
    batchWrites$(pending$, (batch) => detached(() => write(batch.map((p) => p.item))), options).subscribe({
      next: ({ items, results }) => {
        items.forEach((p, i) => {
          p.settle(results[i] ?? { ok: false, error: new WriteReportedNothing() });
        });
      },
      complete: resolve,
      // Unreachable while every write error is caught per batch; never leave `close` hanging.
      error: () => {
        closed = true;
        resolve();
      },
    });
  });

  return {
    submit(item) {
      if (closed) return Promise.reject(new WriterClosed());
      let markSettled: () => void = () => undefined;
      lastSettled = new Promise<void>((resolve) => {
        markSettled = resolve;
      });
      return new Promise<R>((resolve, reject) => {
        pending$.next({
          item,
          settle: (result) => {
            if (result.ok) resolve(result.value);
            else reject(asError(result.error));
            markSettled();
          },
        });
      });
    },

    flush: () => lastSettled,

    close() {
      if (!closed) {
        closed = true;
        // Completing the source lets the queue drain; the stream completes after the last write.
        pending$.complete();
      }
      return stopped;
    },
  };
};
