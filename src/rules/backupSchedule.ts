/**
 * When the service's own backup runs next (decision 0044): the first instant after `now` whose
 * wall-clock time in `timeZone` is `at`. A day whose clocks skip that time (a daylight-saving change)
 * runs an hour later on the wall, as clocks do; a day that shows it twice runs at the first. The
 * zone arithmetic is the schedules' (`zonedInstant`).
 */
import type { WallTime } from '../domain/backup.js';
import { addDays, localDate, zonedInstant } from './schedules.js';

const pad = (n: number): string => String(n).padStart(2, '0');

export const nextBackupAt = (now: Date, at: WallTime, timeZone: string): Date => {
  const time = `${pad(at.hour)}:${pad(at.minute)}`;
  // Today's, else the next day's: every day shows the time once at least, so this ends by the second turn.
  let date = localDate(now, timeZone);
  for (;;) {
    const instant = Date.parse(zonedInstant(date, time, timeZone));
    if (instant > now.getTime()) return new Date(instant);
    date = addDays(date, 1);
  }
};
