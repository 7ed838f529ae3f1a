/** Paging a checked-in child's guardians from the door, and the pages a session has sent (0037). */
import * as E from 'fp-ts/lib/Either.js';
import {
  type GuardianPage,
  GuardianPage as GuardianPageC,
  GuardianPageList,
  GuardianPageQuery,
  MAX_PAGES_LISTED,
  PageBody,
  type PageDoc,
  PageParams,
} from '../../domain/pages.js';
import { PAGE_LIMITS } from '../../rules/pages.js';
import { actorOf } from '../actor.js';
import { defineRoute } from '../route.js';

const view = (p: PageDoc): GuardianPage => ({
  pageId: p.pageId,
  checkInId: p.checkInId,
  studentId: p.studentId,
  sessionId: p.sessionId,
  message: p.message,
  status: p.status,
  sentAt: p.sentAt,
  sentBy: p.sentBy,
  deviceId: p.deviceId,
  phonesPaged: p.phonesPaged,
  phonesFailed: p.phonesFailed,
});

const minutes = (ms: number): number => ms / 60_000;

export const pageGuardiansRoute = defineRoute({
  operationId: 'pageGuardians',
  method: 'post',
  path: '/api/v1/check-ins/{checkInId}/page',
  auth: 'chamador',
  permission: 'attendance',
  summary: "Page a checked-in child's guardians",
  description:
    "Sends the message (or a request to come to the room) through the configured notifier to every phone on the child's " +
    'record; the answer and the audit entry say how many phones were reached, never which. ' +
    `At most one page per child every ${minutes(PAGE_LIMITS.cooldownMs)} minutes and ` +
    `${PAGE_LIMITS.perWindow.limit} an hour: beyond that 429 RATE_LIMITED with Retry-After and \`details.reason\` ` +
    '(COOLDOWN or TOO_MANY_PAGES). An unknown check-in is 404; a child checked out, a superseded check-in, or a ' +
    'record without a phone is 409 with `details.reason`. When the notifier reaches no phone the page is not ' +
    'recorded and the answer is 503 NOTIFICATION_FAILED: sending again with the same Idempotency-Key tries again.',
  tags: ['check-in'],
  params: PageParams,
  body: PageBody,
  bodyOptional: true,
  response: {
    status: 201,
    description: 'The page, sent.',
    codec: GuardianPageC,
  },
  errors: ['NOT_FOUND', 'CONFLICT', 'RATE_LIMITED', 'NOTIFICATION_FAILED'],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const sent = await ctx.deps.attendance.pages.page(
      actor.right,
      ctx.params.checkInId,
      ctx.body.message?.trim() ?? null,
    );
    if (E.isLeft(sent)) return sent;
    return E.right({
      status: 201,
      auditSubjectId: sent.right.studentId,
      auditDetails: {
        pageId: sent.right.pageId,
        phonesPaged: sent.right.phonesPaged,
        phonesFailed: sent.right.phonesFailed,
      },
      body: view(sent.right),
    });
  },
});

export const listPagesRoute = defineRoute({
  operationId: 'listGuardianPages',
  method: 'get',
  path: '/api/v1/pages',
  auth: 'relatorios',
  permission: 'reports',
  summary: 'The pages sent to guardians at a session',
  description:
    'For the admins: who paged which child, when, the message and how many phones it reached. An unknown session is 404.',
  tags: ['check-in'],
  query: GuardianPageQuery,
  response: { status: 200, description: 'The pages, oldest first.', codec: GuardianPageList },
  errors: ['NOT_FOUND'],
  auditRead: 'READ_SENSITIVE',
  handler: async ({ query, deps }) =>
    // Beyond the limits' reach in practice (five pages a child an hour), but the document promises it.
    E.map((pages: PageDoc[]) => ({ body: { items: pages.slice(0, MAX_PAGES_LISTED).map(view) } }))(
      await deps.attendance.pages.ofSession(query.sessionId),
    ),
});

export const pageRoutes = [pageGuardiansRoute, listPagesRoute];
