/**
 * Recurring schedules (decision 0031). Anyone signed in reads them; ADMIN and CADASTRO write them, and
 * custom roles with `sessions.add` (creating) or `sessions.edit` (changing, ending, skipping, adding a
 * date), the permissions of the sessions they make.
 */
import * as E from 'fp-ts/lib/Either.js';
import {
  CreateScheduleBody,
  EndScheduleBody,
  PatchScheduleBody,
  Schedule,
  ScheduleDateBody,
  type ScheduleDoc,
  ScheduleIdParams,
  ScheduleList,
  toSchedule,
} from '../../domain/schedules.js';
import { defineRoute } from '../route.js';

const reply = (doc: ScheduleDoc) => ({ body: toSchedule(doc) });
const AFTER_CHANGE =
  'Sessions still to come without check-ins follow at once; past sessions and sessions with check-ins stay.';

export const listSchedulesRoute = defineRoute({
  operationId: 'listSchedules',
  method: 'get',
  path: '/api/v1/schedules',
  auth: 'bearer',
  summary: 'Recurring schedules, oldest first',
  tags: ['sessions'],
  response: { status: 200, description: 'The schedules.', codec: ScheduleList },
  handler: async ({ deps }) => E.right({ body: { items: (await deps.schedules.list()).map(toSchedule) } }),
});

export const createScheduleRoute = defineRoute({
  operationId: 'createSchedule',
  method: 'post',
  path: '/api/v1/schedules',
  auth: 'cadastro',
  permission: 'sessions.add',
  summary: 'Schedule a class to meet every week',
  description:
    'Makes the sessions of today and the next 27 days at once, and keeps making them ahead every hour. ' +
    'Session ids are derived from the schedule and the date, so no instance ever makes one twice.',
  tags: ['sessions'],
  body: CreateScheduleBody,
  response: {
    status: 201,
    description: 'The new schedule.',
    codec: Schedule,
    headers: { Location: 'the schedule' },
  },
  handler: async ({ body, deps }) => {
    const created = await deps.schedules.create(body);
    return E.map((doc: ScheduleDoc) => ({
      status: 201,
      headers: { Location: `/api/v1/schedules/${doc.scheduleId}` },
      body: toSchedule(doc),
    }))(created);
  },
});

export const patchScheduleRoute = defineRoute({
  operationId: 'updateSchedule',
  method: 'patch',
  path: '/api/v1/schedules/{scheduleId}',
  auth: 'cadastro',
  permission: 'sessions.edit',
  summary: 'Change a schedule',
  description: `${AFTER_CHANGE} An ended schedule is 409.`,
  tags: ['sessions'],
  params: ScheduleIdParams,
  body: PatchScheduleBody,
  response: { status: 200, description: 'The schedule.', codec: Schedule },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async ({ params, body, deps }) =>
    E.map(reply)(await deps.schedules.patch(params.scheduleId, body)),
});

export const endScheduleRoute = defineRoute({
  operationId: 'endSchedule',
  method: 'post',
  path: '/api/v1/schedules/{scheduleId}/end',
  auth: 'cadastro',
  permission: 'sessions.edit',
  summary: 'End a schedule after a last date',
  description: `${AFTER_CHANGE} A second end is 409.`,
  tags: ['sessions'],
  params: ScheduleIdParams,
  body: EndScheduleBody,
  bodyOptional: true,
  response: { status: 200, description: 'The ended schedule.', codec: Schedule },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async ({ params, body, deps }) =>
    E.map(reply)(await deps.schedules.end(params.scheduleId, body.lastDate)),
});

/** Skipping and adding a date differ only in what they do to the schedule. */
const dateRoute = (spec: {
  operationId: string;
  action: 'skip' | 'add';
  summary: string;
  description: string;
}) =>
  defineRoute({
    operationId: spec.operationId,
    method: 'post',
    path: `/api/v1/schedules/{scheduleId}/${spec.action}`,
    auth: 'cadastro',
    permission: 'sessions.edit',
    summary: spec.summary,
    description: spec.description,
    tags: ['sessions'],
    params: ScheduleIdParams,
    body: ScheduleDateBody,
    response: { status: 200, description: 'The schedule.', codec: Schedule },
    errors: ['NOT_FOUND', 'CONFLICT'],
    handler: async ({ params, body, deps }) =>
      E.map(reply)(
        await (spec.action === 'skip' ? deps.schedules.skipDate : deps.schedules.addDate)(
          params.scheduleId,
          body.date,
        ),
      ),
  });

export const skipScheduleDateRoute = dateRoute({
  operationId: 'skipScheduleDate',
  action: 'skip',
  summary: 'Skip one date (a holiday)',
  description: `Its session goes unless it has begun or has check-ins. ${AFTER_CHANGE}`,
});

export const addScheduleDateRoute = dateRoute({
  operationId: 'addScheduleDate',
  action: 'add',
  summary: 'Add one date the class meets besides its weekdays',
  description: 'Its session is made at once when the date is within the next four weeks.',
});

export const schedulesRoutes = [
  listSchedulesRoute,
  createScheduleRoute,
  patchScheduleRoute,
  endScheduleRoute,
  skipScheduleDateRoute,
  addScheduleDateRoute,
];
