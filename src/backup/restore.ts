/**
 * Restoring a backup into a store (decision 0022). The file is read twice: once to check that it is a
 * complete backup (every line decodes, every database ends with the count it announced, the last line
 * is there), so a truncated or foreign file is refused before anything is written; then to store its
 * documents under their own revisions. A store that holds documents is refused unless `force`, which
 * removes all six databases first, so a restore never merges two histories.
 */

import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import * as E from 'fp-ts/lib/Either.js';
import { DATABASE_NAMES, type DatabaseName, openStore, type StoreLocation } from '../store/store.js';
import { destroyDatabase, openWholeDatabase, type WholeDatabase } from '../store/wholeDatabases.js';
import type { Progress } from './backup.js';
import { type BackupHeader, BackupLine } from './backupFormat.js';

/** The file is not a complete backup this version can read. */
export class BackupFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupFileError';
  }
}

/** The target store holds documents and the restore was not asked to replace them. */
export class TargetNotEmptyError extends Error {
  constructor(readonly documents: ReadonlyArray<{ database: DatabaseName; documents: number }>) {
    super(
      `the target store is not empty (${documents.map((d) => `${d.database}: ${d.documents} documents`).join(', ')})`,
    );
    this.name = 'TargetNotEmptyError';
  }
}

const isGzip = async (file: string): Promise<boolean> => {
  const handle = await open(file, 'r').catch((e: unknown) => {
    const code = e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : 'unreadable';
    throw new BackupFileError(`cannot open ${file} (${code})`);
  });
  try {
    const magic = new Uint8Array(2);
    const { bytesRead } = await handle.read(magic, 0, 2, 0);
    return bytesRead === 2 && magic[0] === 0x1f && magic[1] === 0x8b;
  } finally {
    await handle.close();
  }
};

/** The file's records with their line numbers; gzip is recognised by its magic number. */
async function* records(file: string): AsyncGenerator<{ number: number; record: BackupLine }> {
  const gzip = await isGzip(file);
  const raw = createReadStream(file);
  const input: Readable = gzip ? raw.pipe(createGunzip()) : raw;
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let number = 0;
  try {
    for await (const text of lines) {
      number += 1;
      if (text.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        throw new BackupFileError(
          `line ${number} is not JSON: the file is not a Chamada backup or is damaged`,
        );
      }
      const decoded = BackupLine.decode(value);
      if (E.isLeft(decoded))
        throw new BackupFileError(`line ${number} is not a record of a Chamada backup (format version 1)`);
      yield { number, record: decoded.right };
    }
  } finally {
    lines.close();
    raw.destroy();
  }
}

export interface BackupContents {
  readonly header: BackupHeader;
  readonly documents: ReadonlyMap<DatabaseName, number>;
}

/** Reads the whole file once and answers what it holds, or throws BackupFileError. */
export const verifyBackup = async (file: string): Promise<BackupContents> => {
  let header: BackupHeader | undefined;
  let current: DatabaseName | undefined;
  let complete = false;
  const counted = new Map<DatabaseName, number>();
  const fail = (number: number, why: string): never => {
    throw new BackupFileError(`line ${number}: ${why}`);
  };
  for await (const { number, record } of records(file)) {
    if (complete) fail(number, 'a record after the last one');
    if (record.kind === 'header') {
      if (header !== undefined) fail(number, 'a second header');
      header = record;
      continue;
    }
    if (header === undefined) return fail(number, 'the file does not start with a backup header');
    switch (record.kind) {
      case 'begin':
        if (current !== undefined) fail(number, `${current} has no end record`);
        if (!header.databases.includes(record.database) || counted.has(record.database))
          fail(number, `unexpected database ${record.database}`);
        current = record.database;
        counted.set(record.database, 0);
        break;
      case 'docs':
        if (current !== record.database) fail(number, `documents of ${record.database} outside its section`);
        counted.set(record.database, (counted.get(record.database) ?? 0) + record.docs.length);
        break;
      case 'end':
        if (current !== record.database) fail(number, `an end of ${record.database} outside its section`);
        if (counted.get(record.database) !== record.documents)
          fail(
            number,
            `${record.database} announces ${record.documents} documents and holds ${counted.get(record.database)}`,
          );
        current = undefined;
        break;
      case 'complete':
        for (const name of header.databases)
          if (counted.get(name) === undefined || record.documents[name] !== counted.get(name))
            fail(number, `the totals do not match the documents of ${name}`);
        complete = true;
        break;
    }
  }
  if (header === undefined) throw new BackupFileError('the file is empty');
  if (!complete) throw new BackupFileError('the file ends early: the backup is incomplete');
  return { header, documents: counted };
};

export interface RestoreOptions {
  readonly location: StoreLocation;
  readonly file: string;
  /** Replace a store that holds documents (all six databases are removed first). */
  readonly force?: boolean;
  readonly onProgress?: (p: Progress) => void;
  /** Called once the documents are stored, before the indexes are built. */
  readonly onIndexing?: () => void;
}

const openAll = async (location: StoreLocation): Promise<Map<DatabaseName, WholeDatabase>> => {
  const opened = new Map<DatabaseName, WholeDatabase>();
  try {
    for (const name of DATABASE_NAMES)
      opened.set(name, await openWholeDatabase(location, name, { mustExist: false }));
  } catch (e) {
    await closeAll(opened);
    throw e;
  }
  return opened;
};

const closeAll = async (opened: ReadonlyMap<DatabaseName, WholeDatabase>): Promise<void> => {
  await Promise.allSettled([...opened.values()].map((db) => db.close()));
};

/** Restores `file` into the store at `location`; answers what the file held. */
export const restoreBackup = async (options: RestoreOptions): Promise<BackupContents> => {
  const contents = await verifyBackup(options.file);
  let targets = await openAll(options.location);
  try {
    const held: Array<{ database: DatabaseName; documents: number }> = [];
    for (const [database, db] of targets) {
      const documents = await db.countDocuments();
      if (documents > 0) held.push({ database, documents });
    }
    if (held.length > 0) {
      if (options.force !== true) throw new TargetNotEmptyError(held);
      await closeAll(targets);
      targets = new Map();
      for (const name of DATABASE_NAMES) await destroyDatabase(options.location, name);
      targets = await openAll(options.location);
    }
    const written = new Map<DatabaseName, number>();
    for await (const { record } of records(options.file)) {
      if (record.kind !== 'docs' && record.kind !== 'end') continue;
      const expected = contents.documents.get(record.database) ?? 0;
      const documents = written.get(record.database) ?? 0;
      if (record.kind === 'end') {
        options.onProgress?.({ database: record.database, documents, expected, done: true });
        continue;
      }
      const db = targets.get(record.database);
      if (db === undefined) throw new Error(`no database ${record.database} in the store`);
      await db.load(record.docs);
      written.set(record.database, documents + record.docs.length);
      options.onProgress?.({
        database: record.database,
        documents: documents + record.docs.length,
        expected,
        done: false,
      });
    }
  } finally {
    await closeAll(targets);
  }
  // The service declares its indexes at start, and pouchdb-find builds a new index over every
  // document before `createIndex` returns: on restored databases that held the next start for a
  // minute (10,000 students and 20,000 events) before it listened. Built here, once, with the
  // operator watching, the start finds them in place.
  options.onIndexing?.();
  const store = await openStore(options.location);
  await store.close();
  return contents;
};
