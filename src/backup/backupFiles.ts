/**
 * Backup files on disk: written under a `.partial` name and renamed once whole, so a run that fails
 * half-way never leaves a file under the name an operator or a rotation takes for a finished backup
 * (decision 0022); and the service's own backups in `BACKUP_DIR`, kept for a number of days
 * (decision 0044).
 */
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

/** Resolves once the stream is closed (its databases released). */
export const closed = (stream: Readable): Promise<void> =>
  stream.closed ? Promise.resolve() : new Promise((resolve) => stream.once('close', () => resolve()));

/** Writes the backup to `out` (gzipped when it ends in `.gz`); answers its size in bytes. */
export const writeBackupFile = async (source: Readable, out: string): Promise<number> => {
  const partial = `${out}.partial`;
  const compress = out.endsWith('.gz') ? [createGzip()] : [];
  try {
    await pipeline([source, ...compress, createWriteStream(partial)]);
    await rename(partial, out);
  } catch (e) {
    await rm(partial, { force: true });
    throw e;
  } finally {
    // A failed write destroys the source, whose databases close only once its generator has unwound:
    // returning earlier left them open to the next command in the same process.
    await closed(source);
  }
  return (await stat(out)).size;
};

const STAMPED = /^chamada-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z\.ndjson\.gz$/;

/** `chamada-20261128T053000Z.ndjson.gz`: the time of the run, sortable, in UTC. */
export const stampedName = (at: Date): string =>
  `chamada-${at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z')}.ndjson.gz`;

/** The time a stamped name carries; the name, not the file's mtime, which a copy changes. */
const stampOf = (name: string): number | undefined => {
  const m = STAMPED.exec(name);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s] = m.map(Number);
  return Date.UTC(y ?? 0, (mo ?? 1) - 1, d ?? 0, h ?? 0, mi ?? 0, s ?? 0);
};

export interface ServiceBackupRun {
  readonly file: string;
  readonly bytes: number;
  /** The older backups and leftover partial files removed after it. */
  readonly removed: ReadonlyArray<string>;
}

/**
 * One run of the service's own backup: the file first, then, only once it is whole, the backups
 * older than `keepDays` and the `.partial` files a crashed run left (runs never overlap, 0044), so a
 * failing backup never deletes the last good one. Files of other names are never touched.
 */
export const runServiceBackup = async (options: {
  readonly dir: string;
  readonly keepDays: number;
  readonly source: () => Readable;
  readonly now: Date;
}): Promise<ServiceBackupRun> => {
  await mkdir(options.dir, { recursive: true });
  const name = stampedName(options.now);
  const bytes = await writeBackupFile(options.source(), join(options.dir, name));
  const oldest = options.now.getTime() - options.keepDays * 24 * 60 * 60 * 1000;
  const removed = (await readdir(options.dir)).filter((entry) => {
    if (entry === name) return false;
    if (entry.startsWith('chamada-') && entry.endsWith('.ndjson.gz.partial')) return true;
    const stamp = stampOf(entry);
    return stamp !== undefined && stamp < oldest;
  });
  for (const entry of removed) await rm(join(options.dir, entry), { force: true });
  return { file: name, bytes, removed };
};
