/**
 * A backup asked of a running service (decision 0044): `GET /api/v1/backup` with an ADMIN's bearer
 * token, its body written as the command writes a backup of its own. The body is taken for a backup
 * only if its last line is the `complete` record: a connection cut half-way ends the body early, and
 * such a file must never be left under the name of a finished backup.
 */
import { randomUUID } from 'node:crypto';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { BACKUP_MEDIA_TYPE } from '../domain/backup.js';

/** The service refused, or answered something other than a backup. */
export class ServerBackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ServerBackupError';
  }
}

const Envelope = t.type({ error: t.type({ code: t.string, message: t.string }) });

const refusal = async (res: Response): Promise<ServerBackupError> => {
  const text = await res.text().catch(() => '');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const envelope = Envelope.decode(parsed);
  const why = E.isRight(envelope)
    ? `${envelope.right.error.code}: ${envelope.right.error.message}`
    : `HTTP ${res.status}`;
  const hint =
    res.status === 401
      ? ' (CHAMADA_TOKEN must be a valid access token of an ADMIN)'
      : res.status === 403
        ? ' (only an ADMIN may take a backup)'
        : '';
  return new ServerBackupError(`the service refused the backup: ${why}${hint}`);
};

const DONE = /\{"kind":"end","database":"([a-z]+)","documents":(\d+)\}/g;

/**
 * Passes the body through, telling each database as its `end` line goes by, and fails at the end
 * unless the last line was the `complete` record.
 */
const watched = (onDatabaseDone: (database: string, documents: number) => void): Transform => {
  // The end of the text so far: enough to hold a record split across two chunks, and the last line.
  let tail = '';
  const told = new Set<string>();
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      const text = tail + chunk.toString('utf8');
      for (const m of text.matchAll(DONE)) {
        const [, database = '', documents = '0'] = m;
        if (!told.has(database)) {
          told.add(database);
          onDatabaseDone(database, Number(documents));
        }
      }
      tail = text.slice(-4096);
      done(null, chunk);
    },
    flush(done: TransformCallback) {
      const last = tail.trimEnd().split('\n').at(-1) ?? '';
      done(
        last.startsWith('{"kind":"complete"')
          ? null
          : new ServerBackupError('the backup ended early (the connection was cut): no file was kept'),
      );
    },
  });
};

/** The body's chunks; a body left unread (the file could not be written) is cancelled. */
async function* chunksOf(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        return;
      }
      yield value;
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
  }
}

export interface ServerBackupOptions {
  readonly server: string;
  readonly token: string;
  readonly onDatabaseDone: (database: string, documents: number) => void;
  readonly fetch?: typeof fetch;
}

/** The backup's body as a stream that fails unless it was whole. */
export const backupFromServer = async (options: ServerBackupOptions): Promise<Readable> => {
  const url = new URL('/api/v1/backup', options.server);
  const res = await (options.fetch ?? fetch)(url, {
    headers: {
      Authorization: `Bearer ${options.token}`,
      Accept: BACKUP_MEDIA_TYPE,
      // Required of every authenticated call; a command run is a device of its own.
      'X-Device-Id': randomUUID(),
    },
  });
  if (res.status !== 200) throw await refusal(res);
  if (res.body === null || !(res.headers.get('content-type') ?? '').startsWith(BACKUP_MEDIA_TYPE))
    throw new ServerBackupError(`${url.origin} did not answer a backup: is it a Chamada service?`);
  const body = Readable.from(chunksOf(res.body));
  const checked = watched(options.onDatabaseDone);
  // A cut connection fails the body: the failure must reach whoever reads the checked stream.
  body.once('error', (e) => checked.destroy(e));
  return body.pipe(checked);
};
