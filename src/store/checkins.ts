/**
 * Check-in configuration, the check-in secret and check-in records (private database). Attempts and
 * state change by compare-and-swap on the record's revision, so concurrent check-outs are counted
 * exactly; "one open check-in per child and session" is a create-only claim document.
 */
import { randomBytes } from 'node:crypto';
import * as t from 'io-ts';
import {
  type CheckinConfig,
  CheckinConfigDoc,
  CheckinDoc,
  CheckinSecretDoc,
  DEFAULT_CHECKIN_CONFIG,
} from '../domain/checkin.js';
import { getDoc } from './docs.js';
import type { Database } from './pouch.js';
import { isConflict } from './storeErrors.js';

const CONFIG_ID = 'checkin-config';
const SECRET_ID = 'checkin-secret';
export const checkinDocId = (checkInId: string): string => `checkin:${checkInId}`;
const openClaimId = (sessionId: string, studentId: string): string =>
  `checkin-open:${sessionId}:${studentId}`;
const OpenClaim = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('checkinOpen'),
  checkInId: t.string,
});

export type NewCheckin = Omit<CheckinDoc, '_id' | '_rev' | 'docType'>;

export interface CheckinStore {
  config(): Promise<CheckinConfig & { readonly updatedAt: string | null }>;
  saveConfig(config: CheckinConfig, at: string): Promise<void>;
  /** The master secret, created (256 CSPRNG bits) by whichever instance reads it first. Never sent out. */
  secret(at: string): Promise<Uint8Array>;
  get(checkInId: string): Promise<CheckinDoc | undefined>;
  openCheckIn(sessionId: string, studentId: string): Promise<CheckinDoc | undefined>;
  /** `ALREADY_CHECKED_IN` when the child has an open check-in for the session. */
  create(checkin: NewCheckin): Promise<CheckinDoc | 'ALREADY_CHECKED_IN'>;
  /** Compare-and-swap; closing a check-in releases the open claim. */
  update(current: CheckinDoc, next: NewCheckin): Promise<CheckinDoc | 'CONFLICT'>;
}

export const checkinStore = (db: Database): CheckinStore => {
  const store: CheckinStore = {
    async config() {
      const doc = await getDoc(db, CheckinConfigDoc, CONFIG_ID);
      if (doc === undefined) return { ...DEFAULT_CHECKIN_CONFIG, updatedAt: null };
      return {
        pickupMode: doc.pickupMode,
        maxCheckoutAttempts: doc.maxCheckoutAttempts,
        emergencyCheckoutAdminOnly: doc.emergencyCheckoutAdminOnly,
        updatedAt: doc.updatedAt,
      };
    },

    async saveConfig(config, at) {
      for (let attempt = 0; attempt < 5; attempt += 1) {
        const current = await getDoc(db, CheckinConfigDoc, CONFIG_ID);
        try {
          await db.put({
            _id: CONFIG_ID,
            ...(current === undefined ? {} : { _rev: current._rev }),
            docType: 'checkinConfig',
            ...config,
            updatedAt: at,
          });
          return;
        } catch (e) {
          if (!isConflict(e)) throw e;
        }
      }
      throw new Error('the check-in configuration stayed contended');
    },

    async secret(at) {
      const existing = await getDoc(db, CheckinSecretDoc, SECRET_ID);
      if (existing !== undefined) return new Uint8Array(Buffer.from(existing.secret, 'base64url'));
      try {
        await db.put({
          _id: SECRET_ID,
          docType: 'checkinSecret',
          secret: randomBytes(32).toString('base64url'),
          createdAt: at,
        });
      } catch (e) {
        // Another instance created it first: theirs is the secret.
        if (!isConflict(e)) throw e;
      }
      const created = await getDoc(db, CheckinSecretDoc, SECRET_ID);
      if (created === undefined) throw new Error('the check-in secret vanished');
      return new Uint8Array(Buffer.from(created.secret, 'base64url'));
    },

    get: (checkInId) => getDoc(db, CheckinDoc, checkinDocId(checkInId)),

    async openCheckIn(sessionId, studentId) {
      const claim = await getDoc(db, OpenClaim, openClaimId(sessionId, studentId));
      if (claim === undefined) return undefined;
      const doc = await store.get(claim.checkInId);
      return doc?.status === 'CHECKED_IN' ? doc : undefined;
    },

    async create(checkin) {
      const claimId = openClaimId(checkin.sessionId, checkin.studentId);
      try {
        await db.put({ _id: claimId, docType: 'checkinOpen', checkInId: checkin.checkInId });
      } catch (e) {
        if (!isConflict(e)) throw e;
        // A claim left by a check-in that was closed without releasing it (a crash) does not block.
        const claim = await getDoc(db, OpenClaim, claimId);
        const holder = claim === undefined ? undefined : await store.get(claim.checkInId);
        if (claim === undefined || holder?.status === 'CHECKED_IN') return 'ALREADY_CHECKED_IN';
        try {
          await db.put({ ...claim, checkInId: checkin.checkInId });
        } catch (again) {
          if (isConflict(again)) return 'ALREADY_CHECKED_IN';
          throw again;
        }
      }
      const doc = { _id: checkinDocId(checkin.checkInId), docType: 'checkin' as const, ...checkin };
      const r = await db.put(doc);
      return { ...doc, _rev: r.rev };
    },

    async update(current, next) {
      const doc = { _id: current._id, _rev: current._rev, docType: 'checkin' as const, ...next };
      let rev: string;
      try {
        rev = (await db.put(doc)).rev;
      } catch (e) {
        if (isConflict(e)) return 'CONFLICT';
        throw e;
      }
      if (current.status === 'CHECKED_IN' && next.status === 'CHECKED_OUT') {
        const claim = await getDoc(db, OpenClaim, openClaimId(next.sessionId, next.studentId));
        if (claim !== undefined && claim.checkInId === next.checkInId)
          await db.remove(claim._id, claim._rev).catch(() => undefined);
      }
      return { ...doc, _rev: rev };
    },
  };
  return store;
};
