/**
 * Wrong codes typed on this tablet, per check-in, so the lock after N failures holds offline too. Kept
 * in a `_local` document of the outbox: never replicated (the sync protocol has no attempt event yet;
 * see decision 0020), and gone only with the outbox itself.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';

const ATTEMPTS_ID = '_local/kiosk-attempts';
const AttemptsDoc = t.type({ _rev: t.string, counts: t.record(t.string, t.number) });

export interface Attempts {
  failed(checkInId: string): Promise<number>;
  addFailure(checkInId: string): Promise<number>;
}

export const makeAttempts = (db: PouchDB.Database): Attempts => {
  const read = async (): Promise<{ rev: string | undefined; counts: Record<string, number> }> => {
    try {
      const decoded = AttemptsDoc.decode(await db.get(ATTEMPTS_ID));
      if (E.isRight(decoded)) return { rev: decoded.right._rev, counts: decoded.right.counts };
    } catch {
      // Nothing recorded yet.
    }
    return { rev: undefined, counts: {} };
  };
  return {
    failed: async (checkInId) => (await read()).counts[checkInId] ?? 0,
    async addFailure(checkInId) {
      const { rev, counts } = await read();
      const next = (counts[checkInId] ?? 0) + 1;
      await db.put({
        _id: ATTEMPTS_ID,
        ...(rev === undefined ? {} : { _rev: rev }),
        counts: { ...counts, [checkInId]: next },
      });
      return next;
    },
  };
};
