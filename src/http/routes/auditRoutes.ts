/** The audit log (ADMIN): filtered, newest first, cursor-paged. */
import * as E from 'fp-ts/lib/Either.js';
import { AuditPage, AuditQuery, toAuditFilter } from '../../domain/audit.js';
import { apiError } from '../../domain/errors.js';
import { defineRoute } from '../route.js';

export const listAuditLogsRoute = defineRoute({
  operationId: 'listAuditLogs',
  method: 'get',
  path: '/api/v1/audit-logs',
  auth: 'admin',
  summary: 'Audit entries, newest first',
  description:
    'Every mutation (success and failure) and every read of personal or sensitive data leaves an entry; none can be ' +
    'changed or removed through the API. Past the audit period (`GET /api/v1/church/retention`) the retention job ' +
    "removes an entry's subject (`subject_id` null, ids dropped from `details`, `details.anonymisedAt` set) and keeps " +
    'the rest (decision 0045). Filters: `actor` (user id), `endpoint` (route template, e.g. `POST /api/v1/students`), `outcome`, ' +
    '`subjectId`, `from`/`to` (inclusive). Keyset paging: `limit` 50 by default, at most 200; `nextCursor` is opaque.',
  tags: ['audit'],
  query: AuditQuery,
  response: { status: 200, description: 'One page.', codec: AuditPage },
  handler: async ({ query, deps }) => {
    const page = await deps.audit.query(toAuditFilter(query));
    if (E.isLeft(page)) {
      return E.left(
        apiError('VALIDATION_FAILED', 'The cursor is not one this server issued.', {
          issues: [{ path: 'query.cursor', message: 'invalid cursor' }],
        }),
      );
    }
    return E.right({ body: page.right });
  },
});

export const auditRoutes = [listAuditLogsRoute];
