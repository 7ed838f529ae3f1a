/** Offline events from devices (`POST /api/v1/sync/events`). */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import {
  annotate,
  boundedArray,
  boundedInt,
  boundedString,
  IsoInstant,
  nullable,
  object,
  ShortText,
  Text,
} from '../../domain/codec.js';
import { apiError } from '../../domain/errors.js';
import { SyncEvent } from '../../domain/eventTypes.js';
import { MAX_REPORTED_EVENT_ISSUES } from '../../domain/issues.js';
import { ConflictPolicyC } from '../../domain/projection.js';
import { MAX_SYNC_EVENTS } from '../../sync/syncService.js';
import { actorOf } from '../actor.js';
import { defineRoute } from '../route.js';

/**
 * The list is checked for being a list only: each event is validated on its own by the handler, so a
 * bad event fails alone instead of failing the batch. The schema still documents the events' shapes.
 */
const SyncEventList = annotate(
  new t.ArrayType<typeof SyncEvent, unknown[], unknown[], unknown>(
    'SyncEventList',
    (u): u is unknown[] => Array.isArray(u),
    (u, c) => (Array.isArray(u) ? t.success(u) : t.failure(u, c, 'expected a list of events')),
    (a) => a,
    SyncEvent,
  ),
  {
    maxItems: MAX_SYNC_EVENTS,
    description: `At most ${MAX_SYNC_EVENTS} events; a longer list is answered 413 PAYLOAD_TOO_LARGE.`,
  },
);

export const SyncBatch = object(
  'SyncBatch',
  { events: SyncEventList },
  {},
  {
    description:
      'Events recorded offline, in any order. Each is stored once per `eventId`, whatever the Idempotency-Key.',
  },
);

const SyncedEvent = object(
  'SyncedEvent',
  {
    eventId: ShortText,
    serverTimestamp: IsoInstant,
    status: t.keyof({
      APPLIED: null,
      NO_EFFECT: null,
      CONFLICT_SUPERSEDED: null,
      WAITING_FOR_BASE: null,
      PENDING: null,
    }),
    duplicate: t.boolean,
  },
  {},
  {
    description:
      'A stored event as the pipeline then stands: APPLIED; NO_EFFECT (applied in order but it changed nothing, such as a ' +
      'check-out of a check-in that was not open); CONFLICT_SUPERSEDED (kept, but a conflicting event won); ' +
      'WAITING_FOR_BASE (the event it was based on has not arrived); PENDING (not projected yet; it will be). ' +
      '`duplicate`: it was already stored (a resend).',
  },
);

const SyncConflict = object(
  'SyncConflict',
  { aspect: ShortText, policy: ConflictPolicyC, winnerEventId: ShortText, loserEventId: ShortText },
  {},
  { description: 'A conflict involving an event of this batch, as decided by the conflict rule.' },
);

const Issue = object('SyncIssue', { path: Text, message: Text });

const SyncFailure = object(
  'SyncFailure',
  {
    index: boundedInt(0, MAX_SYNC_EVENTS - 1),
    eventId: nullable(boundedString(0, 100)),
    reason: t.keyof({
      VALIDATION_FAILED: null,
      UNKNOWN_TYPE: null,
      FORBIDDEN_ROLE: null,
      UNKNOWN_SUBJECT: null,
      SUBJECT_DELETED: null,
      UNKNOWN_SESSION: null,
      UNKNOWN_CLASS: null,
      STUDENT_ID_TAKEN: null,
      EVENT_ID_TAKEN: null,
    }),
    message: Text,
  },
  {
    issues: boundedArray(Issue, MAX_REPORTED_EVENT_ISSUES),
    // An issue per malformed field: fewer than the body's bytes, so far below 2^31.
    issuesOmitted: boundedInt(1, 2 ** 31 - 1, {
      description: `Issues beyond the first ${MAX_REPORTED_EVENT_ISSUES} listed, when there were more.`,
    }),
  },
  {
    description:
      'An event that was not stored, with its position in the batch and a machine-readable reason.',
  },
);

export const SyncResult = object('SyncResult', {
  synced: boundedArray(SyncedEvent, MAX_SYNC_EVENTS),
  conflicts: t.array(SyncConflict),
  failed: boundedArray(SyncFailure, MAX_SYNC_EVENTS),
});

export const syncEventsRoute = defineRoute({
  operationId: 'syncEvents',
  method: 'post',
  path: '/api/v1/sync/events',
  auth: 'bearer',
  summary: 'Send a batch of offline events',
  description:
    'Each event is validated, authorised for its kind (attendance, check-in and VISITOR_REGISTERED kinds: ADMIN, CHAMADOR or `attendance`; ' +
    'STUDENT_FIELD_SET: ADMIN, CADASTRO or `students.add`), checked against the student and session it names, and ' +
    'stored once. One bad event never fails the batch. The actor recorded is the caller, never a field of the ' +
    'event. A VISITOR_REGISTERED event creates the student (flagged `visitor`) with its `studentId`; a CHECK_IN for that ' +
    'child may come in the same batch or a later one. Conflicts are decided by the conflict rule (ADMIN precedence, then the later clientTimestamp, then the ' +
    'greater eventId) and reported with both event ids.',
  tags: ['sync'],
  body: SyncBatch,
  response: {
    status: 200,
    description: 'Every event of the batch is in exactly one list.',
    codec: SyncResult,
  },
  errors: ['PAYLOAD_TOO_LARGE'],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const events = ctx.body.events;
    if (events.length > MAX_SYNC_EVENTS) {
      return E.left(
        apiError('PAYLOAD_TOO_LARGE', `A batch holds at most ${MAX_SYNC_EVENTS} events.`, {
          maxEvents: MAX_SYNC_EVENTS,
          received: events.length,
        }),
      );
    }
    const result = await ctx.deps.sync.service.sync(actor.right, events);
    return E.right({
      status: 200,
      body: {
        synced: [...result.synced],
        conflicts: [...result.conflicts],
        failed: result.failed.map(({ issues, ...f }) => ({
          ...f,
          ...(issues === undefined ? {} : { issues: [...issues] }),
        })),
      },
    });
  },
});

export const syncRoutes = [syncEventsRoute];
