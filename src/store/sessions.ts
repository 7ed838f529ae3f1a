/**
 * Refresh sessions (`auth_refresh_sessions`) in the private database. Only the SHA-256 of a refresh
 * token is stored. Rotation marks the old session with a compare-and-swap, so of two concurrent
 * refreshes with one token at most one wins.
 */
import { type RevokeReason, SessionDoc } from '../domain/session.js';
import { type DocCache, noDocCache, writingThrough } from './docCache.js';
import { decodeDoc, getDoc } from './docs.js';
import { conflictAs } from './docWrites.js';
import { indexIn } from './indexes.js';
import type { Database } from './pouch.js';
import { isConflict } from './storeErrors.js';

export const sessionDocId = (sessionId: string): string => `session:${sessionId}`;

export type NewSession = Omit<SessionDoc, '_id' | '_rev' | 'docType'>;

export interface SessionStore {
  get(sessionId: string): Promise<SessionDoc | undefined>;
  findByRefreshHash(hash: string): Promise<SessionDoc | undefined>;
  create(session: NewSession): Promise<SessionDoc>;
  /** Marks `current` replaced by `next` and creates `next`; `RACE` when another refresh won. */
  rotate(current: SessionDoc, next: NewSession, now: string): Promise<SessionDoc | 'RACE'>;
  revoke(current: SessionDoc, reason: RevokeReason, now: string): Promise<void>;
  /** Revokes every live session of a user (rotated ones included: their access tokens stop too). */
  revokeAllForUser(userId: string, reason: RevokeReason, now: string): Promise<number>;
}

export const sessionStore = (db: Database, cache: DocCache<SessionDoc> = noDocCache()): SessionStore => {
  const put = (doc: SessionDoc | (Omit<SessionDoc, '_rev'> & { _rev?: string })) =>
    writingThrough(cache, doc._id, () => db.put(doc));
  const store: SessionStore = {
    get: (sessionId) => {
      const id = sessionDocId(sessionId);
      return cache.read(id, () => getDoc(db, SessionDoc, id));
    },

    async findByRefreshHash(hash) {
      const found = await db.find({
        selector: { docType: 'session', refreshTokenHash: hash },
        limit: 2,
        use_index: indexIn(db, 'by-docType-refreshTokenHash'),
      });
      const [doc] = found.docs;
      return doc === undefined ? undefined : decodeDoc(SessionDoc, doc._id, doc);
    },

    async create(session) {
      const doc = { _id: sessionDocId(session.sessionId), docType: 'session' as const, ...session };
      const r = await put(doc);
      return { ...doc, _rev: r.rev };
    },

    async rotate(current, next, now) {
      const marked = await conflictAs('RACE', () =>
        put({ ...current, revokedAt: now, revokeReason: 'ROTATED', replacedBy: next.sessionId }),
      );
      return marked === 'RACE' ? marked : store.create(next);
    },

    async revoke(current, reason, now) {
      let doc = current;
      for (let attempt = 0; attempt < 5; attempt += 1) {
        // A final revocation (not a rotation) stands; only a compromise still stamps it.
        const final = doc.revokedAt !== null && doc.revokeReason !== 'ROTATED';
        if (final && reason !== 'COMPROMISED') return;
        try {
          await put({
            ...doc,
            revokedAt: doc.revokedAt ?? now,
            revokeReason: final ? doc.revokeReason : reason,
            suspectedCompromiseAt:
              reason === 'COMPROMISED' ? (doc.suspectedCompromiseAt ?? now) : doc.suspectedCompromiseAt,
          });
          return;
        } catch (e) {
          if (!isConflict(e)) throw e;
          const fresh = await store.get(doc.sessionId);
          if (fresh === undefined) return;
          doc = fresh;
        }
      }
      throw new Error('the session stayed contended');
    },

    async revokeAllForUser(userId, reason, now) {
      const found = await db.find({
        selector: { docType: 'session', userId },
        limit: 100_000,
        use_index: indexIn(db, 'by-docType-userId'),
      });
      const live = found.docs
        .map((raw) => decodeDoc(SessionDoc, raw._id, raw))
        .filter((doc) => doc.revokedAt === null || doc.revokeReason === 'ROTATED');
      for (const doc of live) await store.revoke(doc, reason, now);
      return live.length;
    },
  };
  return store;
};
