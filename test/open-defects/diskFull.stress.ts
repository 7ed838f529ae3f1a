/**
 * Disk full: the service's data directory on a small real filesystem that fills up under load.
 *
 * What this uses, and why: a 48 MiB tmpfs mounted over the data directory inside a private mount
 * namespace (`unshare -Urm`; see `smallFilesystem` in ./support.ts), and the service started inside
 * it with `nsenter`. LevelDB (leveldown is native code) then meets a real ENOSPC from the kernel on its
 * own write(2) calls: wrapping Node's `fs` could not reach it, and an LD_PRELOAD shim would fake what
 * the kernel does anyway. No root is needed where unprivileged user namespaces are allowed, nothing
 * is mounted in the test's own namespace, and the mount lives as long as a holder process, so the
 * test can open the store the service leaves behind (through `/proc/<holder>/root`). The disk is
 * filled with a ballast file; "space returns" is the ballast being removed.
 *
 * Two tests, one criterion each, over the same scenario (warm-up, disk full under load, space
 * returns, more load, graceful stop, the store reopened and compared with what was acknowledged):
 * 1. the process stays up while the disk is full, answers no write it could not store with a 2xx,
 *    and serves writes again once space returns, without a restart;
 * 2. every write answered 2xx (before, during and after the full disk) is in the store as the next
 *    start reads it, with its audit entry. This one is about what a process that lives through a
 *    full disk keeps, so the disk is full only briefly (0.6 s, shorter than the roster projector's
 *    1 s retry whose index update is what test 1 usually sees kill the process), three times with a stop
 *    and start after each, and student registration is left out. Should the process die anyway, it is restarted and the test goes on.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { figure } from '../reliability/figures.js';
import {
  type ChildService,
  childService,
  eventually,
  get,
  lanes,
  marks,
  openEmbedded,
  post,
  type SmallFilesystem,
  smallFilesystem,
  Tally,
} from '../stress/support.js';
import type { HttpResult } from '../support/http.js';
import { seedSmallRoster } from '../support/seed.js';
import { DEV_TOKENS } from '../support/testService.js';

const DISK_MB = 48;
const FULL_LOAD_MS = 4000;
/** Shorter than the roster projector's 1 s retry, whose full pass is what usually kills the process (test 1). */
const BRIEF_FULL_MS = 600;
const AFTER_LOAD_MS = 3000;
const LANES = 3;
/** How long writes may take to succeed again once space returned, before the process is restarted. */
const RECOVERY_MS = 10_000;

const Synced = t.type({ synced: t.array(t.type({ eventId: t.string, duplicate: t.boolean })) });
const CheckedIn = t.type({ checkInId: t.string, code: t.string, status: t.string });
const Created = t.type({ studentId: t.string });

type Phase = 'before' | 'full' | 'after';

/** What the 2xx answers of one phase promised is stored. */
interface Acknowledged {
  readonly events: Set<string>;
  readonly checkedIn: Set<string>;
  readonly checkedOut: Set<string>;
  readonly students: Set<string>;
  readonly correlationIds: Set<string>;
}

const acknowledged = (): Acknowledged => ({
  events: new Set(),
  checkedIn: new Set(),
  checkedOut: new Set(),
  students: new Set(),
  correlationIds: new Set(),
});

const writes = (a: Acknowledged) => a.events.size + a.students.size + a.checkedIn.size + a.checkedOut.size;

interface Outcome {
  readonly ballastMb: number;
  readonly fullMs: number;
  readonly episodes: number;
  readonly full: Tally;
  readonly afterwards: Tally;
  readonly health: number | undefined;
  /** Set when the process exited while the disk was full: its first error lines. */
  readonly died: string | undefined;
  /** Set when writes were still refused a while after space returned (the process is then restarted). */
  readonly stuck: string | undefined;
  /** How long after space returned writes were answered 2xx again (the longest episode). */
  readonly recoveryMs: number;
  readonly acks: Record<Phase, Acknowledged>;
  /** Per phase, the acknowledged writes the reopened store lacks. */
  readonly lost: Record<Phase, string[]>;
  readonly unaudited: string[];
  readonly cleanStop: boolean;
}

const scenario = async (
  fs: SmallFilesystem,
  service: ChildService,
  options: {
    readonly registerStudents: boolean;
    readonly fullMs: number;
    readonly afterMs: number;
    readonly episodes: number;
  },
): Promise<Outcome> => {
  const url = await service.start();
  const { sessionId, studentIds, classId } = await seedSmallRoster(
    url,
    Array.from({ length: 24 }, (_, i) => `Criança ${i}`),
    new Date().toISOString().slice(0, 10),
  );
  let base = url;
  const acks: Record<Phase, Acknowledged> = {
    before: acknowledged(),
    full: acknowledged(),
    after: acknowledged(),
  };
  let phase: Phase = 'before';
  // Each lane owns a slice of the children, so lanes never race on one check-in.
  const open = new Map<string, { checkInId: string; code: string }>();
  const acknowledge = (ack: Acknowledged, r: HttpResult | undefined): r is HttpResult => {
    if (r === undefined || r.status < 200 || r.status >= 300) return false;
    const correlationId = r.headers.get('x-correlation-id');
    if (correlationId !== null) ack.correlationIds.add(correlationId);
    return true;
  };
  const kinds = options.registerStudents ? 4 : 3;
  const step = async (tally: Tally, lane: number, i: number) => {
    const ack = acks[phase];
    const mine = studentIds.filter((_, k) => k % LANES === lane);
    const studentId = mine[i % mine.length] ?? '';
    switch (i % kinds) {
      case 0: {
        const r = await post(`${base}/api/v1/sync/events`, { events: marks(20, studentIds, sessionId, i) });
        tally.add('sync', r);
        if (acknowledge(ack, r) && Synced.is(r.json))
          for (const s of r.json.synced) if (!s.duplicate) ack.events.add(s.eventId);
        return;
      }
      case 1:
      case 2: {
        const held = open.get(studentId);
        if (held === undefined) {
          const r = await post(
            `${base}/api/v1/check-in`,
            { sessionId, studentId },
            DEV_TOKENS.DEV_CALLER_TOKEN,
          );
          tally.add('check-in', r);
          if (acknowledge(ack, r) && CheckedIn.is(r.json)) {
            ack.checkedIn.add(r.json.checkInId);
            open.set(studentId, { checkInId: r.json.checkInId, code: r.json.code });
          }
        } else {
          const r = await post(
            `${base}/api/v1/check-out`,
            { checkInId: held.checkInId, code: held.code, pickupPerson: 'G' },
            DEV_TOKENS.DEV_CALLER_TOKEN,
          );
          tally.add('check-out', r);
          const status = r?.status;
          if (acknowledge(ack, r)) {
            ack.checkedOut.add(held.checkInId);
            open.delete(studentId);
          } else if (status === 409) open.delete(studentId);
        }
        return;
      }
      default: {
        const r = await post(`${base}/api/v1/students`, {
          displayName: `Nova ${randomUUID().slice(0, 8)}`,
          guardianName: 'G',
          phones: [],
          classId,
        });
        tally.add('student', r);
        if (acknowledge(ack, r) && Created.is(r.json)) ack.students.add(r.json.studentId);
      }
    }
  };
  const load = async (tally: Tally, ms: number) => {
    const until = Date.now() + ms;
    await lanes(
      LANES,
      () => Date.now() > until,
      (lane, i) => step(tally, lane, i),
    );
  };

  // Warm up on a roomy disk: everything succeeds.
  const warm = new Tally();
  await load(warm, 1500);
  expect(
    warm.total((k) => !/ 2\d\d$/.test(k)),
    warm.toString(),
  ).to.equal(0);

  // The disk fills up under load, then space returns; `episodes` times.
  const full = new Tally();
  const afterwards = new Tally();
  let ballast = 0;
  let health: number | undefined;
  let died: string | undefined;
  let stuck: string | undefined;
  let recoveryMs = 0;
  for (let episode = 0; episode < options.episodes; episode += 1) {
    phase = 'full';
    ballast = Math.max(ballast, await fs.fill());
    await load(full, options.fullMs);
    health ??= (await get(`${base}/api/v1/health`))?.status;
    if (!service.running() && died === undefined) {
      const tail = service.logTail(8000);
      died = `exit ${JSON.stringify(service.exit())}: ${
        /\[?Error: [^\n\]]*\]?/.exec(tail.slice(tail.indexOf('triggerUncaughtException')))?.[0] ??
        tail.slice(-600).trim()
      }`;
    }

    // Space returns. A process that died is started again so the rest can be observed.
    await fs.release();
    phase = 'after';
    const returned = Date.now();
    if (!service.running()) base = await service.start();
    const probe = new Tally();
    const writesAgain = (ms: number) =>
      eventually(
        'writes succeed again after space returned',
        async () => {
          const synced = await post(`${base}/api/v1/sync/events`, {
            events: marks(1, studentIds, sessionId),
          });
          probe.add('sync', synced);
          if (!acknowledge(acks.after, synced) || !Synced.is(synced.json)) return false;
          for (const s of synced.json.synced) acks.after.events.add(s.eventId);
          return true;
        },
        ms,
        250,
      );
    const recovered = await writesAgain(RECOVERY_MS).then(
      () => true,
      () => false,
    );
    if (!recovered) {
      // Still refusing writes with space back: say why (LevelDB's own LOG files), restart it, go on.
      stuck ??=
        `episode ${episode + 1}: writes still refused ${RECOVERY_MS / 1000} s after space returned ` +
        `(${probe.toString()}); LevelDB's LOG: ${(await fs.levelDbErrors()).slice(-2).join(' | ')}`;
      await service.stop();
      base = await service.start();
      await writesAgain(RECOVERY_MS);
    }
    recoveryMs = Math.max(recoveryMs, Date.now() - returned);
    await load(afterwards, options.afterMs);
    // Between episodes, a stop and a start: what the next start reads is what was kept, and later
    // writes cannot reach LevelDB's next memtable flush before it is read.
    if (episode + 1 < options.episodes) {
      await service.stop();
      base = await service.start();
    }
  }

  // A graceful stop; the store is then read as the next start would read it.
  await service.stop();
  const cleanStop = service.exit()?.code === 0;
  const store = await openEmbedded(fs.view);
  try {
    const audit = await store.db.audit.allDocs({ include_docs: true });
    const audited = new Set(
      audit.rows.flatMap((r) => {
        const doc: unknown = r.doc;
        return t.type({ correlation_id: t.string }).is(doc) ? [doc.correlation_id] : [];
      }),
    );
    const has = async (db: 'events' | 'private', ids: string[]) =>
      (await store.db[db].allDocs({ keys: ids, include_docs: true })).rows;
    const missing = async (a: Acknowledged): Promise<string[]> => {
      const lost: string[] = [];
      for (const r of await has(
        'events',
        [...a.events].map((id) => `event:${id}`),
      ))
        if ('error' in r || r.value.deleted === true) lost.push(r.key);
      for (const r of await has(
        'private',
        [...a.students].map((id) => `student:${id}`),
      ))
        if ('error' in r) lost.push(r.key);
      for (const r of await has(
        'private',
        [...a.checkedIn].map((id) => `checkin:${id}`),
      ))
        if ('error' in r) lost.push(r.key);
      for (const r of await has(
        'private',
        [...a.checkedOut].map((id) => `checkin:${id}`),
      )) {
        const doc: unknown = 'error' in r ? undefined : r.doc;
        if (!t.type({ status: t.literal('CHECKED_OUT') }).is(doc)) lost.push(`${r.key} (its check-out)`);
      }
      return lost;
    };
    const unaudited = Object.values(acks).flatMap((a) =>
      [...a.correlationIds].filter((c) => !audited.has(c)),
    );
    return {
      ballastMb: ballast / 2 ** 20,
      fullMs: options.fullMs,
      episodes: options.episodes,
      full,
      afterwards,
      health,
      died,
      stuck,
      recoveryMs,
      acks,
      lost: {
        before: await missing(acks.before),
        full: await missing(acks.full),
        after: await missing(acks.after),
      },
      unaudited,
      cleanStop,
    };
  } finally {
    await store.close();
  }
};

const summary = (o: Outcome): string =>
  `${o.ballastMb.toFixed(1)} MiB ballast on a ${DISK_MB} MiB tmpfs; ${o.full.total()} requests while full ` +
  `(${o.episodes} × ${(o.fullMs / 1000).toFixed(1)} s): ` +
  `${o.full.total((k) => / 2\d\d$/.test(k))} 2xx, ${o.full.total((k) => / 5\d\d/.test(k))} 5xx, ` +
  `${o.full.total((k) => k.endsWith('no answer'))} unanswered; health ${o.health ?? 'no answer'}; process ` +
  `${o.died === undefined ? 'up' : `DIED (${o.died})`}; ` +
  `${o.stuck === undefined ? '' : `NO RECOVERY (${o.stuck}); `}writes 2xx again ${o.recoveryMs} ms after space ` +
  `returned${o.died === undefined && o.stuck === undefined ? ' (no restart)' : ' (after a restart)'}; acknowledged writes missing after a stop and ` +
  `reopen: before ${o.lost.before.length}/${writes(o.acks.before)}, while full ${o.lost.full.length}/` +
  `${writes(o.acks.full)}, after space returned ${o.lost.after.length}/${writes(o.acks.after)}; ` +
  `${o.unaudited.length} 2xx without their audit entry`;

describe('disk full: the data directory on a small filesystem', function () {
  this.timeout(180_000);
  const cleanup: Array<() => Promise<void>> = [];
  after(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  const setUp = async (label: string) => {
    const fs = await smallFilesystem(DISK_MB);
    cleanup.push(() => fs.dispose());
    const service = await childService({
      label,
      dataDir: fs.dir,
      wrap: fs.wrap,
      env: { AUTH_MODE: 'dev', ...DEV_TOKENS },
    });
    cleanup.push(() => service.dispose());
    return { fs, service };
  };

  it('stays up while full, answers no unstored write 2xx, and serves writes again when space returns', async () => {
    const { fs, service } = await setUp('diskfull-up');
    const o = await scenario(fs, service, {
      registerStudents: true,
      fullMs: FULL_LOAD_MS,
      afterMs: AFTER_LOAD_MS,
      episodes: 1,
    });
    figure('disk full (stays up)', summary(o));
    expect(o.died, 'the process died while the disk was full').to.equal(undefined);
    expect(o.stuck, 'writes refused after space returned, until a restart').to.equal(undefined);
    expect(o.lost.full, 'writes answered 2xx while the disk was full but not stored').to.deep.equal([]);
    expect(
      o.full.total((k) => k.endsWith('no answer')),
      'requests left unanswered while full',
    ).to.equal(0);
    expect(
      o.afterwards.total((k) => !/ 2\d\d$/.test(k)),
      o.afterwards.toString(),
    ).to.equal(0);
    expect(o.cleanStop, 'graceful stop after the episode').to.equal(true);
  });

  it('keeps every write it answered 2xx, before, during and after the full disk', async () => {
    const { fs, service } = await setUp('diskfull-kept');
    const o = await scenario(fs, service, {
      registerStudents: false,
      fullMs: BRIEF_FULL_MS,
      afterMs: 1000,
      episodes: 3,
    });
    figure('disk full (acknowledged writes kept)', summary(o));
    const lost = [...o.lost.before, ...o.lost.full, ...o.lost.after];
    expect(
      lost.length,
      `acknowledged writes missing from the store, e.g. ${lost.slice(0, 4).join(', ')}`,
    ).to.equal(0);
    expect(o.unaudited, '2xx mutations whose audit entry was not stored').to.deep.equal([]);
  });
});
