/** A backup of the running service (decision 0044), for the backup command's `--server`. */
import * as E from 'fp-ts/lib/Either.js';
import { BackupFile } from '../../domain/backup.js';
import { apiError } from '../../domain/errors.js';
import { defineRoute } from '../route.js';

const DISPOSITION = 'attachment; filename="chamada-backup.ndjson"';

export const getBackupRoute = defineRoute({
  operationId: 'getBackup',
  method: 'get',
  path: '/api/v1/backup',
  auth: 'admin',
  summary: 'A backup of the whole store, read while the service runs',
  description:
    'The file `npm run backup` writes (decisions 0022 and 0044), streamed as it is read: the audit log, the ' +
    'private records, the roster, the quarantine records and admission exceptions, and the events last. Every ' +
    'write answered before the request is in it; writes made during it may be. It holds every personal record ' +
    'and password hash: ADMIN only, and every backup handed out is audited (`EXPORT`). A store that does not ' +
    'answer is 503 before anything is sent; a failure after the first line cuts the connection, so the body ' +
    'lacks its last (`complete`) line and a restore refuses it.',
  tags: ['backup'],
  response: {
    status: 200,
    description: 'The backup, one JSON record a line.',
    codec: BackupFile,
    mediaType: 'application/x-ndjson',
    headers: { 'Content-Disposition': `\`${DISPOSITION}\`: a file to save, not a page to show.` },
  },
  errors: ['STORE_UNAVAILABLE'],
  auditRead: 'EXPORT',
  handler: async ({ deps }) => {
    // Asked first so an unreachable store is an answer, not a 200 cut short.
    if (!(await deps.health.ping())) return E.left(apiError('STORE_UNAVAILABLE'));
    return E.right({
      body: deps.backups.stream(),
      headers: { 'Content-Disposition': DISPOSITION },
    });
  },
});

export const backupRoutes = [getBackupRoute];
