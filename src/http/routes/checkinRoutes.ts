/** Check-in configuration, check-in, the pickup desk's view, check-out and emergency check-out. */
import * as E from 'fp-ts/lib/Either.js';
import type { SessionHeadcount } from '../../attendance/headcountService.js';
import { dayKey } from '../../crypto/dayKeys.js';
import {
  ActiveCheckin,
  ActiveCheckinQuery,
  Checkin,
  CheckinBody,
  CheckinConfig,
  CheckinConfigBody,
  type CheckinDoc,
  CheckoutBody,
  EmergencyCheckoutBody,
  HeadcountC,
  HeadcountParams,
} from '../../domain/checkin.js';
import { boundedArray, object, ShortText, Text } from '../../domain/codec.js';
import type { StudentDoc } from '../../domain/student.js';
import { utcDay } from '../../rules/checkin.js';
import { photosAllowed } from '../../rules/students.js';
import { actorOf } from '../actor.js';
import type { AppDeps } from '../deps.js';
import { defineRoute } from '../route.js';

const view = async (deps: AppDeps, c: CheckinDoc) => ({
  checkInId: c.checkInId,
  studentId: c.studentId,
  sessionId: c.sessionId,
  code: c.code,
  checkedInAt: c.checkedInAt,
  remainingAttempts: await deps.attendance.checkins.remaining(c),
  status: c.status,
  checkedOutAt: c.checkedOutAt,
  pickupPerson: c.pickupPerson,
  emergency: c.emergency,
});

export const getCheckinConfigRoute = defineRoute({
  operationId: 'getCheckInConfig',
  method: 'get',
  path: '/api/v1/church/check-in-config',
  auth: 'chamador',
  permission: 'attendance',
  summary: 'The check-in configuration, defaults applied',
  description:
    'Creates the `checkin_secret` (256 random bits) on first read; the secret itself is never sent.',
  tags: ['check-in'],
  response: { status: 200, description: 'The configuration.', codec: CheckinConfig },
  handler: async ({ deps }) => E.right({ body: await deps.attendance.checkins.config() }),
});

export const putCheckinConfigRoute = defineRoute({
  operationId: 'updateCheckInConfig',
  method: 'put',
  path: '/api/v1/church/check-in-config',
  auth: 'admin',
  summary: 'Replace the check-in configuration',
  description:
    'The whole configuration: `pickupMode` (CODE_ONLY or CODE_AND_ADULT), `maxCheckoutAttempts` (1–20), `emergencyCheckoutAdminOnly`.',
  tags: ['check-in'],
  body: CheckinConfigBody,
  response: { status: 200, description: 'The stored configuration.', codec: CheckinConfig },
  errors: ['CONFLICT'],
  handler: async ({ body, deps }) =>
    E.map((saved: CheckinConfig) => ({ body: saved }))(
      await deps.attendance.checkins.saveConfig({ ...body, requiredFields: body.requiredFields ?? [] }),
    ),
});

export const checkInRoute = defineRoute({
  operationId: 'checkIn',
  method: 'post',
  path: '/api/v1/check-in',
  auth: 'chamador',
  permission: 'attendance',
  summary: 'Check a child in to a session; answers the daily code for the label',
  description:
    'Unknown student or session → 404; a deleted student → 409; already checked in to that session and not out → 409. ' +
    'A walk-in visitor (`visitor` instead of `studentId`) is registered on the spot as a student flagged `visitor`. ' +
    "The admission rule (the same a tablet applies offline) then refuses with 409 and the reason's own code: " +
    '`RECORD_INCOMPLETE` (`details.missing`: the required fields the record lacks), `AGE_OUT_OF_RANGE` ' +
    '(`details.ageMonths`, `details.ageRange`), `ROOM_FULL` (`details.checkedIn`, `details.capacity`), ' +
    '`RATIO_EXCEEDED` (`details.checkedIn`, `details.volunteers`, `details.childrenPerVolunteer`); each with ' +
    '`details.overridable`, true for an ADMIN, who may send `override` with a justification (audited).',
  tags: ['check-in'],
  body: CheckinBody,
  response: {
    status: 201,
    description: 'The check-in, with the code to print.',
    codec: Checkin,
    headers: { Location: 'the check-in' },
  },
  errors: [
    'NOT_FOUND',
    'CONFLICT',
    'CONFLICT_SUPERSEDED',
    'ROOM_FULL',
    'RATIO_EXCEEDED',
    'AGE_OUT_OF_RANGE',
    'RECORD_INCOMPLETE',
  ],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const created = await ctx.deps.attendance.checkins.checkIn(actor.right, ctx.body);
    if (E.isLeft(created)) return created;
    const { checkin, waived } = created.right;
    return E.right({
      status: 201,
      headers: { Location: `/api/v1/check-in/active?checkInId=${checkin.checkInId}` },
      auditSubjectId: checkin.studentId,
      // The justification is kept with the event; the entry names what the override waived.
      ...(waived.length === 0 ? {} : { auditDetails: { override: true, waived: waived.join(',') } }),
      body: await view(ctx.deps, checkin),
    });
  },
});

export const activeCheckinRoute = defineRoute({
  operationId: 'getActiveCheckIn',
  method: 'get',
  path: '/api/v1/check-in/active',
  auth: 'chamador',
  permission: 'attendance',
  summary: "The pickup desk's view of a check-in",
  description:
    'By `checkInId`, or by `studentId` and `sessionId` (the open check-in). Photo only with an active image consent.',
  tags: ['check-in'],
  query: ActiveCheckinQuery,
  response: {
    status: 200,
    description: 'The check-in, the child and who may collect them.',
    codec: ActiveCheckin,
  },
  errors: ['NOT_FOUND'],
  auditRead: 'READ_SENSITIVE',
  handler: async ({ query, deps }) => {
    const found = await deps.attendance.checkins.find(query);
    if (E.isLeft(found)) return found;
    const { checkin, student }: { checkin: CheckinDoc; student: StudentDoc } = found.right;
    return E.right({
      auditSubjectId: student.studentId,
      body: {
        checkIn: await view(deps, checkin),
        child: {
          studentId: student.studentId,
          displayName: student.displayName,
          photoRef: photosAllowed(deps.registration.directory.activeConsents(student.studentId))
            ? student.photoRef
            : null,
          allergies: student.allergies,
          specialNeeds: student.specialNeeds,
          visitor: student.visitor,
        },
        mayCollect: (await deps.attendance.pickups.allowedAdults(student)).map((a) => ({
          name: a.name,
          level: a.level,
          relationship: a.relationship,
          phoneSuffix: a.phones[0]?.replace(/\D/g, '').slice(-4) ?? null,
        })),
      },
    });
  },
});

export const checkOutRoute = defineRoute({
  operationId: 'checkOut',
  method: 'post',
  path: '/api/v1/check-out',
  auth: 'chamador',
  permission: 'attendance',
  summary: 'Check a child out with the daily code',
  description:
    'A wrong code → 400 CHECKOUT_CODE_MISMATCH with `details.remainingAttempts` (and a CHECKOUT_ATTEMPT event); after ' +
    '`maxCheckoutAttempts` failures → 423 CHECKOUT_LOCKED for every attempt, the right code included, until an emergency ' +
    'check-out. In CODE_AND_ADULT mode the adult must be on the pickup list (403 PICKUP_NOT_AUTHORIZED), with the phone ' +
    'suffix when the entry has a phone. Already checked out → 409.',
  tags: ['check-in'],
  body: CheckoutBody,
  response: { status: 200, description: 'Checked out.', codec: Checkin },
  errors: [
    'CHECKOUT_CODE_MISMATCH',
    'PICKUP_NOT_AUTHORIZED',
    'NOT_FOUND',
    'CONFLICT',
    'CONFLICT_SUPERSEDED',
    'CHECKOUT_LOCKED',
  ],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const out = await ctx.deps.attendance.checkins.checkOut(actor.right, ctx.body);
    if (E.isLeft(out)) return out;
    return E.right({ auditSubjectId: out.right.studentId, body: await view(ctx.deps, out.right) });
  },
});

export const emergencyCheckOutRoute = defineRoute({
  operationId: 'emergencyCheckOut',
  method: 'post',
  path: '/api/v1/check-out/emergency',
  auth: 'chamador',
  permission: 'attendance',
  summary: 'Emergency check-out, with a justification',
  description:
    'ADMIN and CHAMADOR, or ADMIN only when `emergencyCheckoutAdminOnly` is set (403 otherwise). Works on a locked check-in.',
  tags: ['check-in'],
  body: EmergencyCheckoutBody,
  response: { status: 200, description: 'Checked out.', codec: Checkin },
  errors: ['NOT_FOUND', 'CONFLICT', 'CONFLICT_SUPERSEDED'],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const out = await ctx.deps.attendance.checkins.emergency(actor.right, ctx.body);
    if (E.isLeft(out)) return out;
    return E.right({ auditSubjectId: out.right.studentId, body: await view(ctx.deps, out.right) });
  },
});

export const DAY_KEYS_AHEAD = 2;

export const DayKeys = object(
  'DayKeys',
  { keys: boundedArray(object('DayKey', { day: ShortText, key: Text }), DAY_KEYS_AHEAD + 1) },
  {},
  {
    description:
      `Today's and the next ${DAY_KEYS_AHEAD} UTC days' keys (base64url HMAC-SHA-256 of the check-in secret and the day), so ` +
      'a tablet that goes offline tonight still prints correct labels for a weekend retreat. The master secret never leaves the server.',
  },
);

export const dayKeysRoute = defineRoute({
  operationId: 'getCheckInDayKeys',
  method: 'get',
  path: '/api/v1/church/check-in-day-keys',
  auth: 'chamador',
  permission: 'attendance',
  summary: 'Per-day keys for offline check-in on a device',
  tags: ['check-in'],
  response: { status: 200, description: 'The day keys.', codec: DayKeys },
  auditRead: 'READ_SENSITIVE',
  handler: async ({ deps }) => {
    const secret = await deps.attendance.checkins.secret();
    const today = deps.clock();
    const keys = Array.from({ length: DAY_KEYS_AHEAD + 1 }, (_, i) => {
      const day = utcDay(new Date(today.getTime() + i * 86_400_000));
      return { day, key: Buffer.from(dayKey(secret, day)).toString('base64url') };
    });
    return E.right({ body: { keys } });
  },
});

export const headcountRoute = defineRoute({
  operationId: 'sessionHeadcount',
  method: 'get',
  path: '/api/v1/sessions/{sessionId}/headcount',
  auth: 'chamador',
  permission: 'attendance',
  summary: "A session's headcount and its room's capacity",
  description:
    'Children checked in now and children checked in and gone, from the check-ins the server has applied (a ' +
    "tablet's offline ones count once they arrive), beside the class's `capacity`. An unknown session is 404.",
  tags: ['check-in'],
  params: HeadcountParams,
  response: { status: 200, description: 'The headcount.', codec: HeadcountC },
  errors: ['NOT_FOUND'],
  handler: async ({ params, deps }) =>
    E.map((body: SessionHeadcount) => ({ body }))(await deps.attendance.headcount.of(params.sessionId)),
});

export const checkinRoutes = [
  dayKeysRoute,
  getCheckinConfigRoute,
  putCheckinConfigRoute,
  checkInRoute,
  activeCheckinRoute,
  checkOutRoute,
  emergencyCheckOutRoute,
  headcountRoute,
];
