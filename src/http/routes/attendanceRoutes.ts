/** Attendance marks (`POST /api/v1/attendance/events`). */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import type { MarkResult } from '../../attendance/attendanceService.js';
import { IsoInstant, isUuidV4, nullable, object, refine, ShortText, Uuid } from '../../domain/codec.js';
import { ConflictPolicyC } from '../../domain/projection.js';
import { actorOf } from '../actor.js';
import { defineRoute } from '../route.js';

export const MarkBody = object(
  'AttendanceMarkBody',
  { studentId: Uuid, actionType: t.keyof({ MARK_PRESENT: null, MARK_ABSENT: null }), timestamp: IsoInstant },
  {
    sessionId: Uuid,
    eventId: refine(t.string, isUuidV4, 'a UUID v4', {
      format: 'uuid',
      maxLength: 36,
      description: 'Client-generated, so a resend is stored once.',
    }),
    baseVersion: nullable(ShortText),
  },
  {
    description:
      "`timestamp` is the device's clock when the mark was made. `baseVersion` is the eventId of the mark the device last saw " +
      'for this child and session (null or absent: none).',
  },
);

export const MarkAccepted = object(
  'AttendanceMarkAccepted',
  { eventId: Uuid, accepted: t.boolean, serverTime: IsoInstant },
  { policy: ConflictPolicyC, winnerEventId: ShortText, loserEventId: ShortText },
  {
    description:
      '`accepted` is false when a concurrent mark of higher precedence (ADMIN, or later) already stands; then ' +
      '`policy`, `winnerEventId` and `loserEventId` name the conflict as `/sync/events` does (the loser is this mark).',
  },
);

export const attendanceEventRoute = defineRoute({
  operationId: 'markAttendance',
  method: 'post',
  path: '/api/v1/attendance/events',
  auth: 'chamador',
  permission: 'attendance',
  summary: 'Mark a child present or absent',
  description:
    'Stored as an immutable event, once per `eventId`. Concurrent marks for the same child and session are decided by ' +
    'the conflict rule: ADMIN precedence, then the later timestamp, then the greater eventId.',
  tags: ['attendance'],
  body: MarkBody,
  response: { status: 202, description: 'Recorded.', codec: MarkAccepted },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const marked = await ctx.deps.attendance.marks.mark(actor.right, ctx.body);
    return E.map((body: MarkResult) => ({ status: 202, body, auditSubjectId: ctx.body.studentId }))(marked);
  },
});

export const attendanceRoutes = [attendanceEventRoute];
