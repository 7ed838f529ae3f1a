/**
 * The audit log's batching writer. Entries queue on a subject; a batch closes after `windowMs` or at
 * `maxBatch` entries, whichever comes first, so a burst of requests costs one bulk write instead of
 * one write each. Batches are written one at a time in queue order (`concatMap`): entries settle in
 * the order they were submitted, which is what lets `flush` wait on the last one only.
 *
 * A failed write is caught inside its batch: that batch's entries are reported failed and the stream
 * goes on with the next batch. The writer knows nothing of PouchDB; the write function is given.
 */
import {
  asyncScheduler,
  bufferTime,
  catchError,
  concatMap,
  defer,
  filter,
  map,
  type Observable,
  type ObservableInput,
  of,
  type SchedulerLike,
  Subject,
  take,
  throwIfEmpty,
} from 'rxjs';

export type ItemResult = { readonly ok: true } | { readonly ok: false; readonly error: unknown };

export interface BatchResult<A> {
  readonly items: ReadonlyArray<A>;
  /** One per item, in the same order. */
  readonly results: ReadonlyArray<ItemResult>;
}

/** Writes one batch and reports each item's result in order; the first value emitted is taken. */
export type WriteBatch<A> = (items: ReadonlyArray<A>) => ObservableInput<ReadonlyArray<ItemResult>>;

export interface BatchingOptions {
  readonly windowMs?: number;
  readonly maxBatch?: number;
  readonly scheduler?: SchedulerLike;
}

export const AUDIT_WINDOW_MS = 50;
export const AUDIT_MAX_BATCH = 200;

export class WriteReportedNothing extends Error {
  constructor() {
    super('the batch write completed without reporting results');
    this.name = 'WriteReportedNothing';
  }
}

export class WriterClosed extends Error {
  constructor() {
    super('the audit writer is closed');
    this.name = 'WriterClosed';
  }
}

const failedAll = <A>(items: ReadonlyArray<A>, error: unknown): BatchResult<A> => ({
  items,
  results: items.map((): ItemResult => ({ ok: false, error })),
});

export const auditWrites$ = <A>(
  items$: Observable<A>,
  write: WriteBatch<A>,
  options: BatchingOptions = {},
): Observable<BatchResult<A>> =>
  items$.pipe(
    bufferTime(
      options.windowMs ?? AUDIT_WINDOW_MS,
      null,
      options.maxBatch ?? AUDIT_MAX_BATCH,
      options.scheduler ?? asyncScheduler,
    ),
    // The window ticks while idle too; an empty batch is nothing to write.
    filter((batch) => batch.length > 0),
    concatMap((batch) =>
      defer(() => write(batch)).pipe(
        take(1),
        throwIfEmpty(() => new WriteReportedNothing()),
        map(
          (results): BatchResult<A> => ({
            items: batch,
            // A write that reports fewer results than items has not vouched for the rest.
            results: batch.map((_, i) => results[i] ?? { ok: false, error: new WriteReportedNothing() }),
          }),
        ),
        catchError((error: unknown) => of(failedAll(batch, error))),
      ),
    ),
  );

export interface AuditWriter<A> {
  /** Resolves once `item` is stored; rejects with the reason its write failed. */
  submit(item: A): Promise<void>;
  /** Resolves once every item submitted before the call has settled, stored or failed. */
  flush(): Promise<void>;
  /** Takes no more items, writes what is queued and resolves when the last write has settled. */
  close(): Promise<void>;
}

interface Pending<A> {
  readonly item: A;
  readonly settle: (result: ItemResult) => void;
}

const asError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

export const auditWriter = <A>(write: WriteBatch<A>, options: BatchingOptions = {}): AuditWriter<A> => {
  const pending$ = new Subject<Pending<A>>();
  let closed = false;
  // Items settle in submission order, so the last submitted item settling means all before it have.
  // This is a promise of its own, not the caller's: a caller's rejection stays the caller's to handle.
  let lastSettled: Promise<void> = Promise.resolve();
  const stopped = new Promise<void>((resolve) => {
    auditWrites$(pending$, (batch) => write(batch.map((p) => p.item)), options).subscribe({
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
      return new Promise<void>((resolve, reject) => {
        pending$.next({
          item,
          settle: (result) => {
            if (result.ok) resolve();
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
        // Completing the source makes bufferTime emit what it holds; concatMap writes it before completing.
        pending$.complete();
      }
      return stopped;
    },
  };
};
