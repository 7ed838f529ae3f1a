/**
 * Backups of the running service (decision 0044): the file of decision 0022 as a response body, the
 * port a route asks it through, and the time of day the service's own backups run at.
 */
import * as t from 'io-ts';
import { type ByteStream, StreamType } from './codec.js';

/** The media type of a backup: one JSON record a line (decision 0022's format). */
export const BACKUP_MEDIA_TYPE = 'application/x-ndjson';

export const BackupFile = new StreamType(
  BACKUP_MEDIA_TYPE,
  'The backup (decision 0022): a `header` line, then per database a `begin` line, pages of documents ' +
    '(`docs`) and an `end` line, and a last `complete` line; a body without the `complete` line was cut ' +
    'short and is not a backup.',
);

/** The service's side of a live backup: the whole file, read as the response is written. */
export interface LiveBackups {
  stream(): ByteStream;
}

/** A time of day on a wall clock. */
export interface WallTime {
  readonly hour: number;
  readonly minute: number;
}

/** `HH:MM`, 24-hour (`BACKUP_AT`). */
export const WallTimeFromString = new t.Type<WallTime, string, unknown>(
  'a time of day as HH:MM (00:00 to 23:59)',
  (u): u is WallTime => typeof u === 'object' && u !== null && 'hour' in u && 'minute' in u,
  (u, c) => {
    const m = typeof u === 'string' ? /^([01]\d|2[0-3]):([0-5]\d)$/.exec(u) : null;
    return m === null ? t.failure(u, c) : t.success({ hour: Number(m[1]), minute: Number(m[2]) });
  },
  (a) => `${String(a.hour).padStart(2, '0')}:${String(a.minute).padStart(2, '0')}`,
);
