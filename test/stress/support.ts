/**
 * Machinery shared by the stress battery (`test/stress/*.stress.ts`, `npm run test:stress`): the
 * service as a child process that can be wrapped (entered into a mount namespace), killed, restarted
 * and measured; a small real filesystem for the data directory; bounded load loops; and the checks
 * that compare what the store holds with what was acknowledged.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { open, readdir, readFile, rm, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import * as t from 'io-ts';
import { SERVICE_ENV, SERVICE_NODE_FLAGS } from '../../src/config/runtime.js';
import type { Database } from '../../src/store/pouch.js';
import { projectionStore } from '../../src/store/projections.js';
import { openStore, type Store } from '../../src/store/store.js';
import { startEventPipeline } from '../../src/sync/pipelineRuntime.js';
import { call, decodeAs, type HttpResult } from '../support/http.js';
import { childControl, collect } from '../support/mainProcess.js';
import { serviceEntry } from '../support/serviceBundle.js';
import { snapshot } from '../support/snapshot.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';
import { authHeaders, DEV_TOKENS, mutationHeaders } from '../support/testService.js';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------------
// The service as a child process

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface ChildServiceOptions {
  readonly label: string;
  readonly env: Record<string, string>;
  /** The data directory; a fresh temp directory (removed by `dispose`) when absent. */
  readonly dataDir?: string;
  /** A command prefix, such as `nsenter … --` to run the service inside a mount namespace. */
  readonly wrap?: ReadonlyArray<string>;
  /** Flags for the child's node, such as `--trace-gc` (diagnostics; NODE_OPTIONS refuses some). */
  readonly nodeArgs?: ReadonlyArray<string>;
  /** Lines of the child's output to keep apart (the last 200), such as V8's `Mark-Compact` lines. */
  readonly keep?: RegExp;
}

/**
 * The service in a child process (its bundle, `serviceEntry`), like `test/support/mainProcess.ts`'s
 * `serviceProcess`, plus what a stress test needs: the exit status of the last run (did it crash?),
 * the tail of its logs, a command prefix, and a data directory given from outside.
 */
export interface ChildService {
  readonly dataDir: string;
  readonly url: () => string;
  readonly pid: () => number | undefined;
  readonly running: () => boolean;
  /** How the last run ended; undefined while it runs (or before the first start). */
  readonly exit: () => ExitInfo | undefined;
  readonly logTail: (chars?: number) => string;
  /** The first error-level log lines of every run so far (at most 20). */
  readonly errorLines: () => ReadonlyArray<string>;
  /** The last 200 lines that matched `keep`. */
  readonly keptLines: () => ReadonlyArray<string>;
  /**
   * Every warning and error message logged so far, each with how often and when last (`msg (errorName)
   * ×N, last HH:MM:SS`): what a failed row says about a service that kept failing after its first lines.
   */
  readonly logSummary: () => string;
  /** How many warnings and errors so far had a message that starts with `msg`. */
  readonly loggedCount: (msg: string) => number;
  start(timeoutMs?: number): Promise<string>;
  kill(): Promise<void>;
  stop(): Promise<void>;
  dispose(): Promise<void>;
}

/**
 * What a stream has written, bounded: the first line that names the URL is kept, then only the last
 * `max` characters (a request log line per request would otherwise grow without bound under load).
 */
interface Tallied {
  count: number;
  last: string;
}

const LogLine = t.type({ level: t.number, msg: t.string });

/** Counts a warning or error line by its message and error name. */
const tallyLine = (tally: Map<string, Tallied>, line: string): void => {
  if (!/"level":(40|50|60)/.test(line)) return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return;
  }
  if (!LogLine.is(parsed)) return;
  const name: unknown = Reflect.get(parsed, 'errorName');
  const key = `${parsed.msg}${typeof name === 'string' ? ` (${name})` : ''}`;
  const time: unknown = Reflect.get(parsed, 'time');
  const last = typeof time === 'string' ? time.slice(11, 19) : '';
  const seen = tally.get(key);
  if (seen === undefined) tally.set(key, { count: 1, last });
  else {
    seen.count += 1;
    seen.last = last;
  }
};

const boundedCollect = (
  stream: NodeJS.ReadableStream | null,
  errors: string[],
  kept: { readonly re: RegExp | undefined; readonly lines: string[] },
  tally: Map<string, Tallied>,
  max = 64 * 1024,
): (() => string) => {
  let head = '';
  let tail = '';
  let partial = '';
  stream?.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    tail += text;
    // The first few error-level lines (pino level 50 and above), whatever comes after them, and the
    // lines asked for.
    const lines = `${partial}${text}`.split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) {
      if (/"level":(50|60)/.test(l) && errors.length < 20) errors.push(l.slice(0, 1500));
      tallyLine(tally, l);
      if (kept.re?.test(l) === true) {
        kept.lines.push(l.slice(0, 400));
        if (kept.lines.length > 200) kept.lines.shift();
      }
    }
    if (head === '') {
      const line = tail.split('\n').find((l) => l.includes('"url":"http'));
      if (line !== undefined) head = `${line}\n`;
    }
    if (tail.length > 2 * max) tail = tail.slice(-max);
  });
  return () => `${head}${tail}`;
};

/** Children still running when the test process exits (an interrupted run) are killed with it. */
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

export const childService = async (options: ChildServiceOptions): Promise<ChildService> => {
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await makeTempDir(options.label));
  let child: ChildProcess | undefined;
  let url = '';
  let exitInfo: ExitInfo | undefined;
  let stdout: () => string = () => '';
  let stderr: () => string = () => '';
  const errorLines: string[] = [];
  const tally = new Map<string, Tallied>();
  const kept = { re: options.keep, lines: [] as string[] };
  const { running, end } = childControl(() => child);
  return {
    dataDir,
    url: () => url,
    pid: () => (running() ? child?.pid : undefined),
    running,
    exit: () => exitInfo,
    errorLines: () => errorLines,
    keptLines: () => kept.lines,
    logSummary: () =>
      [...tally].map(([msg, { count, last }]) => `${msg} ×${count}, last ${last}`).join('; ') || 'none',
    loggedCount: (msg) =>
      [...tally].reduce((sum, [key, { count }]) => sum + (key.startsWith(msg) ? count : 0), 0),
    logTail: (chars = 3000) => `${stderr().slice(-chars)}\n${stdout().slice(-chars)}`,
    async start(timeoutMs = 60_000) {
      if (running()) throw new Error(`${options.label} is already running`);
      const wrap = options.wrap ?? [];
      const entry = await serviceEntry();
      const node = [
        process.execPath,
        ...SERVICE_NODE_FLAGS,
        ...(options.nodeArgs ?? []),
        ...(entry.kind === 'source' ? ['--import', 'tsx', 'src/main.ts'] : [entry.path]),
      ];
      const [command, ...args] = [...wrap, ...node];
      if (command === undefined) throw new Error('no command');
      exitInfo = undefined;
      const started = spawn(command, args, {
        env: {
          PATH: process.env.PATH ?? '',
          ...SERVICE_ENV,
          PORT: '0',
          HOST: '127.0.0.1',
          DATA_DIR: dataDir,
          LOG_LEVEL: 'info',
          // The battery drives many doors' worth of load through one principal and device; the
          // per-device limit (600 a minute) would answer it instead of the service under test.
          RATE_LIMIT_REQUESTS: '0',
          ...options.env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = started;
      live.add(started);
      started.on('exit', (code, signal) => {
        live.delete(started);
        exitInfo = { code, signal };
      });
      stdout = boundedCollect(started.stdout, errorLines, kept, tally);
      stderr = boundedCollect(started.stderr, errorLines, kept, tally);
      const out = stdout;
      const err = stderr;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out())?.[1];
        if (found !== undefined) {
          url = found;
          return url;
        }
        if (!running() || Date.now() > deadline) {
          throw new Error(
            `${options.label} did not start (${running() ? 'timed out' : 'exited'})\n${err().slice(-2000)}\n${out().slice(-2000)}`,
          );
        }
        await sleep(25);
      }
    },
    kill: () => end('SIGKILL'),
    stop: () => end('SIGTERM'),
    async dispose() {
      await end('SIGKILL');
      if (ownDir) await removeDir(dataDir);
    },
  };
};

/** A field of `/proc/<pid>/status` given in kB, in MiB. */
const statusMb = async (pid: number, field: string): Promise<number> => {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = new RegExp(`^${field}:\\s+(\\d+)\\s+kB$`, 'm').exec(status)?.[1];
  if (kb === undefined) throw new Error(`no ${field} for ${pid}`);
  return Number(kb) / 1024;
};

/** Resident memory of a process in MiB, from `/proc/<pid>/status` (VmRSS). */
export const rssMb = (pid: number): Promise<number> => statusMb(pid, 'VmRSS');

/**
 * The parts of the resident memory: anonymous (the heaps: V8's and malloc's) and file-backed (the
 * program's files, and the table files LevelDB maps to read them: pages of the page cache that the
 * kernel can drop, counted in VmRSS while mapped).
 */
export const rssPartsMb = async (pid: number): Promise<{ anon: number; file: number }> => ({
  anon: await statusMb(pid, 'RssAnon'),
  file: await statusMb(pid, 'RssFile'),
});

// ---------------------------------------------------------------------------------------------------
// A small real filesystem

/**
 * A tmpfs of `sizeMb` mounted over a fresh temp directory inside a private mount namespace (and a user
 * namespace, so no root is needed where unprivileged user namespaces are allowed): `unshare -Urm`
 * runs a holder process that mounts it and sleeps; the service is started inside the same namespaces
 * with `nsenter` (`wrap`), and the test reaches the files through `/proc/<holder>/root` (`view`).
 * The mount lives as long as the holder, so the service can be killed and restarted on the same data
 * and the test can open the store after a crash. Nothing is mounted in the test's own namespace.
 */
export interface SmallFilesystem {
  /** The mount point as the service sees it (its DATA_DIR). */
  readonly dir: string;
  /** The same directory as the test process reaches it. */
  readonly view: string;
  readonly wrap: ReadonlyArray<string>;
  /** Bytes free on the filesystem. */
  free(): Promise<number>;
  /** Fills every free byte with a ballast file; resolves with the bytes written. */
  fill(): Promise<number>;
  /** Removes the ballast. */
  release(): Promise<void>;
  /** Lines of LevelDB's own `LOG` files under the directory that mention an error, by database. */
  levelDbErrors(): Promise<string[]>;
  dispose(): Promise<void>;
}

const tool = (name: string): boolean => spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;

export const smallFilesystem = async (sizeMb: number): Promise<SmallFilesystem> => {
  for (const name of ['unshare', 'nsenter']) {
    if (!tool(name)) throw new Error(`the disk-full test needs util-linux's ${name}`);
  }
  const dir = await makeTempDir('tmpfs');
  const holder = spawn(
    'unshare',
    [
      '--user',
      '--map-root-user',
      '--mount',
      '--propagation',
      'private',
      'sh',
      '-c',
      `mount -t tmpfs -o size=${sizeMb}m,mode=0700 tmpfs "$0" && echo mounted && exec sleep 3600`,
      dir,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  live.add(holder);
  holder.on('exit', () => live.delete(holder));
  const out = collect(holder.stdout);
  const err = collect(holder.stderr);
  const deadline = Date.now() + 10_000;
  while (!out().includes('mounted')) {
    if (holder.exitCode !== null || Date.now() > deadline) {
      holder.kill('SIGKILL');
      await removeDir(dir);
      throw new Error(
        `cannot mount a ${sizeMb} MiB tmpfs in a private mount namespace (unshare -Urm): ${err()}`,
      );
    }
    await sleep(20);
  }
  const pid = holder.pid;
  if (pid === undefined) throw new Error('the namespace holder has no pid');
  const view = `/proc/${pid}/root${dir}`;
  const ballast = join(view, 'ballast');
  return {
    dir,
    view,
    wrap: [
      'nsenter',
      '-t',
      String(pid),
      '--user',
      '--mount',
      '--preserve-credentials',
      `--wd=${process.cwd()}`,
      '--',
    ],
    async free() {
      const s = await statfs(view);
      return s.bavail * s.bsize;
    },
    async fill() {
      const file = await open(ballast, 'a');
      let written = 0;
      try {
        for (const size of [1 << 20, 64 << 10, 4 << 10, 512, 1]) {
          const chunk = new Uint8Array(size).fill(0x5a);
          for (;;) {
            try {
              const { bytesWritten } = await file.write(chunk);
              written += bytesWritten;
              if (bytesWritten < size) break;
            } catch (e) {
              if (e instanceof Error && 'code' in e && e.code === 'ENOSPC') break;
              throw e;
            }
          }
        }
      } finally {
        await file.close();
      }
      return written;
    },
    release: () => rm(ballast, { force: true }),
    async levelDbErrors() {
      const out: string[] = [];
      for (const entry of await readdir(view, { withFileTypes: true })) {
        if (!entry.isDirectory()) continue;
        const log = await readFile(join(view, entry.name, 'LOG'), 'utf8').catch(() => '');
        for (const line of log.split('\n'))
          if (/error/i.test(line)) out.push(`${entry.name}: ${line.trim()}`);
      }
      return out;
    },
    async dispose() {
      if (holder.exitCode === null && holder.signalCode === null) {
        const exited = once(holder, 'exit');
        holder.kill('SIGKILL');
        await exited;
      }
      await removeDir(dir);
    },
  };
};

// ---------------------------------------------------------------------------------------------------
// HTTP

/** `call` that answers `undefined` instead of throwing when the connection fails. */
export const tryCall = (
  url: string,
  init: RequestInit = {},
  timeoutMs = 30_000,
): Promise<HttpResult | undefined> =>
  call(url, { ...init, signal: AbortSignal.timeout(timeoutMs) }).catch(() => undefined);

export const post = (
  url: string,
  body: unknown,
  token: string = DEV_TOKENS.DEV_ADMIN_TOKEN,
  key: string = randomUUID(),
  timeoutMs = 30_000,
): Promise<HttpResult | undefined> =>
  tryCall(
    url,
    { method: 'POST', headers: mutationHeaders(token, key), body: JSON.stringify(body) },
    timeoutMs,
  );

export const get = (
  url: string,
  token: string = DEV_TOKENS.DEV_ADMIN_TOKEN,
): Promise<HttpResult | undefined> => tryCall(url, { headers: authHeaders(token) });

/** The error code of an envelope, if the body is one. */
export const errorCode = (r: HttpResult | undefined): string | undefined => {
  const json = r?.json;
  if (typeof json !== 'object' || json === null || !('error' in json)) return undefined;
  const error: unknown = json.error;
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
};

/**
 * One exchange as a tablet's outbox makes it: an answer 503 `STORE_UNAVAILABLE` (the store, or the
 * request's deadline on a starved machine: decision 0046) is sent again after its `Retry-After`, at
 * most `attempts` sends in all; any other answer, or none, is the exchange's. `resent` counts the sends
 * made again.
 */
export const servedLikeATablet = async (
  send: () => Promise<HttpResult | undefined>,
  resent: { count: number },
  attempts = 20,
): Promise<HttpResult | undefined> => {
  for (let attempt = 1; ; attempt += 1) {
    const r = await send();
    if (r?.status !== 503 || errorCode(r) !== 'STORE_UNAVAILABLE' || attempt === attempts) return r;
    resent.count += 1;
    const seconds = Number(r.headers.get('retry-after'));
    await sleep(Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 2000);
  }
};

/** Counts answers by `<label> <status>` (or `<label> no answer`). */
export class Tally {
  readonly counts = new Map<string, number>();
  add(label: string, r: HttpResult | undefined): void {
    const key = `${label} ${r === undefined ? 'no answer' : String(r.status)}${
      r !== undefined && r.status >= 400 ? ` ${errorCode(r) ?? ''}`.trimEnd() : ''
    }`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
  total(match: (key: string) => boolean = () => true): number {
    let n = 0;
    for (const [k, v] of this.counts) if (match(k)) n += v;
    return n;
  }
  toString(): string {
    return [...this.counts.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ');
  }
}

/** Runs `worker` on `concurrency` lanes until `until()` is true; each lane awaits its own calls. */
export const lanes = async (
  concurrency: number,
  until: () => boolean,
  worker: (lane: number, iteration: number) => Promise<void>,
): Promise<void> => {
  await Promise.all(
    Array.from({ length: concurrency }, async (_, lane) => {
      for (let i = 0; !until(); i += 1) await worker(lane, i);
    }),
  );
};

/** Waits until `probe` is true (checked every `everyMs`); resolves with the time it took, or throws. */
export const eventually = async (
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs: number,
  everyMs = 200,
): Promise<number> => {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (await probe()) return Date.now() - started;
    await sleep(everyMs);
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
};

// ---------------------------------------------------------------------------------------------------
// Events and what the store holds

export type Token = (typeof DEV_TOKENS)[keyof typeof DEV_TOKENS];

/** `n` attendance marks over `students` at one session, on 2026-11-26 (the seed's default day). */
export const marks = (
  n: number,
  students: ReadonlyArray<string>,
  sessionId: string,
  offset = 0,
): Array<Record<string, string>> =>
  Array.from({ length: n }, (_, i) => ({
    eventId: randomUUID(),
    type: (offset + i) % 3 === 0 ? 'MARK_ABSENT' : 'MARK_PRESENT',
    studentId: students[(offset + i) % students.length] ?? '',
    sessionId,
    clientTimestamp: new Date(
      Date.UTC(2026, 10, 26, 9, 0, 0, ((offset + i) * 997) % 86_000_000),
    ).toISOString(),
  }));

const RevsDiff = t.record(t.string, t.type({ missing: t.array(t.string) }));

/**
 * Which of `eventIds` the running service does not hold, asked through the replication endpoint's
 * `_revs_diff` (an event held under any revision is not missing), in slices of 500.
 */
export const missingEvents = async (
  url: string,
  eventIds: ReadonlyArray<string>,
  token: string = DEV_TOKENS.DEV_CALLER_TOKEN,
): Promise<string[]> => {
  const missing: string[] = [];
  for (let i = 0; i < eventIds.length; i += 500) {
    const slice = eventIds.slice(i, i + 500);
    const r = await call(`${url}/api/v1/replication/events/_revs_diff`, {
      method: 'POST',
      headers: { ...authHeaders(token), 'Content-Type': 'application/json' },
      body: JSON.stringify(Object.fromEntries(slice.map((id) => [`event:${id}`, ['1-0']]))),
    });
    if (r.status !== 200) throw new Error(`_revs_diff answered ${r.status}: ${r.text.slice(0, 300)}`);
    missing.push(...Object.keys(decodeAs(RevsDiff, r.json)).map((id) => id.slice('event:'.length)));
  }
  return missing;
};

const EventsInAspect = t.type({ _id: t.string, events: t.array(t.type({ eventId: t.string })) });

/** Every event id listed by the aspect documents of a projections snapshot (with repeats). */
export const eventsInAspects = (docs: ReadonlyArray<unknown>): string[] =>
  docs.flatMap((d) => {
    const decoded = EventsInAspect.decode(d);
    return decoded._tag === 'Right' && decoded.right._id.startsWith('aspect:')
      ? decoded.right.events.map((e) => e.eventId)
      : [];
  });

const CheckinAspect = t.type({
  _id: t.string,
  state: t.type({
    kind: t.literal('checkin'),
    checkins: t.array(t.type({ checkInId: t.string, status: t.string })),
  }),
});

/** Every check-in the aspect documents of a projections snapshot hold, with its projected status. */
export const projectedCheckins = (docs: ReadonlyArray<unknown>): Map<string, string> =>
  new Map(
    docs.flatMap((d) => {
      const decoded = CheckinAspect.decode(d);
      return decoded._tag === 'Right'
        ? decoded.right.state.checkins.map((c) => [c.checkInId, c.status] as const)
        : [];
    }),
  );

/**
 * The check-ins whose record in the private database is missing or does not show the status the
 * projection holds (the write-through of decision 0017).
 */
export const checkinRecordsOutOfLine = async (
  store: Store,
  projected: ReadonlyMap<string, string>,
): Promise<string[]> => {
  const ids = [...projected.keys()];
  const rows = (
    await store.db.private.allDocs({ keys: ids.map((id) => `checkin:${id}`), include_docs: true })
  ).rows;
  return rows.flatMap((r, i) => {
    const id = ids[i] ?? '';
    const doc: unknown = 'error' in r ? undefined : r.doc;
    return t.type({ status: t.string }).is(doc) && doc.status === projected.get(id) ? [] : [id];
  });
};

/** How many entries of `ids` repeat an earlier one. */
export const repeats = (ids: ReadonlyArray<string>): number => ids.length - new Set(ids).size;

/** Ids of every document of `db` whose id starts with `prefix`. */
export const idsWithPrefix = async (db: Database, prefix: string): Promise<string[]> => {
  const rows = await db.allDocs({ startkey: prefix, endkey: `${prefix}\ufff0` });
  return rows.rows.map((r) => r.id);
};

export interface RebuildComparison {
  /** The projections as the service left them, caught up from its checkpoint. */
  readonly resumed: unknown[];
  readonly rebuilt: unknown[];
}

/**
 * Catches the stored projections up from their checkpoint, snapshots them, then resets them and
 * replays every event from scratch (the rebuild of decision 0017), and snapshots that.
 */
export const resumedAndRebuilt = async (store: Store): Promise<RebuildComparison> => {
  const projections = projectionStore(store.db.projections);
  const run = async () => {
    const pipeline = await startEventPipeline({
      events: store.db.events,
      projections,
      audit: async () => undefined,
    });
    await pipeline.catchUp();
    await pipeline.stop();
  };
  await run();
  const resumed = await snapshot(store.db.projections);
  await projections.reset();
  await run();
  return { resumed, rebuilt: await snapshot(store.db.projections) };
};

/** One instance's projections: every event replayed into a fresh embedded store. */
export const rebuildFrom = async (events: ReadonlyArray<Record<string, unknown>>): Promise<unknown[]> => {
  const dir = await makeTempDir('rebuild');
  const fresh = await openEmbedded(dir);
  try {
    for (let i = 0; i < events.length; i += 500) await fresh.db.events.bulkDocs(events.slice(i, i + 500));
    const pipeline = await startEventPipeline({
      events: fresh.db.events,
      projections: projectionStore(fresh.db.projections),
      audit: async () => undefined,
    });
    await pipeline.catchUp();
    await pipeline.stop();
    return await snapshot(fresh.db.projections);
  } finally {
    await fresh.close();
    await removeDir(dir);
  }
};

/** The paths at which two JSON values differ, each with both values (at most `max`). */
const jsonDifferences = (a: unknown, b: unknown, path = '', max = 6): string[] => {
  if (canonicalize(a) === canonicalize(b)) return [];
  const objects = typeof a === 'object' && a !== null && typeof b === 'object' && b !== null;
  if (!objects || Array.isArray(a) !== Array.isArray(b))
    return [`${path || '.'}: ${canonicalize(a)?.slice(0, 200)} / rebuilt: ${canonicalize(b)?.slice(0, 200)}`];
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys
    .flatMap((k) => jsonDifferences(Reflect.get(a, k), Reflect.get(b, k), `${path}.${k}`, max))
    .slice(0, max);
};

/**
 * Each document that differs between two sets of projections, named with the fields that differ (key
 * order is the server's to choose: compared as values), for a failure that says what differs.
 */
export const differingDocs = (ours: ReadonlyArray<unknown>, rebuilt: ReadonlyArray<unknown>): string[] => {
  const byId = (docs: ReadonlyArray<unknown>) =>
    new Map(docs.map((d) => [String(Reflect.get(Object(d), '_id')), d] as const));
  const a = byId(ours);
  const b = byId(rebuilt);
  return [...new Set([...a.keys(), ...b.keys()])].flatMap((id) => {
    const differences = jsonDifferences(a.get(id), b.get(id));
    return differences.length === 0 ? [] : [`${id}: ${differences.join('; ')}`];
  });
};

/**
 * Every event document of `store` as stored, without its revision (design documents left out).
 * The listing is read until two reads 300 ms apart name the same documents (a range read on a cluster
 * is served by one copy of each shard range); each of `expected` it still lacks is then read by key,
 * a quorum read, so that an event reads as "not stored" only when a quorum of copies lacks it.
 */
export const storedEvents = async (
  store: Store,
  expected: Iterable<string> = [],
): Promise<Array<Record<string, unknown>>> => {
  const read = async () =>
    (await store.db.events.allDocs({ include_docs: true })).rows.flatMap((r) => {
      if (r.id.startsWith('_design/') || r.doc === undefined) return [];
      const { _rev: _r, ...doc } = r.doc;
      return [doc];
    });
  const idsOf = (docs: ReadonlyArray<Record<string, unknown>>) =>
    docs
      .map((d) => String(d._id))
      .sort()
      .join('\n');
  let docs = await read();
  for (let attempt = 0; attempt < 20; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const again = await read();
    const agree = idsOf(again) === idsOf(docs);
    docs = again;
    if (agree) break;
  }
  const listed = new Set(docs.map((d) => String(d._id)));
  const unlisted = [...expected].filter((id) => !listed.has(id));
  if (unlisted.length === 0) return docs;
  const byKey = (await store.db.events.allDocs({ keys: unlisted, include_docs: true })).rows.flatMap((r) => {
    if ('error' in r || r.doc === undefined || r.doc === null) return [];
    const { _rev: _r, ...doc } = r.doc;
    return [doc];
  });
  return [...docs, ...byKey];
};

/** Opens the embedded store of a stopped service. */
export const openEmbedded = (dataDir: string): Promise<Store> =>
  openStore({ kind: 'embedded', dataDir, prefix: 'chamada_' });

/** A metrics token the stress rows give their services, so they can read the pipeline's gauges. */
export const ROW_METRICS_TOKEN = 'a-stress-test-metrics-token-0123456789abcdef';

/**
 * The pipeline's backlog as the service reports it (`/metrics`, with `ROW_METRICS_TOKEN`): what a row
 * whose projections differ from their rebuild prints, to tell a pipeline still behind from one that is
 * idle and lost something.
 */
export const pipelineGauges = async (url: string): Promise<string> => {
  const r = await fetch(`${url}/metrics`, {
    headers: { Authorization: `Bearer ${ROW_METRICS_TOKEN}` },
  }).catch(() => undefined);
  if (r?.status !== 200) return `no metrics (${r?.status ?? 'no answer'})`;
  const text = await r.text();
  const value = (name: string) =>
    text
      .split('\n')
      .find((l) => l.startsWith(`${name} `))
      ?.split(' ')[1] ?? '?';
  return `pending ${value('chamada_pipeline_pending_events')}, lag ${value('chamada_pipeline_lag_seconds')} s, forks settled ${value('chamada_pipeline_forks_settled_total')}`;
};

/** The events an aspect document holds, by the first 8 characters of their ids (none for others). */
const eventIdsOf = (doc: unknown): string[] => eventsInAspects([doc]).map((id) => id.slice(0, 8));

/**
 * How a projection document came to be what it is: every leaf's branch (newest first, at most
 * `depth` revisions), each revision with the events it added and dropped against its parent. What a
 * failed row prints for a document unlike its rebuild, so a lost update shows the revision that
 * dropped an event and what it was written on (the store keeps old revisions' bodies until compaction).
 */
export const lineage = async (db: Database, id: string, depth = 12): Promise<string> => {
  const leaves: unknown = await db.get(id, { open_revs: 'all', revs: true }).catch((e: unknown) => String(e));
  if (!Array.isArray(leaves)) return `${id}: ${String(leaves)}`;
  const bodies = new Map<string, unknown>();
  const body = async (rev: string): Promise<unknown> => {
    if (!bodies.has(rev)) bodies.set(rev, await db.get(id, { rev }).catch(() => undefined));
    return bodies.get(rev);
  };
  const branches: string[] = [];
  for (const leaf of leaves) {
    const doc: unknown = typeof leaf === 'object' && leaf !== null ? Reflect.get(leaf, 'ok') : undefined;
    if (typeof doc !== 'object' || doc === null) continue;
    const revisions: unknown = Reflect.get(doc, '_revisions');
    const start: unknown =
      typeof revisions === 'object' && revisions !== null ? Reflect.get(revisions, 'start') : 0;
    const ids: unknown =
      typeof revisions === 'object' && revisions !== null ? Reflect.get(revisions, 'ids') : [];
    if (typeof start !== 'number' || !Array.isArray(ids)) continue;
    const revs = ids.slice(0, depth + 1).map((h, i) => `${start - i}-${String(h)}`);
    const steps: string[] = [];
    for (const [i, rev] of revs.entries()) {
      if (i === depth) break;
      const mine = eventIdsOf(await body(rev));
      const parent = revs[i + 1];
      const before = parent === undefined ? [] : eventIdsOf(await body(parent));
      const added = mine.filter((e) => !before.includes(e));
      const dropped = before.filter((e) => !mine.includes(e));
      steps.push(
        `${rev.slice(0, 12)}${bodies.get(rev) === undefined ? ' (no body)' : ''} ${mine.length} ev` +
          `${added.length > 0 ? ` +${added.join(',')}` : ''}${dropped.length > 0 ? ` DROPPED ${dropped.join(',')}` : ''}`,
      );
    }
    branches.push(`${Reflect.get(doc, '_deleted') === true ? 'deleted ' : ''}leaf [${steps.join(' < ')}]`);
  }
  return `${id}: ${branches.join(' ; ')}`;
};

/** The document id a line of `differingDocs` is about. */
export const differingId = (line: string): string => line.slice(0, line.indexOf(': '));
