/**
 * Volunteers in a session's room (the admission rule's ratio counts them): a staff user, or a helper
 * named at the door who has no account. One record per stay in the room: checked in, then out.
 */
import * as t from 'io-ts';
import {
  boundedArray,
  boundedString,
  IsoInstant,
  nullable,
  object,
  refine,
  ShortText,
  Uuid,
} from './codec.js';

export const MAX_VOLUNTEERS_LISTED = 500;

const VolunteerName = boundedString(1, 120, { classification: 'personal' });

export const VolunteerDoc = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('volunteer'),
  volunteerId: t.string,
  sessionId: t.string,
  userId: t.union([t.string, t.null]),
  name: t.string,
  checkedInAt: t.string,
  checkedInBy: t.string,
  checkedOutAt: t.union([t.string, t.null]),
  checkedOutBy: t.union([t.string, t.null]),
});
export type VolunteerDoc = t.TypeOf<typeof VolunteerDoc>;

export const Volunteer = object(
  'Volunteer',
  {
    volunteerId: Uuid,
    sessionId: Uuid,
    userId: nullable(ShortText),
    name: VolunteerName,
    checkedInAt: IsoInstant,
    checkedInBy: ShortText,
    checkedOutAt: nullable(IsoInstant),
    checkedOutBy: nullable(ShortText),
  },
  {},
  {
    description:
      'A volunteer in the room: a staff user (`userId`, named as their account) or a helper without an account ' +
      '(`userId` null). In the room while `checkedOutAt` is null.',
  },
);
export type Volunteer = t.TypeOf<typeof Volunteer>;

export const toVolunteer = (d: VolunteerDoc): Volunteer => ({
  volunteerId: d.volunteerId,
  sessionId: d.sessionId,
  userId: d.userId,
  name: d.name,
  checkedInAt: d.checkedInAt,
  checkedInBy: d.checkedInBy,
  checkedOutAt: d.checkedOutAt,
  checkedOutBy: d.checkedOutBy,
});

export const AddVolunteerBody = refine(
  object(
    'AddVolunteerBody',
    {},
    { userId: Uuid, name: VolunteerName },
    {
      description:
        'Exactly one of `userId` (an active staff user: ADMIN, CHAMADOR or CADASTRO) or `name` (a helper without an ' +
        'account).',
    },
  ),
  (b) => (b.userId === undefined) !== (b.name === undefined),
  'exactly one of userId or name',
);
export type AddVolunteerBody = t.TypeOf<typeof AddVolunteerBody>;

export const VolunteerList = object(
  'VolunteerList',
  { items: boundedArray(Volunteer, MAX_VOLUNTEERS_LISTED) },
  {},
  {
    description:
      'Everyone who came to the room at this session, in the order they came; those in it have no `checkedOutAt`.',
  },
);

export const VolunteerParams = object('VolunteerParams', { sessionId: Uuid, volunteerId: Uuid });
export const SessionVolunteersParams = object('SessionVolunteersParams', { sessionId: Uuid });
