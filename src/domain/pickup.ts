/**
 * Who may collect a child. N1: the legal guardians named on the student record (with the record's
 * phones). N2: another adult, verified by a one-time code sent to their phone. N3: a temporary grant by
 * an active N1/N2 entry, for a window of at most 7 days. No adult gets a user account.
 */
import * as t from 'io-ts';
import { boundedString, IsoInstant, nullable, object, PathId, ShortText, Text, Uuid } from './codec.js';

export const PickupLevel = t.keyof({ N1: null, N2: null, N3: null });
export const PickupStatus = t.keyof({ PENDING_VERIFICATION: null, ACTIVE: null, REVOKED: null });

export const PickupEntryDoc = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('pickupEntry'),
  pickupId: t.string,
  studentId: t.string,
  name: t.string,
  relationship: t.string,
  phone: t.string,
  status: PickupStatus,
  otpHash: t.union([t.string, t.null]),
  otpExpiresAt: t.union([t.string, t.null]),
  otpAttempts: t.number,
  createdBy: t.string,
  createdAt: t.string,
  verifiedAt: t.union([t.string, t.null]),
});
export type PickupEntryDoc = t.TypeOf<typeof PickupEntryDoc>;

export const GrantDoc = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('pickupGrant'),
  authorizationId: t.string,
  studentId: t.string,
  authorized_by_pickup_id: t.string,
  authorized_by: t.string,
  created_by: t.string,
  relationship: t.string,
  adultName: t.string,
  phone: t.union([t.string, t.null]),
  valid_from: t.string,
  valid_until: t.string,
  createdAt: t.string,
  revokedAt: t.union([t.string, t.null]),
  revokedBy: t.union([t.string, t.null]),
  revocationJustification: t.union([t.string, t.null]),
});
export type GrantDoc = t.TypeOf<typeof GrantDoc>;

export const PickupEntry = object(
  'PickupEntry',
  {
    pickupId: ShortText,
    studentId: Uuid,
    level: PickupLevel,
    name: boundedString(1, 120, { classification: 'personal' }),
    relationship: Text,
    phoneSuffix: nullable(ShortText),
    status: PickupStatus,
  },
  {},
  {
    description:
      'N1 entries come from the student record (ids are stable per guardian); phones are shown as their last 4 digits.',
  },
);
export const PickupList = object('PickupList', { items: t.array(PickupEntry) });

export const AddPickupAdultBody = object('AddPickupAdultBody', {
  name: boundedString(1, 120, { classification: 'personal' }),
  relationship: boundedString(1, 60),
  phone: boundedString(8, 30, { classification: 'personal', description: 'The one-time code is sent here.' }),
});
export const VerifyPickupBody = object('VerifyPickupBody', { code: boundedString(4, 12) });
export const PickupParams = object('PickupParams', { studentId: PathId, pickupId: PathId });

export const Grant = object(
  'PickupAuthorization',
  {
    authorizationId: Uuid,
    studentId: Uuid,
    authorized_by_pickup_id: ShortText,
    authorized_by: ShortText,
    created_by: ShortText,
    relationship: Text,
    adultName: boundedString(1, 120, { classification: 'personal' }),
    phoneSuffix: nullable(ShortText),
    valid_from: IsoInstant,
    valid_until: IsoInstant,
    active: t.boolean,
    revokedAt: nullable(IsoInstant),
  },
  {},
  { description: '`active` is false outside the window and after revocation: the grant is then inert.' },
);
export const GrantList = object('PickupAuthorizationList', { items: t.array(Grant) });

export const CreateGrantBody = object(
  'CreatePickupAuthorizationBody',
  {
    authorized_by_pickup_id: ShortText,
    adultName: boundedString(1, 120, { classification: 'personal' }),
    relationship: boundedString(1, 60),
  },
  {
    phone: boundedString(8, 30, { classification: 'personal' }),
    valid_from: IsoInstant,
    valid_until: IsoInstant,
  },
  {
    description: 'Default window: from now to the end of the UTC day; an explicit window is at most 7 days.',
  },
);
export const RevokeGrantBody = object('RevokePickupAuthorizationBody', {
  justification: boundedString(10, 500),
});
export const GrantParams = object('PickupAuthorizationParams', { authorizationId: PathId });
export const StudentGrantParams = object('StudentPickupParams', { studentId: PathId });

/** An adult who may collect a child, as the pickup list names them. */
export interface AllowedAdult {
  readonly name: string;
  readonly level: 'N1' | 'N2' | 'N3';
  readonly relationship: string;
  /** Every phone on record for the adult; the gate checks the typed suffix against them. */
  readonly phones: ReadonlyArray<string>;
}
