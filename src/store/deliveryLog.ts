/**
 * The notification delivery log (decision 0041) in the `requests` database: what requests leave behind
 * for a while, out of `private`'s change feed. One document per message, written once when its last
 * attempt has ended, `delivery:<start in ms, 15 digits>:<webhook-id>`, so the newest are one
 * descending range read. Kept 30 days: every 50th record also removes what is older (a bounded batch).
 */
import { isPlainObject } from '../domain/codec.js';
import { type DeliveryLog, NotificationDelivery } from '../domain/notifications.js';
import { decodeDoc } from './docs.js';
import type { Database } from './pouch.js';

const PREFIX = 'delivery:';
const TIME_DIGITS = 15;
export const DELIVERY_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
const CLEANUP_EVERY = 50;
const CLEANUP_BATCH = 500;

const idAt = (ms: number): string =>
  `${PREFIX}${String(Math.max(0, Math.floor(ms))).padStart(TIME_DIGITS, '0')}`;

export interface DeliveryLogOptions {
  readonly clock: () => Date;
  /** Told when the background removal of old entries fails (the log itself is unaffected). */
  readonly onCleanupFailure?: (e: unknown) => void;
}

export const deliveryLog = (db: Database, options: DeliveryLogOptions): DeliveryLog => {
  let recorded = 0;
  const removeExpired = async (): Promise<void> => {
    const old = await db.allDocs({
      startkey: PREFIX,
      endkey: idAt(options.clock().getTime() - DELIVERY_RETENTION_MS),
      limit: CLEANUP_BATCH,
    });
    if (old.rows.length === 0) return;
    await db.bulkDocs(old.rows.map((r) => ({ _id: r.id, _rev: r.value.rev, _deleted: true })));
  };
  return {
    async record(delivery) {
      const doc = {
        _id: `${idAt(Date.parse(delivery.startedAt))}:${delivery.deliveryId}`,
        docType: 'notificationDelivery' as const,
        ...delivery,
      };
      await db.put(doc);
      recorded += 1;
      if (recorded % CLEANUP_EVERY === 0)
        void removeExpired().catch((e: unknown) => options.onCleanupFailure?.(e));
    },
    async newest(limit) {
      const found = await db.allDocs({
        startkey: `${PREFIX}\ufff0`,
        endkey: PREFIX,
        descending: true,
        limit,
        include_docs: true,
      });
      return found.rows.flatMap((r) => {
        const doc: unknown = r.doc;
        if (!isPlainObject(doc)) return [];
        const { _id: _i, _rev: _r, docType: _d, ...fields } = doc;
        return [decodeDoc(NotificationDelivery, r.id, fields)];
      });
    },
  };
};
