/**
 * Image consents: immutable records. Revocation sets the revocation fields once; re-consent inserts a
 * new record. The term text is frozen into the record at consent time.
 */
import * as t from 'io-ts';
import {
  annotate,
  boundedString,
  IsoInstant,
  nullable,
  object,
  PathId,
  ShortText,
  Text,
  Uuid,
} from './codec.js';

export const VerificationMethod = t.keyof({
  RECEPTION_GUARDIAN_PHOTO: null,
  VERIFIED_GUARDIAN_PRESENT: null,
  PHONE_OTP: null,
  IN_PERSON_DOCUMENT: null,
  ADULT_SELF: null,
});
export type VerificationMethod = t.TypeOf<typeof VerificationMethod>;
export const SubjectType = t.keyof({ STUDENT: null, USER: null });
export type SubjectType = t.TypeOf<typeof SubjectType>;

export const ConsentDoc = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('imageConsent'),
  consentId: t.string,
  subject_type: SubjectType,
  subject_id: t.string,
  term_version: t.string,
  purpose: t.string,
  term_text: t.string,
  granted_by_name: t.string,
  granted_by_user_id: t.union([t.string, t.null]),
  relationship: t.string,
  verification_method: VerificationMethod,
  verified_by_user_id: t.string,
  granted_at: t.string,
  revoked_at: t.union([t.string, t.null]),
  revoked_by_user_id: t.union([t.string, t.null]),
  revocation_reason: t.union([t.string, t.null]),
});
export type ConsentDoc = t.TypeOf<typeof ConsentDoc>;

export const Consent = object(
  'ImageConsent',
  {
    consentId: Uuid,
    subject_type: SubjectType,
    subject_id: ShortText,
    term_version: ShortText,
    purpose: Text,
    term_text: Text,
    granted_by_name: boundedString(1, 120, { classification: 'personal' }),
    granted_by_user_id: nullable(ShortText),
    relationship: Text,
    verification_method: VerificationMethod,
    verified_by_user_id: ShortText,
    granted_at: IsoInstant,
    revoked_at: nullable(IsoInstant),
    revoked_by_user_id: nullable(ShortText),
    revocation_reason: nullable(Text),
  },
  {},
  { description: 'Immutable: only the revocation fields are ever set, once.' },
);
export type Consent = t.TypeOf<typeof Consent>;

export const toConsent = (d: ConsentDoc): Consent => ({
  consentId: d.consentId,
  subject_type: d.subject_type,
  subject_id: d.subject_id,
  term_version: d.term_version,
  purpose: d.purpose,
  term_text: d.term_text,
  granted_by_name: d.granted_by_name,
  granted_by_user_id: d.granted_by_user_id,
  relationship: d.relationship,
  verification_method: d.verification_method,
  verified_by_user_id: d.verified_by_user_id,
  granted_at: d.granted_at,
  revoked_at: d.revoked_at,
  revoked_by_user_id: d.revoked_by_user_id,
  revocation_reason: d.revocation_reason,
});

export const CreateConsentBody = object(
  'CreateConsentBody',
  {
    subject_type: SubjectType,
    subject_id: Uuid,
    term_version: boundedString(1, 40),
    purpose: boundedString(1, 200),
    term_text: boundedString(1, 20_000, {
      description: 'The term as shown to the person, frozen into the record.',
    }),
    granted_by_name: boundedString(1, 120, { classification: 'personal' }),
    relationship: boundedString(1, 60, {
      description: 'Link to the minor, e.g. mãe, pai, avó; SELF for an adult.',
    }),
    verification_method: VerificationMethod,
  },
  { granted_by_user_id: Uuid },
  { description: '`verified_by_user_id` is the caller; `granted_at` is the server time.' },
);
export type CreateConsentBody = t.TypeOf<typeof CreateConsentBody>;

export const ConsentQuery = object('ConsentQuery', { subjectType: SubjectType, subjectId: PathId });

export const ConsentHistory = object(
  'ConsentHistory',
  {
    subjectType: SubjectType,
    subjectId: ShortText,
    current: nullable(Consent),
    history: t.array(Consent),
  },
  {},
  {
    description:
      '`current` is the newest unrevoked consent, or null; `history` holds every record, newest first.',
  },
);

const RevocationReason = boundedString(3, 500);

/**
 * `revocation_reason` is the record's field and the spec's name (consent bodies use the record's
 * snake_case names). `reason`, the name this endpoint first took, stays accepted as a deprecated
 * alias: v1 admits only backward-compatible changes (decision 0014). Exactly one of the two: each
 * form is a closed object, so a body with both, or neither, matches no form and is a 400.
 */
export const RevokeConsentBody = t.union([
  object('RevokeConsentBody', { revocation_reason: RevocationReason }),
  object(
    'RevokeConsentBodyDeprecated',
    { reason: annotate(boundedString(3, 500), { deprecated: true }) },
    {},
    { deprecated: true, description: 'Deprecated: send `revocation_reason`.' },
  ),
]);
export type RevokeConsentBody = t.TypeOf<typeof RevokeConsentBody>;

export const revocationReasonOf = (body: RevokeConsentBody): string =>
  'revocation_reason' in body ? body.revocation_reason : body.reason;
export const ConsentIdParams = object('ConsentIdParams', { consentId: PathId });
