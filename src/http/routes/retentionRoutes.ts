/** Retention under the LGPD (decision 0045): the ADMIN's periods and what the next run would end. */
import * as E from 'fp-ts/lib/Either.js';
import { RetentionBody, RetentionConfig, RetentionPreview } from '../../domain/retention.js';
import { defineRoute } from '../route.js';

export const getRetentionRoute = defineRoute({
  operationId: 'getRetention',
  method: 'get',
  path: '/api/v1/church/retention',
  auth: 'admin',
  summary: 'The retention periods, defaults applied, with the legal basis of each',
  description:
    'How long each kind of record is kept before the retention job ends it (daily at `RETENTION_AT`, and at ' +
    'every start): a deleted student is anonymised after `deletedStudentDays`; check-ins and attendance marks are ' +
    'deleted after `attendanceDays`; pages to guardians after `pageDays`; audit entries lose their subject after ' +
    '`auditDays`. Idempotency records are kept 24 hours (the contract; not configurable). `periods` gives each ' +
    "setting's default, bounds and legal basis.",
  tags: ['retention'],
  response: { status: 200, description: 'The periods in force.', codec: RetentionConfig },
  handler: async ({ deps }) => E.right({ body: await deps.registration.retention.config() }),
});

export const putRetentionRoute = defineRoute({
  operationId: 'updateRetention',
  method: 'put',
  path: '/api/v1/church/retention',
  auth: 'admin',
  summary: 'Replace the retention periods',
  description:
    'Every period, in days, within its bounds (400 `VALIDATION_FAILED` naming each field out of them). The next run ' +
    '(see `GET /api/v1/retention/preview`) applies them; shortening a period ends at that run what the new period ' +
    'no longer keeps. Audited with the periods set.',
  tags: ['retention'],
  body: RetentionBody,
  response: { status: 200, description: 'The periods now in force.', codec: RetentionConfig },
  errors: ['CONFLICT'],
  handler: async ({ body, deps }) =>
    E.map((saved: RetentionConfig) => ({
      body: saved,
      auditDetails: {
        deletedStudentDays: saved.deletedStudentDays,
        attendanceDays: saved.attendanceDays,
        pageDays: saved.pageDays,
        auditDays: saved.auditDays,
      },
    }))(await deps.registration.retention.saveConfig(body)),
});

export const retentionPreviewRoute = defineRoute({
  operationId: 'previewRetention',
  method: 'get',
  path: '/api/v1/retention/preview',
  auth: 'admin',
  summary: 'What the next retention run would end',
  description:
    'The same rule the job applies, at this moment: the deleted students it would anonymise and the photos it would ' +
    'erase (student ids), the check-ins (check-in ids), attendance marks (aspects) and pages (page ids) it would ' +
    'delete, and the audit entries (audit ids) whose subject it would remove. Ids only, each list capped, with the ' +
    'whole count; nothing is changed.',
  tags: ['retention'],
  response: { status: 200, description: 'What would end.', codec: RetentionPreview },
  handler: async ({ deps }) => E.right({ body: await deps.registration.retention.preview() }),
});

export const retentionRoutes = [getRetentionRoute, putRetentionRoute, retentionPreviewRoute];
