/** Image consents in the private database: created once; only the revocation fields are ever set. */
import * as E from 'fp-ts/lib/Either.js';
import { ConsentDoc } from '../domain/consent.js';
import { decodeDoc, getDoc, listDocs } from './docs.js';
import { putDoc } from './docWrites.js';
import { indexIn } from './indexes.js';
import type { Database } from './pouch.js';
import { rewriteEach } from './rewrites.js';

export const consentDocId = (consentId: string): string => `imageConsent:${consentId}`;

export type NewConsent = Omit<ConsentDoc, '_id' | '_rev' | 'docType'>;

export interface ConsentStore {
  get(consentId: string): Promise<ConsentDoc | undefined>;
  /** Every record of a subject, newest first. */
  listForSubject(subjectType: string, subjectId: string): Promise<ConsentDoc[]>;
  listAll(): Promise<ConsentDoc[]>;
  create(consent: NewConsent): Promise<ConsentDoc>;
  /** `ALREADY_REVOKED` when a revocation (this one's or another's) got there first. */
  revoke(
    current: ConsentDoc,
    by: string,
    reason: string,
    at: string,
  ): Promise<ConsentDoc | 'ALREADY_REVOKED'>;
  /**
   * Retention (0045): the personal texts of a subject's consents as `anonymise` makes them (who gave
   * it, a revocation's reason); the record stays as proof of what was consented to and when (LGPD
   * art. 8 §2). Answers how many it rewrote.
   */
  anonymise(
    consentIds: ReadonlyArray<string>,
    anonymise: (c: ConsentDoc) => Pick<ConsentDoc, 'granted_by_name' | 'revocation_reason'>,
  ): Promise<number>;
}

export const consentStore = (db: Database): ConsentStore => ({
  get: (consentId) => getDoc(db, ConsentDoc, consentDocId(consentId)),
  async listForSubject(subjectType, subjectId) {
    const found = await db.find({
      selector: { docType: 'imageConsent', subject_id: subjectId },
      limit: 10_000,
      use_index: indexIn(db, 'by-docType-subject_id'),
    });
    return found.docs
      .map((d) => decodeDoc(ConsentDoc, d._id, d))
      .filter((c) => c.subject_type === subjectType)
      .sort((a, b) => b.granted_at.localeCompare(a.granted_at) || b.consentId.localeCompare(a.consentId));
  },
  listAll: () => listDocs(db, ConsentDoc, 'imageConsent'),
  async create(consent) {
    const doc = { _id: consentDocId(consent.consentId), docType: 'imageConsent' as const, ...consent };
    const r = await db.put(doc);
    return { ...doc, _rev: r.rev };
  },
  async revoke(current, by, reason, at) {
    if (current.revoked_at !== null) return 'ALREADY_REVOKED';
    const next = { ...current, revoked_at: at, revoked_by_user_id: by, revocation_reason: reason };
    // The only other change a consent can undergo is a revocation: the loser is a second revoke.
    return putDoc(db, next, 'ALREADY_REVOKED');
  },
  anonymise: (consentIds, anonymise) =>
    rewriteEach(db, consentIds.map(consentDocId), (raw) => {
      const doc = ConsentDoc.decode(raw);
      if (E.isLeft(doc)) return undefined;
      const next = anonymise(doc.right);
      return next.granted_by_name === doc.right.granted_by_name &&
        next.revocation_reason === doc.right.revocation_reason
        ? undefined
        : { ...raw, ...next };
    }),
});
