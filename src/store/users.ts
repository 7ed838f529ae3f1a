/**
 * Users in the private database. Email uniqueness is a create-only claim document per normalised
 * email, so two concurrent creations with one email cannot both succeed (also across instances).
 * The active-ADMIN set lives in one guard document changed by compare-and-swap, so two admins
 * demoting each other at once cannot leave the service without one.
 */
import { createHash } from 'node:crypto';
import * as t from 'io-ts';
import { UserDoc } from '../domain/user.js';
import { nextActiveAdmins } from '../rules/sessions.js';
import { type DocCache, noDocCache, writingThrough } from './docCache.js';
import { getDoc, listDocs } from './docs.js';
import { retryOnConflict, stayedContended, takeClaim } from './docWrites.js';
import { indexIn } from './indexes.js';
import type { Database } from './pouch.js';
import { isConflict, isNotFound } from './storeErrors.js';

export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

const emailClaimId = (email: string): string =>
  `user-email:${createHash('sha256').update(normaliseEmail(email), 'utf8').digest('hex')}`;

export const userDocId = (userId: string): string => `user:${userId}`;

const EmailClaim = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('userEmail'),
  userId: t.string,
});
const AdminGuard = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('adminGuard'),
  activeAdmins: t.array(t.string),
});
const ADMIN_GUARD_ID = 'admin-guard';

export type NewUser = Omit<UserDoc, '_id' | '_rev' | 'docType'>;

export interface UserStore {
  get(userId: string): Promise<UserDoc | undefined>;
  findByEmail(email: string): Promise<UserDoc | undefined>;
  list(): Promise<UserDoc[]>;
  count(): Promise<number>;
  /** `EMAIL_TAKEN` when another user holds the email. */
  create(user: NewUser): Promise<UserDoc | 'EMAIL_TAKEN'>;
  /** Compare-and-swap on `current._rev`; `CONFLICT` when it changed meanwhile. */
  update(current: UserDoc, next: NewUser): Promise<UserDoc | 'EMAIL_TAKEN' | 'CONFLICT'>;
  /** Applies a change to the active-ADMIN set; `LAST_ADMIN` when it would leave none. */
  changeActiveAdmins(change: { remove?: string; add?: string }): Promise<'OK' | 'LAST_ADMIN'>;
  /** Recomputes the active-ADMIN set from the users (at start, repairing an interrupted change). */
  rebuildActiveAdmins(): Promise<ReadonlyArray<string>>;
}

export const userStore = (db: Database, cache: DocCache<UserDoc> = noDocCache()): UserStore => {
  const claimEmail = (email: string, userId: string): Promise<boolean> =>
    takeClaim(
      db,
      EmailClaim,
      { _id: emailClaimId(email), docType: 'userEmail', userId },
      (held) => held.userId === userId,
      // A claim left by a user creation that failed half-way points at no user: take it over.
      async (held) => (await getDoc(db, UserDoc, userDocId(held.userId))) === undefined,
    );
  const releaseEmail = async (email: string): Promise<void> => {
    const claim = await getDoc(db, EmailClaim, emailClaimId(email));
    if (claim !== undefined) await db.remove(claim._id, claim._rev).catch(() => undefined);
  };

  const store: UserStore = {
    get: (userId) => {
      const id = userDocId(userId);
      return cache.read(id, () => getDoc(db, UserDoc, id));
    },

    async findByEmail(email) {
      const claim = await getDoc(db, EmailClaim, emailClaimId(email));
      if (claim === undefined) return undefined;
      const user = await store.get(claim.userId);
      return user !== undefined && normaliseEmail(user.email) === normaliseEmail(email) ? user : undefined;
    },

    async list() {
      const users = await listDocs(db, UserDoc, 'user');
      return users.sort((a, b) => normaliseEmail(a.email).localeCompare(normaliseEmail(b.email)));
    },

    async count() {
      const found = await db.find({
        selector: { docType: 'user' },
        fields: ['_id'],
        limit: 1,
        use_index: indexIn(db, 'by-docType'),
      });
      return found.docs.length;
    },

    async create(user) {
      if (!(await claimEmail(user.email, user.userId))) return 'EMAIL_TAKEN';
      try {
        const id = userDocId(user.userId);
        const r = await writingThrough(cache, id, () => db.put({ _id: id, docType: 'user', ...user }));
        return { _id: userDocId(user.userId), _rev: r.rev, docType: 'user', ...user };
      } catch (e) {
        await releaseEmail(user.email);
        throw e;
      }
    },

    async update(current, next) {
      const emailChanged = normaliseEmail(current.email) !== normaliseEmail(next.email);
      if (emailChanged && !(await claimEmail(next.email, current.userId))) return 'EMAIL_TAKEN';
      try {
        const r = await writingThrough(cache, current._id, () =>
          db.put({ _id: current._id, _rev: current._rev, docType: 'user', ...next }),
        );
        if (emailChanged) await releaseEmail(current.email);
        return { _id: current._id, _rev: r.rev, docType: 'user', ...next };
      } catch (e) {
        if (emailChanged) await releaseEmail(next.email);
        if (isConflict(e)) return 'CONFLICT';
        throw e;
      }
    },

    changeActiveAdmins: (change) =>
      retryOnConflict(
        20,
        async () => {
          const guard = await getDoc(db, AdminGuard, ADMIN_GUARD_ID);
          const next = nextActiveAdmins(guard?.activeAdmins ?? [], change);
          if (next === 'LAST_ADMIN') return 'LAST_ADMIN';
          await db.put({
            _id: ADMIN_GUARD_ID,
            ...(guard === undefined ? {} : { _rev: guard._rev }),
            docType: 'adminGuard',
            activeAdmins: [...next],
          });
          return 'OK';
        },
        stayedContended('the active-admin guard'),
      ),

    async rebuildActiveAdmins() {
      const admins = (await store.list())
        .filter((u) => u.status === 'ACTIVE' && u.roles.includes('ADMIN'))
        .map((u) => u.userId)
        .sort();
      for (let attempt = 0; attempt < 20; attempt += 1) {
        const guard = await getDoc(db, AdminGuard, ADMIN_GUARD_ID);
        // Nothing to repair (every start but one after an interrupted change): no write, so the
        // private database's sequence, and every feed that follows it, stays where the stop left it.
        if (guard !== undefined && guard.activeAdmins.join('\n') === admins.join('\n')) return admins;
        try {
          await db.put({
            _id: ADMIN_GUARD_ID,
            ...(guard === undefined ? {} : { _rev: guard._rev }),
            docType: 'adminGuard',
            activeAdmins: admins,
          });
          return admins;
        } catch (e) {
          if (!isConflict(e) && !isNotFound(e)) throw e;
        }
      }
      throw new Error('the active-admin guard stayed contended');
    },
  };
  return store;
};
