/**
 * How many times each family's pass was replaced (decision 0049), in the private database: one
 * document per family that ever had its pass revoked, `familyPass:<familyKey>`. A family without one
 * is at generation 0. The passes themselves are never stored: they are derived from the check-in
 * secret and the generation whenever a card or the roster needs them.
 */
import { FamilyPassDoc, familyPassDocId } from '../domain/familyPass.js';
import { decodeDoc } from './docs.js';
import { retryOnConflict, stayedContended } from './docWrites.js';
import type { Database } from './pouch.js';
import { isNotFound } from './storeErrors.js';

const PREFIX = 'familyPass:';

export interface FamilyPassStore {
  /** The family's generation: 0 until its first revocation. */
  generation(familyKey: string): Promise<number>;
  /** Every family's generation above 0, by family key (one range read). */
  all(): Promise<Map<string, number>>;
  /**
   * Replaces the family's pass: its generation goes up by one, whatever concurrent revocations did
   * (each one issues a card anew), and the stored record names when and by whom. A retry of the last
   * revocation (the same `requestKey`) answers the record it wrote, and replaces nothing again.
   */
  revoke(familyKey: string, at: string, by: string | null, requestKey?: string): Promise<FamilyPassDoc>;
}

export const familyPassStore = (db: Database): FamilyPassStore => {
  const read = async (familyKey: string): Promise<FamilyPassDoc | undefined> => {
    const id = familyPassDocId(familyKey);
    try {
      return decodeDoc(FamilyPassDoc, id, await db.get(id));
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  };
  return {
    generation: async (familyKey) => (await read(familyKey))?.generation ?? 0,
    async all() {
      const found = await db.allDocs({ startkey: PREFIX, endkey: `${PREFIX}\ufff0`, include_docs: true });
      const out = new Map<string, number>();
      for (const row of found.rows) {
        if (row.doc === undefined) continue;
        const doc = decodeDoc(FamilyPassDoc, row.id, row.doc);
        out.set(doc.familyKey, doc.generation);
      }
      return out;
    },
    // Compare-and-swap: a concurrent revocation that wrote first is read again and counted (each
    // loss is another's revocation, so the tries are not bounded).
    revoke: (familyKey, at, by, requestKey) =>
      retryOnConflict(
        Number.POSITIVE_INFINITY,
        async () => {
          const current = await read(familyKey);
          if (current !== undefined && requestKey !== undefined && current.requestKey === requestKey)
            return current;
          const doc = {
            _id: familyPassDocId(familyKey),
            ...(current === undefined ? {} : { _rev: current._rev }),
            docType: 'familyPass' as const,
            familyKey,
            generation: (current?.generation ?? 0) + 1,
            revokedAt: at,
            revokedBy: by,
            requestKey: requestKey ?? null,
          };
          return { ...doc, _rev: (await db.put(doc)).rev };
        },
        stayedContended('the family pass'),
      ),
  };
};
