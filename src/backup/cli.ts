/**
 * The backup command (decision 0022): `npm run backup -- --out FILE`, `npm run restore -- --in FILE`,
 * and in the image `node dist/server/backup.js backup|restore …`.
 *
 *   backup  --out FILE [--server URL]  FILE ending in .gz is gzipped; `-` writes to standard output;
 *                                      --server asks the running service (decision 0044)
 *   restore --in FILE [--force]        --force replaces a store that holds documents
 *
 * The store comes from the service's own variables (DATA_DIR, COUCHDB_URL, DB_PREFIX), and a running
 * service's token from CHAMADA_TOKEN, so no secret sits on a command line, and none is ever printed:
 * messages name databases, and any URL in an error has its credentials masked. Progress goes to
 * standard error, the data only to the file.
 * Exit status: 0 done, 1 failed, 2 usage or configuration, 3 the target store is not empty, 4 the
 * embedded store is open in a running service.
 */
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { describeErrors, EnvCodec } from '../config/config.js';
import { type StoreLocation, storeLocation } from '../store/store.js';
import { DatabaseMissingError, StoreInUseError } from '../store/wholeDatabases.js';
import { backupStream, locationSource, type Progress } from './backup.js';
import { closed, writeBackupFile } from './backupFiles.js';
import { backupFromServer, ServerBackupError } from './fromServer.js';
import { BackupFileError, restoreBackup, TargetNotEmptyError } from './restore.js';

export const EXIT = { ok: 0, failed: 1, usage: 2, notEmpty: 3, inUse: 4 } as const;

const USAGE = `usage:
  backup --out FILE [--server URL]  write a backup of the store (FILE.gz: gzipped; -: standard output)
  restore --in FILE [--force]       restore FILE into an empty store (--force: replace what it holds)
The store is the service's: DATA_DIR (embedded), or COUCHDB_URL, with DB_PREFIX.
With --server, the running service at URL takes the backup; CHAMADA_TOKEN holds an ADMIN's token.`;

const StoreEnv = t.type({
  DATA_DIR: EnvCodec.props.DATA_DIR,
  COUCHDB_URL: EnvCodec.props.COUCHDB_URL,
  DB_PREFIX: EnvCodec.props.DB_PREFIX,
});

export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly clock?: () => Date;
}

/** Masks the user information of every URL in a message (`//user:password@` → `//***@`). */
export const maskCredentials = (text: string): string => text.replace(/\/\/[^/\s@]*@/g, '//***@');

const describe = (location: StoreLocation): string =>
  location.kind === 'embedded'
    ? `the embedded store in ${location.dataDir}`
    : `CouchDB at ${maskCredentials(location.url)}`;

const progressLine =
  (verb: string, say: (line: string) => void) =>
  (p: Progress): void =>
    say(
      p.done
        ? `${verb}: ${p.database} done, ${p.documents} documents`
        : `${verb}: ${p.database} ${p.documents} of ${p.expected} documents`,
    );

const runBackup = async (source: Readable, out: string, io: CliIo, say: (l: string) => void) => {
  const started = Date.now();
  if (out === '-') {
    try {
      await pipeline([source, io.stdout], { end: false });
    } finally {
      await closed(source);
    }
    say(`backup: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return;
  }
  const size = await writeBackupFile(source, out);
  say(`backup: ${out} written, ${size} bytes in ${((Date.now() - started) / 1000).toFixed(1)} s`);
};

const runRestore = async (
  location: StoreLocation,
  file: string,
  force: boolean,
  say: (l: string) => void,
) => {
  const started = Date.now();
  const contents = await restoreBackup({
    location,
    file,
    force,
    onProgress: progressLine('restore', say),
    onIndexing: () => say('restore: building the indexes'),
  });
  say(
    `restore: ${[...contents.documents.values()].reduce((a, b) => a + b, 0)} documents from a backup of ` +
      `${contents.header.createdAt} restored in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
      'start the service: it rebuilds the projections from the restored events',
  );
};

const parseCommand = (argv: ReadonlyArray<string>) =>
  parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      out: { type: 'string' },
      in: { type: 'string' },
      force: { type: 'boolean' },
      server: { type: 'string' },
    },
  });

const isUrl = (text: string): boolean => {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
};

/** `backup --server URL`: the running service reads its own store and the command writes the file. */
const backupFromService = async (
  server: string,
  out: string,
  io: CliIo,
  say: (l: string) => void,
): Promise<number> => {
  const token = io.env.CHAMADA_TOKEN ?? '';
  if (!isUrl(server) || token === '') {
    say(
      `${isUrl(server) ? 'CHAMADA_TOKEN is not set' : `--server: ${maskCredentials(server)} is not an http(s) URL`}\n${USAGE}`,
    );
    return EXIT.usage;
  }
  try {
    say(`backup: from the service at ${maskCredentials(new URL(server).origin)}`);
    const source = await backupFromServer({
      server,
      token,
      onDatabaseDone: (database, documents) => say(`backup: ${database} done, ${documents} documents`),
    });
    await runBackup(source, out, io, say);
    return EXIT.ok;
  } catch (e) {
    if (e instanceof ServerBackupError) {
      say(`backup failed: ${e.message}`);
      return EXIT.failed;
    }
    const cause = e instanceof Error && e.cause instanceof Error ? ` (${e.cause.message})` : '';
    say(`backup failed: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}${cause}`);
    return EXIT.failed;
  }
};

/** Runs the command; answers the exit status. */
export const runCli = async (argv: ReadonlyArray<string>, io: CliIo): Promise<number> => {
  const say = (line: string) => io.stderr.write(`${maskCredentials(line)}\n`);
  let parsed: ReturnType<typeof parseCommand>;
  try {
    parsed = parseCommand(argv);
  } catch (e) {
    say(`${e instanceof Error ? e.message : String(e)}\n${USAGE}`);
    return EXIT.usage;
  }
  const [command, ...extra] = parsed.positionals;
  const { out, in: input, force, server } = parsed.values;
  const usable =
    extra.length === 0 &&
    ((command === 'backup' && out !== undefined && input === undefined && force === undefined) ||
      (command === 'restore' && input !== undefined && out === undefined && server === undefined));
  if (!usable) {
    say(USAGE);
    return EXIT.usage;
  }
  if (server !== undefined && out !== undefined) return backupFromService(server, out, io, say);
  const env = StoreEnv.decode(io.env);
  if (E.isLeft(env)) {
    say(
      `invalid configuration\n${describeErrors(env.left)
        .map((l) => `  - ${l}`)
        .join('\n')}`,
    );
    return EXIT.usage;
  }
  const location = storeLocation({
    dataDir: env.right.DATA_DIR,
    couchdbUrl: env.right.COUCHDB_URL,
    dbPrefix: env.right.DB_PREFIX,
  });
  try {
    if (command === 'backup' && out !== undefined) {
      say(`backup: from ${describe(location)}`);
      const source = backupStream({
        source: locationSource(location),
        onProgress: progressLine('backup', say),
        ...(io.clock === undefined ? {} : { clock: io.clock }),
      });
      await runBackup(source, out, io, say);
    } else if (input !== undefined) {
      say(`restore: into ${describe(location)}`);
      await runRestore(location, input, force === true, say);
    }
    return EXIT.ok;
  } catch (e) {
    if (e instanceof TargetNotEmptyError) {
      say(
        `restore refused: ${e.message}. Restore into an empty store (a new DATA_DIR, or a CouchDB without ` +
          'these databases), or add --force to remove these databases and replace them with the backup.',
      );
      return EXIT.notEmpty;
    }
    if (e instanceof StoreInUseError) {
      say(
        `${command}: ${e.message}: the embedded store can be read by one process at a time. ` +
          (command === 'backup'
            ? 'Ask the running service instead: --server URL with an ADMIN token in CHAMADA_TOKEN (or let it back ' +
              'itself up: BACKUP_DIR), or stop it first'
            : `Stop the service that uses ${describe(location)} first`),
      );
      return EXIT.inUse;
    }
    if (e instanceof BackupFileError) {
      say(`restore refused, nothing was written: ${e.message}`);
      return EXIT.failed;
    }
    if (e instanceof DatabaseMissingError) {
      say(`backup: ${e.message} in ${describe(location)}; check DATA_DIR, COUCHDB_URL and DB_PREFIX`);
      return EXIT.failed;
    }
    say(`${command} failed: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
    return EXIT.failed;
  }
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await runCli(process.argv.slice(2), {
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
  });
}
