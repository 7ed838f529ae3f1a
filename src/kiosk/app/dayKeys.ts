/**
 * Day keys the tablet has seen, kept one UTC day longer than the roster keeps them. A code derives from
 * the UTC day of its check-in and the roster sends today's key and the next two; in Brazil a child
 * checked in at 20:30 (23:30 UTC) is collected at 21:30, after UTC midnight, when a fresh pull has
 * already dropped the key the code was made with, and the check-out could not be verified. The tablet
 * held that key yesterday anyway; it is forgotten the day after. Kept in a `_local` document of the
 * roster database, never replicated.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';

const DOC_ID = '_local/kiosk-daykeys';
const KeysDoc = t.type({ _rev: t.string, keys: t.record(t.string, t.string) });

const dayBefore = (day: string): string =>
  new Date(Date.parse(`${day}T00:00:00.000Z`) - 86_400_000).toISOString().slice(0, 10);

/** The pulled keys, and the remembered ones of yesterday and later (UTC); the pulled key wins a day. Pure. */
export const keepDayKeys = (
  remembered: ReadonlyMap<string, string>,
  pulled: ReadonlyMap<string, string>,
  today: string,
): Map<string, string> => {
  const oldest = dayBefore(today);
  const kept = new Map([...remembered].filter(([day]) => day >= oldest));
  for (const [day, key] of pulled) kept.set(day, key);
  return new Map([...kept].sort(([a], [b]) => a.localeCompare(b)));
};

/** Merges the pulled keys into the remembered ones, saves the result, and returns it. */
export const rememberDayKeys = async (
  db: PouchDB.Database,
  pulled: ReadonlyMap<string, string>,
  today: string,
): Promise<ReadonlyMap<string, string>> => {
  let rev: string | undefined;
  let remembered = new Map<string, string>();
  try {
    const decoded = KeysDoc.decode(await db.get(DOC_ID));
    if (E.isRight(decoded)) {
      rev = decoded.right._rev;
      remembered = new Map(Object.entries(decoded.right.keys));
    }
  } catch {
    // Nothing remembered yet.
  }
  const kept = keepDayKeys(remembered, pulled, today);
  const same = kept.size === remembered.size && [...kept].every(([d, k]) => remembered.get(d) === k);
  if (!same) {
    try {
      await db.put({
        _id: DOC_ID,
        ...(rev === undefined ? {} : { _rev: rev }),
        keys: Object.fromEntries(kept),
      });
    } catch (e) {
      // A concurrent load saved first; the next load merges again.
      console.warn('chamada: day keys not saved', e);
    }
  }
  return kept;
};
