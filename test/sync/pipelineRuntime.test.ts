import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import { AuditDoc, type NewAuditEntry } from '../../src/domain/audit.js';
import type { NewEvent } from '../../src/domain/event.js';
import { checkinAspect, studentFieldAspect } from '../../src/domain/eventTypes.js';
import { standingOf } from '../../src/rules/projections.js';
import { auditLog } from '../../src/store/auditLog.js';
import { docCache } from '../../src/store/docCache.js';
import { eventStore } from '../../src/store/events.js';
import type { Database } from '../../src/store/pouch.js';
import { type LoadedAspect, projectionStore } from '../../src/store/projections.js';
import { openStore, type Store } from '../../src/store/store.js';
import {
  type EventPipeline,
  type EventPipelineOptions,
  startEventPipeline,
} from '../../src/sync/pipelineRuntime.js';
import type { ProjectedBatch } from '../../src/sync/projector.js';
import { readUntil } from '../support/readUntil.js';
import { snapshot } from '../support/snapshot.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

const STUDENT = randomUUID();
const SESSION = randomUUID();

const fieldEvent = (
  eventId: string,
  role: string,
  at: string,
  base: string | null,
  value: string,
  field = 'allergies',
): NewEvent => ({
  eventId,
  type: 'STUDENT_FIELD_SET',
  subjectType: 'STUDENT',
  subjectId: STUDENT,
  aspect: studentFieldAspect(STUDENT, field),
  baseVersion: base,
  payload: { field, value },
  actor: { userId: `${role.toLowerCase()}-user`, role },
  deviceId: `device-${role}`,
  clientTimestamp: at,
  serverTimestamp: '2026-11-26T12:00:00.000Z',
});

/** A child's check-in at SESSION, the first event of its aspect. */
const checkinEvent = (student: string): NewEvent => ({
  eventId: randomUUID(),
  type: 'CHECK_IN',
  subjectType: 'STUDENT',
  subjectId: student,
  aspect: checkinAspect(SESSION, student),
  baseVersion: null,
  payload: { checkInId: randomUUID(), sessionId: SESSION },
  actor: { userId: 'u', role: 'CHAMADOR' },
  deviceId: null,
  clientTimestamp: '2026-11-26T09:00:00.000Z',
  serverTimestamp: '2026-11-26T09:00:01.000Z',
});

/**
 * The events database seen through a proxy that records its `changes` calls: live feeds, and reads of
 * a page. PouchDB's own calls inside a feed go to the database itself, and are not counted.
 */
const changesCalls = (events: Database) => {
  const live: Array<PouchDB.Core.ChangesOptions | undefined> = [];
  const reads: Array<PouchDB.Core.ChangesOptions | undefined> = [];
  const changes = events.changes.bind(events);
  const counting = (opts?: PouchDB.Core.ChangesOptions) => {
    (opts?.live === true ? live : reads).push(opts);
    return changes(opts);
  };
  const counted = new Proxy(events, {
    get: (target, property) => (property === 'changes' ? counting : Reflect.get(target, property, target)),
  });
  return { counted, live, reads };
};

describe('event pipeline on the store (real PouchDB)', () => {
  let dir: string;
  let store: Store;
  let audit: NewAuditEntry[];
  let pipeline: EventPipeline | undefined;

  // Pages from the feed, as on CouchDB (the embedded store's default reads every page): the tests
  // below run the feed's pages through conflicts, quarantines, restarts and replays.
  const start = async (db = store.db.projections) => {
    pipeline = await startEventPipeline({
      events: store.db.events,
      projections: projectionStore(db),
      audit: async (entries) => {
        audit.push(...entries.map((e) => e.entry));
      },
      pageSize: 7,
      retryDelayMs: 20,
      pagesFromFeed: true,
    });
    return pipeline;
  };

  /** A pipeline whose audit entries go nowhere, on the store's events and projections unless told. */
  const unaudited = (options: Partial<EventPipelineOptions> = {}) =>
    startEventPipeline({
      events: store.db.events,
      projections: projectionStore(store.db.projections),
      audit: async () => undefined,
      ...options,
    });

  /** A pipeline that writes to the audit log as the service does (keyed entries by their keys). */
  const auditedPipeline = (
    log: ReturnType<typeof auditLog>,
    options: Pick<EventPipelineOptions, 'pageSize' | 'retryDelayMs' | 'clock'>,
  ) =>
    startEventPipeline({
      events: store.db.events,
      projections: projectionStore(store.db.projections),
      audit: async (entries) => {
        await Promise.all(
          entries.map(({ entry, key }) =>
            key === undefined ? log.append(entry) : log.appendKeyed(entry, key),
          ),
        );
      },
      ...options,
    });

  beforeEach(async () => {
    dir = await makeTempDir('pipeline');
    store = await openStore({ kind: 'embedded', dataDir: dir, prefix: 't_' });
    audit = [];
  });

  afterEach(async () => {
    await pipeline?.stop();
    pipeline = undefined;
    await store.close();
    await removeDir(dir);
  });

  it('decides an ADMIN-precedence conflict: aspect, conflict record and audit entry', async () => {
    const events = eventStore(store.db.events);
    const admin = randomUUID();
    const caller = randomUUID();
    await events.append(fieldEvent(admin, 'ADMIN', '2026-11-26T10:02:00.000Z', null, 'amendoim'));
    await events.append(fieldEvent(caller, 'CHAMADOR', '2026-11-26T10:05:00.000Z', null, 'nenhuma'));
    const p = await start();
    const aspect = studentFieldAspect(STUDENT, 'allergies');
    const settled = (
      await p.settle([
        { eventId: admin, aspect },
        { eventId: caller, aspect },
      ])
    ).get(aspect);
    expect(settled).not.to.equal(undefined);
    if (settled === undefined) return;
    expect(standingOf(settled, admin)).to.equal('APPLIED');
    expect(standingOf(settled, caller)).to.equal('SUPERSEDED');
    expect(settled.state).to.deep.include({ value: 'amendoim' });
    const conflicts = (await projectionStore(store.db.projections).conflicts({ limit: 10 })).filter(
      (c) => c.policy !== 'ADMISSION_RULE',
    );
    expect(conflicts.map((c) => [c.policy, c.winner.eventId, c.loser.eventId])).to.deep.equal([
      ['ADMIN_PRECEDENCE', admin, caller],
    ]);
    expect(conflicts[0]?.winner).to.deep.include({ role: 'ADMIN', deviceId: 'device-ADMIN' });
    expect(conflicts[0]?.loser.change).to.deep.equal({ type: 'STUDENT_FIELD_SET', field: 'allergies' });
    expect(audit.map((a) => [a.action, a.details.loserEventId])).to.deep.equal([
      ['CONFLICT_RESOLVED', caller],
    ]);
    // An event based on the winner applies: precedence never freezes the field.
    const later = randomUUID();
    await events.append(fieldEvent(later, 'CHAMADOR', '2026-11-26T10:30:00.000Z', admin, 'amendoim e leite'));
    const after = (await p.settle([{ eventId: later, aspect }])).get(aspect);
    expect(after?.version).to.equal(later);
    expect(after?.state).to.deep.include({ value: 'amendoim e leite' });
  });

  for (const [what, later] of [
    ['finds the aspect holding the page', false],
    ['writes the aspect again with an event stored meanwhile', true],
  ] as const)
    it(`a decision committed by a process that died before its audit is audited by the next start, which ${what}`, async () => {
      // The first pipeline commits the conflict, then its audit fails (the process dies there, as far
      // as the store can tell): no checkpoint for that page. The next start replays the page and audits
      // the decision, whether it finds the aspect holding both events or, with an event of the aspect
      // stored since, writes it again (the decision then stands in the copy its commit replaces).
      const events = eventStore(store.db.events);
      const admin = randomUUID();
      const caller = randomUUID();
      await events.append(fieldEvent(admin, 'ADMIN', '2026-11-26T10:02:00.000Z', null, 'amendoim'));
      await events.append(fieldEvent(caller, 'CHAMADOR', '2026-11-26T10:05:00.000Z', null, 'nenhuma'));
      let failed = 0;
      const dying = await startEventPipeline({
        events: store.db.events,
        projections: projectionStore(store.db.projections),
        audit: async (entries) => {
          if (entries.length > 0) throw new Error('the process died here');
        },
        retryDelayMs: 20,
        onError: () => {
          failed += 1;
        },
      });
      for (let i = 0; i < 100 && failed === 0; i += 1) await new Promise((r) => setTimeout(r, 10));
      await dying.stop();
      const aspect = studentFieldAspect(STUDENT, 'allergies');
      const committed = (await projectionStore(store.db.projections).loadAspects([aspect])).get(aspect);
      expect(committed?.events.map((e) => e.eventId).sort(), 'the commit landed').to.deep.equal(
        [admin, caller].sort(),
      );
      expect(audit, 'nothing audited by the process that died').to.deep.equal([]);
      if (later)
        await events.append(
          fieldEvent(randomUUID(), 'ADMIN', '2026-11-26T10:09:00.000Z', admin, 'amendoim e leite'),
        );
      const p = await start();
      await p.catchUp();
      expect(audit.map((a) => [a.action, a.details.loserEventId])).to.deep.equal([
        ['CONFLICT_RESOLVED', caller],
      ]);
    });

  it('answers a settle of events it just stored from its own commit, reading no projection back', async () => {
    const events = eventStore(store.db.events);
    const projections = projectionStore(store.db.projections);
    const reads: string[] = [];
    const counted = {
      ...projections,
      loadAspects: (...args: Parameters<typeof projections.loadAspects>) => {
        reads.push('loadAspects');
        return projections.loadAspects(...args);
      },
      project: (aspects: ReadonlyArray<string>) => {
        reads.push('project');
        return projections.project(aspects);
      },
    };
    pipeline = await unaudited({
      projections: counted,
      retryDelayMs: 20,
    });
    await pipeline.catchUp();
    const aspect = studentFieldAspect(STUDENT, 'allergies');
    const first = randomUUID();
    const rival = randomUUID();
    await events.append(fieldEvent(first, 'CHAMADOR', '2026-11-26T10:05:00.000Z', null, 'nenhuma'));
    await events.append(fieldEvent(rival, 'ADMIN', '2026-11-26T10:02:00.000Z', null, 'amendoim'));
    reads.length = 0;
    const settled = (
      await pipeline.settle([
        { eventId: first, aspect, justStored: true },
        { eventId: rival, aspect, justStored: true },
      ])
    ).get(aspect);
    // The projector reads the aspect to commit it; the settle adds no read of its own.
    expect(reads.filter((r) => r === 'project')).to.deep.equal([]);
    expect(reads.filter((r) => r === 'loadAspects').length).to.be.at.most(2);
    expect(settled && standingOf(settled, first)).to.equal('SUPERSEDED');
    expect(settled && standingOf(settled, rival)).to.equal('APPLIED');
    // Settled again once projected: answered from memory, no read at all.
    reads.length = 0;
    const again = (await pipeline.settle([{ eventId: first, aspect }])).get(aspect);
    expect(reads).to.deep.equal([]);
    expect(again).to.deep.equal(settled);
    expect(again).to.deep.equal((await projections.project([aspect])).get(aspect));
  });

  it('once caught up, takes its pages from the feed that brings the documents, reading no page of the store', async () => {
    const events = store.db.events;
    const { counted, reads } = changesCalls(events);
    const projections = projectionStore(store.db.projections);
    pipeline = await startEventPipeline({
      events: counted,
      projections,
      audit: async () => undefined,
      retryDelayMs: 20,
      pageSize: 7,
      // No look of its own during the test: every page after the catch-up comes from the feed.
      idleLookMs: 60_000,
      pagesFromFeed: true,
    });
    await pipeline.catchUp();
    reads.length = 0;
    const appended = Array.from({ length: 30 }, () => checkinEvent(randomUUID()));
    // Appended in small bursts, so pages of several sizes come from the feed, some full (7).
    for (let i = 0; i < appended.length; i += 10)
      await eventStore(events).appendMany(appended.slice(i, i + 10));
    const settled = await pipeline.settle(
      appended.map((e) => ({ eventId: e.eventId, aspect: e.aspect ?? '', justStored: true })),
      10_000,
    );
    expect(settled.size, 'every event projected').to.equal(appended.length);
    expect(reads, 'pages read from the store after the catch-up').to.deep.equal([]);
    const stored = await projections.project(appended.map((e) => e.aspect ?? ''));
    expect([...stored.values()].map((a) => a.version).sort()).to.deep.equal(
      appended.map((e) => e.eventId).sort(),
    );
    // A catch-up still reads the store: it must see everything stored before it, told or not.
    await pipeline.catchUp();
    expect(reads.length, 'the catch-up read').to.be.at.least(1);
  });

  it('on the embedded store, reads its pages by default and is woken by a feed of the changes alone', async () => {
    const events = store.db.events;
    const { counted, live } = changesCalls(events);
    pipeline = await unaudited({
      events: counted,
      idleLookMs: 60_000,
    });
    await pipeline.catchUp();
    const event = checkinEvent(randomUUID());
    await eventStore(events).append(event);
    // No settle and no look: only the feed can wake it.
    const aspect = event.aspect ?? '';
    const projected = await readUntil(
      async () => (await projectionStore(store.db.projections).project([aspect])).get(aspect),
      (a) => a !== undefined,
      5_000,
    );
    expect(projected?.version).to.equal(event.eventId);
    expect(live.map((o) => [o?.since, o?.include_docs === true])).to.deep.equal([['now', false]]);
  });

  it('settles events of one aspect of which some were projected already and the rest not yet, without waiting', async () => {
    const events = eventStore(store.db.events);
    const p = await start();
    const aspect = studentFieldAspect(STUDENT, 'allergies');
    const first = randomUUID();
    await events.append(fieldEvent(first, 'CHAMADOR', '2026-11-26T10:05:00.000Z', null, 'nenhuma'));
    // The first of a batch written twice (a raced write in /sync/events) is projected meanwhile.
    await p.catchUp();
    const second = randomUUID();
    await events.append(fieldEvent(second, 'CHAMADOR', '2026-11-26T10:06:00.000Z', first, 'leite'));
    const began = Date.now();
    const settled = (
      await p.settle(
        [
          { eventId: first, aspect, justStored: true },
          { eventId: second, aspect, justStored: true },
        ],
        60_000,
      )
    ).get(aspect);
    expect(settled?.version).to.equal(second);
    expect(Date.now() - began, 'answered once the second was projected, not after the wait').to.be.below(
      30_000,
    );
  });

  it('settles an event projected before it started (a resend) from the store, without waiting', async () => {
    const events = eventStore(store.db.events);
    const aspect = studentFieldAspect(STUDENT, 'allergies');
    const old = randomUUID();
    await events.append(fieldEvent(old, 'CHAMADOR', '2026-11-26T10:05:00.000Z', null, 'nenhuma'));
    const first = await start();
    await first.catchUp();
    await first.stop();
    const second = await start();
    const began = Date.now();
    const settled = (await second.settle([{ eventId: old, aspect }], 60_000)).get(aspect);
    expect(settled?.version).to.equal(old);
    expect(Date.now() - began, 'answered from the store, not after the wait').to.be.below(30_000);
  });

  it('on a cluster, a page whose leaves the cluster could not read is read again, never skipped or quarantined', async () => {
    // The events database as a cluster of three shows it (decision 0023), whose `_bulk_get` answers
    // internal_fabric_error for every document of its first reads, as while a node dies.
    const events = store.db.events;
    const info = events.info.bind(events);
    const bulkGet = events.bulkGet.bind(events);
    let failing = 3;
    Object.assign(events, {
      info: async () => ({ ...(await info()), cluster: { q: 2, n: 3, w: 2, r: 2 } }),
      bulkGet: async (options: PouchDB.Core.BulkGetOptions) => {
        if (failing <= 0) return bulkGet(options);
        failing -= 1;
        return {
          results: options.docs.map((d) => ({
            id: d.id,
            docs: [{ error: Object.assign(new Error('timeout'), { error: 'internal_fabric_error' }) }],
          })),
        };
      },
    });
    const ids = Array.from({ length: 20 }, () => randomUUID());
    for (const [i, id] of ids.entries())
      await eventStore(events).append(
        fieldEvent(
          id,
          'CHAMADOR',
          `2026-11-26T10:00:${String(i).padStart(2, '0')}.000Z`,
          null,
          `v${i}`,
          `f${i}`,
        ),
      );
    const p = await start();
    await p.catchUp();
    expect(failing, 'reads left to fail').to.be.below(3);
    const projections = projectionStore(store.db.projections);
    const aspects = ids.map((_, i) => studentFieldAspect(STUDENT, `f${i}`));
    const loaded = await projections.loadAspects(aspects);
    expect(aspects.map((a) => loaded.get(a)?.events.map((e) => e.eventId))).to.deep.equal(
      ids.map((id) => [id]),
    );
    expect(await projections.quarantined()).to.deep.equal([]);
  });

  it('on a cluster, tells how long it has been held before a document it cannot read, and stops telling once past it', async () => {
    const events = store.db.events;
    const info = events.info.bind(events);
    const bulkGet = events.bulkGet.bind(events);
    let unreadableUntil = Date.now() + 400;
    Object.assign(events, {
      info: async () => ({ ...(await info()), cluster: { q: 2, n: 3, w: 2, r: 2 } }),
      bulkGet: async (options: PouchDB.Core.BulkGetOptions) =>
        Date.now() >= unreadableUntil
          ? bulkGet(options)
          : {
              results: options.docs.map((d) => ({
                id: d.id,
                docs: [{ error: Object.assign(new Error('timeout'), { error: 'internal_fabric_error' }) }],
              })),
            },
    });
    const id = randomUUID();
    await eventStore(events).append(fieldEvent(id, 'CHAMADOR', '2026-11-26T10:00:00.000Z', null, 'v'));
    const held: Array<{ id: string; unreadable: boolean; heldMs: number }> = [];
    pipeline = await startEventPipeline({
      events,
      projections: projectionStore(store.db.projections),
      audit: async () => undefined,
      retryDelayMs: 20,
      heldReportMs: 100,
      onHeld: (h) => held.push(h),
    });
    await pipeline.catchUp();
    expect(held.length, 'told while held').to.be.greaterThan(0);
    expect(new Set(held.map((h) => h.id))).to.deep.equal(new Set([`event:${id}`]));
    expect(held.every((h) => h.unreadable)).to.equal(true);
    const told = held.map((h) => h.heldMs);
    expect(told, 'the time held grows').to.deep.equal([...told].sort((a, b) => a - b));
    expect(told.at(-1) ?? 0).to.be.at.least(100);
    // Past it, nothing more is told, however long the pipeline runs.
    const after = held.length;
    unreadableUntil = 0;
    await events.put({ _id: `other:${randomUUID()}`, docType: 'other' }).catch(() => undefined);
    await pipeline.catchUp();
    await new Promise((r) => setTimeout(r, 300));
    expect(held.length).to.equal(after);
  });

  it('on a cluster, withdraws the copies a stopped writer left past the grace, says which, and projects the winner once', async () => {
    const events = store.db.events;
    const info = events.info.bind(events);
    const get = events.get.bind(events);
    Object.assign(events, {
      info: async () => ({ ...(await info()), cluster: { q: 2, n: 3, w: 2, r: 2 } }),
      // A cluster's `_bulk_get` without revisions answers every leaf; PouchDB's answers the winner.
      bulkGet: async (options: PouchDB.Core.BulkGetOptions) => ({
        results: await Promise.all(
          options.docs.map(async (d) => ({
            id: d.id,
            docs: await get(d.id, { open_revs: 'all' }),
          })),
        ),
      }),
    });
    // One event stored by two instances at once, neither copy withdrawn: two live leaves, as a cluster
    // leaves them when both writers stop between their write and their withdrawal.
    const id = randomUUID();
    const copy = (serverTimestamp: string, rev: string) => ({
      _id: `event:${id}`,
      _rev: rev,
      docType: 'event',
      ...fieldEvent(id, 'CHAMADOR', '2026-11-26T10:00:00.000Z', null, 'v'),
      serverTimestamp,
    });
    await events.bulkDocs(
      [copy('2026-11-26T12:00:00.100Z', '1-aaaa'), copy('2026-11-26T12:00:00.200Z', '1-bbbb')],
      { new_edits: false },
    );
    const withdrawn: Array<{ id: string; rev: string }> = [];
    pipeline = await startEventPipeline({
      events,
      projections: projectionStore(store.db.projections),
      audit: async () => undefined,
      retryDelayMs: 20,
      unsettledGraceMs: 200,
      onWithdrawn: (copies) => withdrawn.push(...copies),
    });
    await pipeline.catchUp();
    // CouchDB's winner among equal generations is the higher revision: 1-bbbb stays.
    expect(withdrawn).to.deep.equal([{ id: `event:${id}`, rev: '1-aaaa' }]);
    const aspect = studentFieldAspect(STUDENT, 'allergies');
    const loaded = (await projectionStore(store.db.projections).loadAspects([aspect])).get(aspect);
    expect(loaded?.events.map((e) => [e.eventId, e.serverTimestamp])).to.deep.equal([
      [id, '2026-11-26T12:00:00.200Z'],
    ]);
  });

  it('projects stored events its change feed never tells it of, by looking now and then', async () => {
    // The live feed of an empty database: open, and silent for ever, as a CouchDB feed went after a
    // node was thawed (seemingly: the pipeline idle, nothing logged). Reads go to the real database.
    const silent = store.db.private;
    const events = store.db.events;
    const changes = events.changes.bind(events);
    Object.assign(events, {
      changes: (opts?: PouchDB.Core.ChangesOptions) =>
        // From its end: nothing of the private database is told as an event.
        opts?.live === true ? silent.changes({ ...opts, since: 'now' }) : changes(opts),
    });
    const projected = async (field: string) => {
      const aspect = studentFieldAspect(STUDENT, field);
      return (await projectionStore(store.db.projections).project([aspect])).get(aspect);
    };
    const run = async (idleLookMs: number) => {
      pipeline = await startEventPipeline({
        events,
        projections: projectionStore(store.db.projections),
        audit: async () => undefined,
        idleLookMs,
      });
      await pipeline.catchUp();
      const id = randomUUID();
      // A field of its own each time: the event is the aspect's only one, and its version.
      await eventStore(events).append(fieldEvent(id, 'ADMIN', '2026-11-26T10:02:00.000Z', null, id, id));
      await new Promise((r) => setTimeout(r, 1000));
      const seen = (await projected(id))?.version === id;
      await pipeline.stop();
      pipeline = undefined;
      return seen;
    };
    expect(await run(60_000), 'projected with the feed silent and no look: the test proves nothing').to.equal(
      false,
    );
    expect(await run(100), 'not projected within a second, looking every 100 ms').to.equal(true);
  });

  it('quarantines a poisoned document and keeps projecting the events after it', async () => {
    await store.db.events.put({ _id: 'event:poison', docType: 'event', eventId: 42 });
    const good = randomUUID();
    await eventStore(store.db.events).append(
      fieldEvent(good, 'ADMIN', '2026-11-26T10:00:00.000Z', null, 'x'),
    );
    const p = await start();
    await p.catchUp();
    const projections = projectionStore(store.db.projections);
    expect((await projections.quarantined()).map((q) => [q.docId, q.reason])).to.deep.equal([
      ['event:poison', 'UNDECODABLE_EVENT'],
    ]);
    const aspect = studentFieldAspect(STUDENT, 'allergies');
    expect((await projections.loadAspects([aspect])).get(aspect)?.events.map((e) => e.eventId)).to.deep.equal(
      [good],
    );
    expect(audit.map((a) => a.action)).to.deep.equal(['QUARANTINE']);
  });

  it('audits a quarantine once: a replay and a second pipeline find the stored record and its key', async () => {
    const trail = auditLog(store.db.audit, { clock: () => new Date() });
    const startKeyed = async (now: string) => {
      pipeline = await auditedPipeline(trail, { retryDelayMs: 20, clock: () => new Date(now) });
      await pipeline.catchUp();
      await pipeline.stop();
      pipeline = undefined;
    };
    await store.db.events.put({ _id: 'event:poison', docType: 'event', eventId: 42 });
    // Quarantined by a version that kept no detection time: audited then, not again.
    await store.db.events.put({ _id: 'event:old', docType: 'event', eventId: 43 });
    await store.db.projections.put({
      _id: 'quarantine:event:old',
      docType: 'quarantine',
      docId: 'event:old',
      reason: 'UNDECODABLE_EVENT',
    });
    await startKeyed('2026-11-26T09:00:00.000Z');
    // A replay from the start (a crash before the checkpoint, or a rebuild's first pages), later.
    await projectionStore(store.db.projections).saveCheckpoint(0);
    await startKeyed('2026-11-26T10:00:00.000Z');
    await trail.flush();
    const page = await trail.query({ limit: 100 });
    if (page._tag === 'Left') throw new Error('unexpected cursor error');
    const quarantines = page.right.items.filter((e) => e.action === 'QUARANTINE');
    expect(quarantines.map((e) => e.details)).to.deep.equal([
      { code: 'QUARANTINED', reason: 'UNDECODABLE_EVENT', docId: 'event:poison' },
    ]);
    expect(quarantines[0]?.created_at).to.equal('2026-11-26T09:00:00.000Z');
    const stored = await projectionStore(store.db.projections).quarantined();
    expect(stored.map((q) => [q.docId, q.detectedAt]).sort()).to.deep.equal([
      ['event:old', undefined],
      ['event:poison', '2026-11-26T09:00:00.000Z'],
    ]);
  });

  it('reports each decision once: a replay from an earlier checkpoint reports no conflict or quarantine', async () => {
    const reported: ProjectedBatch[] = [];
    const startReporting = async () => {
      pipeline = await unaudited({
        onProjected: (batch) => reported.push(batch),
      });
      await pipeline.catchUp();
      await pipeline.stop();
      pipeline = undefined;
    };
    const events = eventStore(store.db.events);
    await events.append(fieldEvent(randomUUID(), 'ADMIN', '2026-11-26T10:02:00.000Z', null, 'amendoim'));
    await events.append(fieldEvent(randomUUID(), 'CHAMADOR', '2026-11-26T10:05:00.000Z', null, 'nenhuma'));
    await store.db.events.put({ _id: 'event:poison', docType: 'event', eventId: 42 });
    await startReporting();
    expect(reported.flatMap((b) => b.conflictsChanged.map((c) => c.policy))).to.deep.equal([
      'ADMIN_PRECEDENCE',
    ]);
    expect(reported.flatMap((b) => b.quarantinesRecorded)).to.deep.equal([
      { docId: 'event:poison', reason: 'UNDECODABLE_EVENT' },
    ]);
    reported.length = 0;
    // As after a crash between the projection writes and the checkpoint.
    await projectionStore(store.db.projections).saveCheckpoint(0);
    await startReporting();
    expect(reported).to.have.length.greaterThan(0);
    expect(reported.flatMap((b) => [...b.conflictsChanged, ...b.quarantinesRecorded])).to.deep.equal([]);
  });

  it('measures its backlog: the changes after the last projected page and when the oldest was stored', async () => {
    const p = await start();
    await p.catchUp();
    expect(await p.backlog()).to.deep.equal({ pending: 0, oldestStoredAt: undefined });
    await p.stop();
    const events = eventStore(store.db.events);
    const first = fieldEvent(randomUUID(), 'ADMIN', '2026-11-26T10:02:00.000Z', null, 'amendoim');
    await events.append({ ...first, serverTimestamp: '2026-11-26T11:00:00.000Z' });
    await events.append(fieldEvent(randomUUID(), 'CHAMADOR', '2026-11-26T10:05:00.000Z', null, 'nenhuma'));
    expect(await p.backlog()).to.deep.equal({ pending: 2, oldestStoredAt: '2026-11-26T11:00:00.000Z' });
  });

  it('resumes from its checkpoint after a restart: nothing missed, nothing applied twice', async () => {
    const events = eventStore(store.db.events);
    const ids = Array.from({ length: 20 }, () => randomUUID());
    // A chain of check-in events for 10 children, appended in two halves around a restart.
    const append = async (i: number) => {
      const student = ids[i] ?? '';
      await events.append(checkinEvent(student));
    };
    for (let i = 0; i < 10; i += 1) await append(i);
    const first = await start();
    await first.catchUp();
    await first.stop();
    const checkpoint = await projectionStore(store.db.projections).checkpoint();
    for (let i = 10; i < 20; i += 1) await append(i);
    const outcomes: string[] = [];
    const second = await start();
    second.outcomes$.subscribe((o) => outcomes.push(...o.events.map((e) => e.eventId)));
    await second.catchUp();
    // The restarted pipeline read only what came after its checkpoint.
    expect(outcomes).to.have.length(10);
    expect(Number(await projectionStore(store.db.projections).checkpoint())).to.be.greaterThan(
      Number(checkpoint),
    );
    const loaded = await projectionStore(store.db.projections).loadAspects(
      ids.map((s) => checkinAspect(SESSION, s)),
    );
    expect([...loaded.values()].map((a) => a.events.length)).to.deep.equal(Array(20).fill(1));
  });

  it('writes its checkpoint at most once a second under a run of batches, and the latest one at a stop', async () => {
    const events = eventStore(store.db.events);
    const projections = projectionStore(store.db.projections);
    const saved: Array<string | number> = [];
    const counted = {
      ...projections,
      saveCheckpoint: async (seq: string | number) => {
        saved.push(seq);
        await projections.saveCheckpoint(seq);
      },
    };
    pipeline = await unaudited({
      projections: counted,
      pageSize: 2,
      retryDelayMs: 20,
      checkpointEveryMs: 60_000,
    });
    const batches: Array<string | number> = [];
    pipeline.outcomes$.subscribe((o) => batches.push(o.lastSeq));
    for (let i = 0; i < 12; i += 1) {
      const student = randomUUID();
      await events.append(checkinEvent(student));
    }
    await pipeline.catchUp();
    expect(batches.length, 'pages of two').to.be.greaterThan(3);
    expect(saved, 'one write in the interval').to.have.length(1);
    const last = batches.at(-1);
    await pipeline.stop();
    pipeline = undefined;
    expect(saved).to.have.length(2);
    expect(await projections.checkpoint()).to.equal(last);
  });

  it('catchUp resolves on a stopped pipeline instead of waiting for ever', async () => {
    const p = await start();
    const waiting = p.catchUp();
    await p.stop();
    await waiting;
    await p.catchUp();
    pipeline = undefined;
  });

  it('a rebuild from scratch writes the same projections', async () => {
    const events = eventStore(store.db.events);
    let base: string | null = null;
    for (let i = 0; i < 15; i += 1) {
      const id = randomUUID();
      const role = i % 4 === 0 ? 'ADMIN' : 'CHAMADOR';
      await events.append(
        fieldEvent(id, role, `2026-11-26T10:${String(i).padStart(2, '0')}:00.000Z`, base, `v${i}`),
      );
      // Every third event forks from the same base as the one before it: a conflict.
      if (i % 3 !== 1) base = id;
    }
    const p = await start();
    await p.catchUp();
    const before = await snapshot(store.db.projections);
    expect(before.length).to.be.greaterThan(2);
    await p.stop();
    await projectionStore(store.db.projections).reset();
    expect(await snapshot(store.db.projections)).to.deep.equal([]);
    const again = await start();
    await again.catchUp();
    expect(await snapshot(store.db.projections)).to.deep.equal(before);
  });

  it('one audit entry per conflict decision, across concurrent pipelines and a rebuild', async () => {
    const events = eventStore(store.db.events);
    const students = Array.from({ length: 6 }, () => randomUUID());
    for (const [i, student] of students.entries()) {
      // Per child: an ADMIN and a CHAMADOR edit from the same base, then a third edit forks again.
      const admin = randomUUID();
      for (const [eventId, role, minute, value] of [
        [admin, 'ADMIN', 1, 'a'],
        [randomUUID(), 'CHAMADOR', 2, 'b'],
        [randomUUID(), 'CHAMADOR', 3, 'c'],
      ] as const) {
        await events.append({
          ...fieldEvent(eventId, role, `2026-11-26T10:0${minute}:00.000Z`, null, `${value}${i}`),
          subjectId: student,
          aspect: studentFieldAspect(student, 'allergies'),
          serverTimestamp: `2026-11-26T12:00:0${minute}.000Z`,
        });
      }
    }
    const log = auditLog(store.db.audit, { clock: () => new Date() });
    const pipelineOn = () => auditedPipeline(log, { pageSize: 4, retryDelayMs: 5 });
    const entries = async () =>
      (await store.db.audit.allDocs({ startkey: 'audit:', endkey: 'audit;', include_docs: true })).rows;
    // Two pipelines from the first event at once, as two instances on one CouchDB.
    const [a, b] = await Promise.all([pipelineOn(), pipelineOn()]);
    await Promise.all([a.catchUp(), b.catchUp()]);
    await Promise.all([a.stop(), b.stop()]);
    await log.flush();
    const conflicts = await projectionStore(store.db.projections).conflicts({ limit: 100 });
    expect(conflicts).to.have.length(students.length * 2);
    const first = await entries();
    expect(first.map((r) => r.id)).to.have.length(conflicts.length);
    // A rebuild decides everything again and finds every entry written.
    await projectionStore(store.db.projections).reset();
    const rebuilt = await pipelineOn();
    await rebuilt.catchUp();
    await rebuilt.stop();
    await log.close();
    expect((await entries()).map((r) => r.id)).to.deep.equal(first.map((r) => r.id));
    // Each entry carries the time the server learnt of its conflict.
    const detected = new Set(conflicts.map((c) => `${c.detectedAt}|${'loser' in c ? c.loser.eventId : ''}`));
    for (const row of first) {
      const doc = AuditDoc.decode(row.doc);
      if (doc._tag === 'Left') expect.fail(`undecodable audit entry ${row.id}`);
      else expect(detected.has(`${doc.right.created_at}|${doc.right.correlation_id}`)).to.equal(true);
    }
  });

  it('with the aspect cache, aspects read as the store holds them', async () => {
    const cache = docCache<LoadedAspect>();
    const events = eventStore(store.db.events);
    const fields = ['allergies', 'specialNeeds', 'guardianName'];
    let base: Record<string, string | null> = Object.fromEntries(fields.map((f) => [f, null]));
    pipeline = await unaudited({
      projections: projectionStore(store.db.projections, cache),
      pageSize: 7,
      retryDelayMs: 20,
    });
    for (let i = 0; i < 30; i += 1) {
      const field = fields[i % fields.length] ?? 'allergies';
      const id = randomUUID();
      // Every fourth event is concurrent with its predecessor (an old base), so conflicts arise.
      const role = i % 2 === 0 ? 'ADMIN' : 'CHAMADOR';
      await events.append(
        fieldEvent(
          id,
          role,
          `2026-11-26T10:${String(i).padStart(2, '0')}:00.000Z`,
          i % 4 === 3 ? null : (base[field] ?? null),
          `v${i}`,
          field,
        ),
      );
      base = { ...base, [field]: id };
      if (i % 5 === 0) await pipeline.catchUp();
    }
    await pipeline.catchUp();
    const aspects = fields.map((f) => studentFieldAspect(STUDENT, f));
    const cached = await projectionStore(store.db.projections, cache).loadAspects(aspects);
    const fresh = await projectionStore(store.db.projections).loadAspects(aspects);
    expect(cache.size()).to.equal(3);
    expect([...cached.entries()]).to.deep.equal([...fresh.entries()]);
  });

  it('after a failed try, writes the records of the page again though the store holds its aspects', async () => {
    // The commit lands but its answer is lost (a timeout after the write): the pipeline tries the
    // page again, finds every aspect holding its events, and still writes their records again, since
    // the failed try may have written them from a copy another writer had moved past.
    const events = eventStore(store.db.events);
    await events.append(fieldEvent(randomUUID(), 'ADMIN', '2026-11-26T10:00:00.000Z', null, 'amendoim'));
    const real = projectionStore(store.db.projections);
    let lost = 1;
    const writtenThrough: string[] = [];
    const errors: unknown[] = [];
    pipeline = await startEventPipeline({
      events: store.db.events,
      projections: {
        ...real,
        commit: async (write) => {
          const answer = await real.commit(write);
          if (lost > 0) {
            lost -= 1;
            throw new Error('the answer was lost');
          }
          return answer;
        },
      },
      audit: async () => undefined,
      writeThrough: async (p) => {
        writtenThrough.push(p.aspect);
      },
      retryDelayMs: 20,
      onError: (e) => errors.push(e),
    });
    await pipeline.catchUp();
    const aspect = studentFieldAspect(STUDENT, 'allergies');
    expect(errors, 'the lost answer reported').to.have.length(1);
    expect(writtenThrough, 'written by the failed try, then again by the next').to.deep.equal([
      aspect,
      aspect,
    ]);
  });

  it('a commit that meets a conflict leaves no stale aspect in the cache', async () => {
    const events = eventStore(store.db.events);
    await events.append(fieldEvent(randomUUID(), 'ADMIN', '2026-11-26T10:00:00.000Z', null, 'amendoim'));
    const p = await start();
    await p.catchUp();
    await p.stop();
    pipeline = undefined;
    const aspect = studentFieldAspect(STUDENT, 'allergies');
    const cached = projectionStore(store.db.projections, docCache<LoadedAspect>());
    const other = projectionStore(store.db.projections);
    const before = (await cached.loadAspects([aspect])).get(aspect);
    const projection = (await cached.project([aspect])).get(aspect);
    if (before === undefined || projection === undefined) throw new Error('expected the aspect');
    const write = (rev: string) => ({
      aspects: [{ projection, rev }],
      conflicts: [],
      noConflict: [],
    });
    expect(await other.commit(write(before.rev))).to.equal('OK');
    expect(await cached.commit(write(before.rev))).to.equal('CONFLICT');
    const after = (await cached.loadAspects([aspect])).get(aspect);
    const stored = (await other.loadAspects([aspect])).get(aspect);
    expect(after?.rev).to.equal(stored?.rev);
    expect(after?.rev).not.to.equal(before.rev);
  });

  it('property: any arrival order and batching of the same events gives identical projections', async function () {
    this.timeout(120_000);
    const roles = fc.constantFrom('ADMIN', 'CHAMADOR', 'CADASTRO');
    const eventArb = fc.array(
      fc.record({
        role: roles,
        minute: fc.integer({ min: 0, max: 59 }),
        field: fc.constantFrom('allergies', 'specialNeeds'),
        baseIndex: fc.integer({ min: -1, max: 12 }),
      }),
      { minLength: 1, maxLength: 12 },
    );
    let run = 0;
    await fc.assert(
      fc.asyncProperty(eventArb, fc.integer({ min: 1, max: 2 ** 30 }), async (specs, seed) => {
        run += 1;
        // Ids fixed per generated event, bases pointing at earlier events of the same field (or null).
        const made = specs.map((s, i) => ({
          ...s,
          id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        }));
        const all = made.map((s, i) => {
          const target = s.baseIndex >= 0 && s.baseIndex < i ? made[s.baseIndex] : undefined;
          const base = target !== undefined && target.field === s.field ? target.id : null;
          return fieldEvent(
            s.id,
            s.role,
            `2026-11-26T10:${String(s.minute).padStart(2, '0')}:00.000Z`,
            base,
            `v${i}`,
            s.field,
          );
        });
        const shuffled = [...all].sort((a, b) => hash(a.eventId, seed) - hash(b.eventId, seed));
        const results: unknown[][] = [];
        for (const [order, pageSize] of [
          [all, 50],
          [shuffled, 1 + (seed % 4)],
        ] as const) {
          const runDir = await makeTempDir('converge');
          const s = await openStore({ kind: 'embedded', dataDir: runDir, prefix: `c${run}_` });
          try {
            const p = await unaudited({
              events: s.db.events,
              projections: projectionStore(s.db.projections),
              pageSize,
              retryDelayMs: 20,
            });
            const ev = eventStore(s.db.events);
            for (const e of order) await ev.append(e);
            await p.catchUp();
            await p.stop();
            results.push(await snapshot(s.db.projections));
          } finally {
            await s.close();
            await removeDir(runDir);
          }
        }
        // Checkpoints are local documents (not in allDocs); everything else must match.
        expect(results[1]).to.deep.equal(results[0]);
      }),
      { numRuns: 12 },
    );
  });
});

const hash = (s: string, seed: number): number => {
  let h = seed | 0;
  for (let i = 0; i < s.length; i += 1) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h;
};
