import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import MemoryAdapter from 'pouchdb-adapter-memory';
import { v5 as uuidV5 } from 'uuid';
import {
  type AuditEntry,
  type AuditFilter,
  type AuditPage,
  auditDocId,
  type NewAuditEntry,
} from '../../src/domain/audit.js';
import { isUuidV4 } from '../../src/domain/codec.js';
import { WriterClosed } from '../../src/lib/batchWriter.js';
import {
  AuditEntryNotStored,
  type AuditLog,
  type AuditLogOptions,
  auditLog,
  encodeAuditCursor,
  InvalidAuditEntry,
} from '../../src/store/auditLog.js';
import { type Database, PouchDB } from '../../src/store/pouch.js';
import { openStore, type Store, type StoreLocation } from '../../src/store/store.js';
import { QuorumNotMetError } from '../../src/store/storeErrors.js';
import {
  type CouchServer,
  couchServerLabel,
  realCouchNodes,
  startCouchServer,
} from '../support/couchServer.js';
import { anAuditEntry } from '../support/fixtures.js';
import { readUntil } from '../support/readUntil.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

PouchDB.plugin(MemoryAdapter);

const BASE = Date.parse('2026-03-01T12:00:00.000Z');
const SECOND = 1000;

const entry = anAuditEntry;

/** One store host per backend for the whole suite; each test gets databases of its own by prefix. */
interface Host {
  location(prefix: string): StoreLocation;
  readonly server?: CouchServer;
  dispose(): Promise<void>;
}

const backends: ReadonlyArray<[string, () => Promise<Host>, number]> = [
  [
    'embedded leveldb',
    async () => {
      const dir = await makeTempDir('audit');
      return {
        location: (prefix) => ({ kind: 'embedded', dataDir: dir, prefix }),
        dispose: () => removeDir(dir),
      };
    },
    40,
  ],
  [
    couchServerLabel(),
    async () => {
      const server = await startCouchServer();
      return {
        location: (prefix) => ({ kind: 'couchdb', url: server.url, prefix }),
        server,
        dispose: () => server.dispose(),
      };
    },
    20,
  ],
];

const pageOnce = async (log: AuditLog, filter: AuditFilter): Promise<AuditPage> => {
  const r = await log.query(filter);
  if (E.isLeft(r)) throw new Error('unexpected invalid cursor');
  return r.right;
};

// On a CouchDB cluster a range read asks one copy of each shard, which may lag an acknowledged write
// by a moment (decision 0023): a page is read again until two reads 150 ms apart agree.
const onCluster = realCouchNodes() > 1;
const pageOf = async (log: AuditLog, filter: AuditFilter): Promise<AuditPage> => {
  let page = await pageOnce(log, filter);
  if (!onCluster) return page;
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 150));
    const again = await pageOnce(log, filter);
    if (JSON.stringify(again) === JSON.stringify(page)) return page;
    page = again;
  }
  return page;
};

/** Every page of a query, following `nextCursor` to the end. */
const allPages = async (log: AuditLog, filter: AuditFilter): Promise<AuditPage[]> => {
  const pages: AuditPage[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await pageOf(log, { ...filter, ...(cursor === undefined ? {} : { cursor }) });
    pages.push(page);
    if (page.nextCursor === null) return pages;
    cursor = page.nextCursor;
  }
};

const idOf = (e: AuditEntry): string => auditDocId(e.created_at, e.audit_id);

/** An append tried again while refused, a few times, as the pipeline tries its step again. */
const persisted = async (append: () => Promise<void>): Promise<void> => {
  for (let attempt = 1; ; attempt += 1)
    try {
      return await append();
    } catch (err) {
      if (!(err instanceof AuditEntryNotStored) || attempt >= 5) throw err;
    }
};

/** `db` with its bulk writes answered by `bulkDocs`: a cluster's copies shaped by hand. */
const withBulkDocs = (db: Database, bulkDocs: unknown): Database =>
  new Proxy(db, {
    get: (target, key) => {
      if (key === 'bulkDocs') return bulkDocs;
      const v: unknown = Reflect.get(target, key, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });

/** A first revision above any other: CouchDB makes the winner of two first revisions the higher hash. */
const ABOVE = `1-${'f'.repeat(32)}`;

/**
 * Claims where a create of an id that stands is refused (409) by two copies of three and taken by
 * the third: the refused claim is planted beside the one that stood as a conflicting first
 * revision whose hash sorts above it, so that once the copies sync it is the winner a plain read
 * answers. Everything else (a first claim, a withdrawal) is written as it comes.
 */
const refusedButTaken = (db: Database, rev = ABOVE): Database => {
  const bulkDocs = async (docs: Array<PouchDB.Core.PutDocument<object>>) => {
    const out: Array<PouchDB.Core.Response | PouchDB.Core.Error> = [];
    for (const doc of docs) {
      const id = doc._id ?? '';
      const stands = await db.get(id).catch(() => undefined);
      if (stands === undefined || '_rev' in doc) {
        const [r] = await db.bulkDocs([doc]);
        if (r !== undefined) out.push(r);
        continue;
      }
      await db.bulkDocs([{ ...doc, _id: id, _rev: rev }], { new_edits: false });
      out.push({
        id,
        error: 'conflict',
        status: 409,
        name: 'conflict',
        reason: 'Document update conflict.',
      });
    }
    return out;
  };
  return withBulkDocs(db, bulkDocs);
};

for (const [name, setUp, propertyRuns] of backends) {
  describe(`audit log on ${name}`, function () {
    this.timeout(120_000);
    let host: Host;
    let store: Store;
    let tests = 0;
    let now: number;
    const logs: AuditLog[] = [];
    const open = (options: Partial<AuditLogOptions> = {}): AuditLog => {
      const log = auditLog(store.db.audit, { clock: () => new Date(now), ...options });
      logs.push(log);
      return log;
    };
    /** Appends one entry per time offset, one after the other. */
    const appendAt = async (
      log: AuditLog,
      offsets: ReadonlyArray<number>,
      e: Partial<NewAuditEntry> = {},
    ) => {
      for (const offset of offsets) {
        now = BASE + offset;
        await log.append(entry(e));
      }
    };

    before(async () => {
      host = await setUp();
    });
    after(async () => {
      await host.dispose();
    });
    beforeEach(async () => {
      now = BASE;
      tests += 1;
      store = await openStore(host.location(`chamada_t${tests}_`));
    });
    afterEach(async () => {
      await Promise.all(logs.splice(0).map((l) => l.close()));
      await store.close();
    });

    it('stores an appended entry with every field, under an id that sorts by time', async () => {
      const log = open();
      const e = entry({ details: { status: 201, nested: { ids: ['a', 'b'] }, ok: true, none: null } });
      await log.append(e);
      const page = await pageOf(log, { limit: 10 });
      expect(page.nextCursor).to.equal(null);
      expect(page.items).to.have.length(1);
      const [stored] = page.items;
      if (stored === undefined) throw new Error('no entry');
      expect(isUuidV4(stored.audit_id)).to.equal(true);
      expect(stored).to.deep.equal({
        ...e,
        audit_id: stored.audit_id,
        created_at: '2026-03-01T12:00:00.000Z',
      });
      const raw = await store.db.audit.get(`audit:2026-03-01T12:00:00.000Z:${stored.audit_id}`);
      expect(raw).to.deep.include({ docType: 'audit', subject_id: 'student-1', action: 'MUTATION' });
    });

    it('has no way to change or remove an entry', () => {
      expect(Object.keys(open()).sort()).to.deep.equal(['append', 'appendKeyed', 'close', 'flush', 'query']);
    });

    it('stores a keyed entry once however often and by whichever writer it is appended', async () => {
      const [a, b] = [open(), open()];
      const e = entry({ action: 'CONFLICT_RESOLVED', endpoint: 'PIPELINE /events/_changes' });
      const key = { at: '2026-03-01T11:59:00.123456Z', auditId: uuidV5('decision-1', uuidV5.URL) };
      // Concurrent writers (two instances), in one batch and in separate ones (a replay).
      await Promise.all([a.appendKeyed(e, key), b.appendKeyed(e, key), a.appendKeyed(e, key)]);
      await b.appendKeyed(e, key);
      const other = { at: key.at, auditId: uuidV5('decision-2', uuidV5.URL) };
      await a.appendKeyed(e, other);
      const page = await pageOf(a, { limit: 10 });
      expect(page.items.map((i) => [i.created_at, i.audit_id])).to.have.deep.members([
        ['2026-03-01T11:59:00.123Z', key.auditId],
        ['2026-03-01T11:59:00.123Z', other.auditId],
      ]);
      expect(page.items).to.have.length(2);
    });

    it('with claims (instances sharing the log), one decision keyed at two times is stored once, at the time claimed first', async () => {
      const [a, b] = [open({ claims: store.db.requests }), open({ claims: store.db.requests })];
      const e = entry({ action: 'CONFLICT_RESOLVED', endpoint: 'PIPELINE /events/_changes' });
      const auditId = uuidV5('decision-copies', uuidV5.URL);
      // Two pipelines projected different copies of one event: the same decision, two server times.
      await a.appendKeyed(e, { at: '2026-03-01T11:59:00.100Z', auditId });
      await Promise.all([
        b.appendKeyed(e, { at: '2026-03-01T11:59:00.250Z', auditId }),
        a.appendKeyed(e, { at: '2026-03-01T11:59:00.250Z', auditId }),
      ]);
      const page = await pageOf(a, { limit: 10 });
      expect(page.items.map((i) => [i.created_at, i.audit_id])).to.deep.equal([
        ['2026-03-01T11:59:00.100Z', auditId],
      ]);
      // Without claims (one writer), each time is an entry of its own: what the claim prevents.
      const plain = open();
      await plain.appendKeyed(e, { at: '2026-03-01T11:59:00.250Z', auditId });
      expect((await pageOf(plain, { limit: 10 })).items).to.have.length(2);
    });

    it('with claims, a batch of keyed and plain entries is stored whole, and a decision claimed concurrently once', async () => {
      const logs$ = [open({ claims: store.db.requests }), open({ claims: store.db.requests })];
      const e = entry({ action: 'CONFLICT_RESOLVED', endpoint: 'PIPELINE /events/_changes' });
      const ids = Array.from({ length: 20 }, (_, i) => uuidV5(`decision-${i}`, uuidV5.URL));
      // A claim short of its quorum under contention (a cluster) refuses its entry, and the pipeline's
      // step is tried again: so is each append here (`persisted`).
      await Promise.all(
        logs$.flatMap((log, w) => [
          ...ids.map((auditId, i) =>
            persisted(() =>
              log.appendKeyed(e, {
                at: `2026-03-01T11:59:${String(10 + i).padStart(2, '0')}.${w}00Z`,
                auditId,
              }),
            ),
          ),
          log.append(entry()),
        ]),
      );
      const all = (await allPages(logs$[0] ?? open(), { limit: 100 })).flatMap((p) => p.items);
      const keyed = all.filter((i) => i.action === 'CONFLICT_RESOLVED');
      expect(keyed.map((i) => i.audit_id).sort()).to.deep.equal([...ids].sort());
      expect(all.length - keyed.length, 'plain entries').to.equal(2);
    });

    it('with claims, a claim forked by refused copies (this writer’s own, one left behind) is read past, at the time of the claim that stood', async () => {
      const claims = store.db.requests;
      const e = entry({ action: 'CONFLICT_RESOLVED', endpoint: 'PIPELINE /events/_changes' });
      const auditId = uuidV5('decision-forked-claim', uuidV5.URL);
      const [stood, leftBehind, refused] = [
        '2026-03-01T11:59:10.000Z',
        '2026-03-01T11:59:10.100Z',
        '2026-03-01T11:59:10.200Z',
      ] as const;
      await open({ claims }).appendKeyed(e, { at: stood, auditId });
      // Another writer's refused copy that one copy took, never withdrawn: the winner of plain reads.
      await claims.bulkDocs(
        [
          {
            _id: `auditClaim:${auditId}`,
            _rev: `1-${'f'.repeat(31)}e`,
            docType: 'auditClaim',
            created_at: leftBehind,
            claimant: randomUUID(),
          },
        ],
        { new_edits: false },
      );
      // A cluster's reads may lag the entry and the fork a moment: a refusal is tried again (`persisted`).
      const writer = open({ claims: refusedButTaken(claims) });
      await persisted(() => writer.appendKeyed(e, { at: refused, auditId }));
      const replay = open({ claims });
      for (const at of [leftBehind, refused]) await persisted(() => replay.appendKeyed(e, { at, auditId }));
      const entries = (await allPages(replay, { limit: 10 })).flatMap((p) => p.items);
      expect(entries.map((i) => [i.created_at, i.audit_id])).to.deep.equal([[stood, auditId]]);
    });

    it('refuses a keyed entry with an unreadable time or an id that is not a UUID', async () => {
      const log = open();
      const refused = async (key: { at: string; auditId: string }, field: string) => {
        const error: unknown = await log.appendKeyed(entry(), key).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).to.be.instanceOf(InvalidAuditEntry);
        if (error instanceof InvalidAuditEntry) expect(error.fields).to.deep.equal([field]);
      };
      await refused({ at: 'yesterday', auditId: randomUUID() }, 'created_at');
      await refused({ at: '2026-03-01T12:00:00Z', auditId: 'decision-1' }, 'audit_id');
      expect((await pageOf(log, { limit: 10 })).items).to.deep.equal([]);
    });

    it('lists entries newest first', async () => {
      const log = open();
      await appendAt(log, [0, 2 * SECOND, SECOND], {});
      const page = await pageOf(log, { limit: 10 });
      expect(page.items.map((i) => i.created_at)).to.deep.equal([
        '2026-03-01T12:00:02.000Z',
        '2026-03-01T12:00:01.000Z',
        '2026-03-01T12:00:00.000Z',
      ]);
    });

    it('filters by actor, endpoint, outcome and subject, alone and together', async () => {
      const log = open();
      await appendAt(log, [0], { actor_user_id: 'ana', subject_id: 's-1' });
      await appendAt(log, [1], { actor_user_id: 'bia', subject_id: 's-1', outcome: 'FAILURE' });
      await appendAt(log, [2], { actor_user_id: 'ana', endpoint: 'PATCH /api/v1/students/{studentId}' });
      await appendAt(log, [3], {
        actor_user_id: null,
        actor_role: null,
        subject_id: null,
        outcome: 'FAILURE',
      });
      const times = async (filter: Omit<AuditFilter, 'limit'>) =>
        (await pageOf(log, { ...filter, limit: 50 })).items.map((i) => Date.parse(i.created_at) - BASE);
      expect(await times({ actor: 'ana' })).to.deep.equal([2, 0]);
      expect(await times({ endpoint: 'PATCH /api/v1/students/{studentId}' })).to.deep.equal([2]);
      expect(await times({ outcome: 'FAILURE' })).to.deep.equal([3, 1]);
      expect(await times({ subjectId: 's-1' })).to.deep.equal([1, 0]);
      expect(await times({ subjectId: 's-1', outcome: 'SUCCESS' })).to.deep.equal([0]);
      expect(await times({ actor: 'nobody' })).to.deep.equal([]);
    });

    it('filters one subject by a time range and pages it, through its index', async () => {
      const log = open();
      await appendAt(log, [0, SECOND, 2 * SECOND, 3 * SECOND, 4 * SECOND], { subject_id: 's-9' });
      await appendAt(log, [SECOND, 2 * SECOND, 3 * SECOND], { subject_id: 's-8' });
      const filter = {
        subjectId: 's-9',
        from: '2026-03-01T12:00:01Z',
        to: '2026-03-01T12:00:03Z',
        limit: 2,
      };
      const pages = await allPages(log, filter);
      expect(pages.map((p) => p.items.map((i) => (Date.parse(i.created_at) - BASE) / SECOND))).to.deep.equal([
        [3, 2],
        [1],
      ]);
      expect(pages.flatMap((p) => p.items).every((i) => i.subject_id === 's-9')).to.equal(true);
      const indexes = (await store.db.audit.getIndexes()).indexes.map((i) => i.name);
      expect(indexes).to.include('by-subject_id');
    });

    it('filters by an inclusive time range, to the millisecond', async () => {
      const log = open();
      await appendAt(log, [0, SECOND, 2 * SECOND, 3 * SECOND]);
      const times = async (from: string | undefined, to: string | undefined) =>
        (
          await pageOf(log, {
            limit: 50,
            ...(from === undefined ? {} : { from }),
            ...(to === undefined ? {} : { to }),
          })
        ).items.map((i) => (Date.parse(i.created_at) - BASE) / SECOND);
      expect(await times('2026-03-01T12:00:01Z', '2026-03-01T12:00:02Z')).to.deep.equal([2, 1]);
      expect(await times('2026-03-01T12:00:01.000Z', undefined)).to.deep.equal([3, 2, 1]);
      expect(await times(undefined, '2026-03-01T12:00:00.999Z')).to.deep.equal([0]);
      // Finer than a millisecond: 01.0001 is after the entry at 01.000, 02.0009 is after the one at 02.000.
      expect(await times('2026-03-01T12:00:01.0001Z', '2026-03-01T12:00:02.0009Z')).to.deep.equal([2]);
      expect(await times('2026-03-01T12:00:03Z', '2026-03-01T12:00:01Z')).to.deep.equal([]);
    });

    it('pages 10 entries by 3, listing each exactly once and in order', async () => {
      const log = open();
      await appendAt(
        log,
        Array.from({ length: 10 }, (_, i) => i * SECOND),
      );
      const pages = await allPages(log, { limit: 3 });
      expect(pages.map((p) => p.items.length)).to.deep.equal([3, 3, 3, 1]);
      expect(
        pages.flatMap((p) => p.items.map((i) => (Date.parse(i.created_at) - BASE) / SECOND)),
      ).to.deep.equal([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
      expect(pages.map((p) => p.nextCursor === null)).to.deep.equal([false, false, false, true]);
    });

    it('pages a filtered query across scan batches', async () => {
      const log = open({ maxBatch: 50 });
      // 600 entries, every third one by ana: more than one scan batch between matches' pages.
      now = BASE;
      await Promise.all(
        Array.from({ length: 600 }, (_, i) => {
          now = BASE + i;
          return log.append(entry({ actor_user_id: i % 3 === 0 ? 'ana' : 'bia' }));
        }),
      );
      const pages = await allPages(log, { actor: 'ana', limit: 90 });
      const listed = pages.flatMap((p) => p.items.map((i) => Date.parse(i.created_at) - BASE));
      expect(listed).to.deep.equal(Array.from({ length: 200 }, (_, i) => 597 - 3 * i));
      expect(pages.at(-1)?.nextCursor).to.equal(null);
    });

    it('refuses a cursor it did not issue', async () => {
      const log = open();
      await appendAt(log, [0, 1, 2]);
      const first = await pageOf(log, { limit: 1 });
      const good = first.nextCursor;
      if (good === null) throw new Error('expected a next page');
      const forged = [
        'not a cursor',
        `${good}x`,
        `${good}==`,
        encodeAuditCursor('idem:abc'),
        encodeAuditCursor('audit:yesterday:someone'),
        encodeAuditCursor(`${Buffer.from(good, 'base64url').toString('utf8')};`),
      ];
      for (const cursor of forged) {
        expect(await log.query({ limit: 5, cursor }), cursor).to.deep.equal(
          E.left({ _tag: 'InvalidAuditCursor' }),
        );
      }
      expect(E.isRight(await log.query({ limit: 5, cursor: good }))).to.equal(true);
    });

    it('stores 100 concurrent appends, every one', async () => {
      const log = open();
      await Promise.all(Array.from({ length: 100 }, (_, i) => log.append(entry({ details: { n: i } }))));
      // A range read on a cluster asks one copy of each shard, which may not have every write yet
      // (writes are acknowledged by two copies of three): it shows them all a moment later.
      const page = await readUntil(
        () => pageOf(log, { limit: 200 }),
        (p) => p.items.length >= 100,
      );
      expect(page.items).to.have.length(100);
      expect(new Set(page.items.map((i) => i.details.n)).size).to.equal(100);
      expect(new Set(page.items.map((i) => i.audit_id)).size).to.equal(100);
    });

    it('flush waits for the pending writes', async () => {
      const log = open();
      let appended = false;
      const pending = log.append(entry()).then(() => {
        appended = true;
      });
      await log.flush();
      expect(appended).to.equal(true);
      // A range read is served by one copy of each shard: on a cluster it may lag the write a moment.
      const rows = await readUntil(
        () => store.db.audit.allDocs({ startkey: 'audit:', endkey: 'audit;' }),
        (r) => r.rows.length >= 1,
      );
      expect(rows.rows).to.have.length(1);
      await pending;
    });

    it('close writes what is queued and then refuses appends', async () => {
      const log = open();
      const pending = log.append(entry());
      await log.close();
      await pending;
      expect((await pageOf(log, { limit: 5 })).items).to.have.length(1);
      let refused: unknown;
      await log.append(entry()).catch((e: unknown) => {
        refused = e;
      });
      expect(refused).to.be.instanceOf(WriterClosed);
    });

    it('refuses an entry with a raw URL, non-JSON details or a field it does not name, without echoing values', async () => {
      const log = open();
      const rejection = async (e: NewAuditEntry): Promise<unknown> =>
        log.append(e).then(
          () => undefined,
          (x: unknown) => x,
        );
      const rawUrl = await rejection(entry({ endpoint: 'GET /api/v1/students?q=Maria' }));
      expect(rawUrl).to.be.instanceOf(InvalidAuditEntry);
      expect(await rejection(entry({ details: { at: new Date(0) } }))).to.be.instanceOf(InvalidAuditEntry);
      const withEmail = { ...entry(), email: 'maria@example.org' };
      const extra = await rejection(withEmail);
      expect(extra).to.be.instanceOf(InvalidAuditEntry);
      expect(extra instanceof InvalidAuditEntry ? extra.fields : []).to.deep.equal(['email']);
      expect(String(extra)).not.to.include('maria');
      expect((await pageOf(log, { limit: 5 })).items).to.deep.equal([]);
    });

    it('keeps an entry as it was at append, whatever the caller does to its object afterwards', async () => {
      const log = open();
      const details: Record<string, unknown> = { status: 200 };
      const pending = log.append(entry({ details }));
      details.status = 500;
      await pending;
      expect((await pageOf(log, { limit: 1 })).items[0]?.details).to.deep.equal({ status: 200 });
    });

    // A server stopped and started again: express-pouchdb, or one real CouchDB node (`npm run
    // test:couchdb`). Not a cluster, where stopping every node and forming it again takes 13 s of CI's
    // longest step and the writer meets the same refused connections (the store outage rows stop a
    // cluster's nodes under load).
    if (name === couchServerLabel() && realCouchNodes() <= 1) {
      it('rejects the entries of a failed write and goes on writing later ones', async () => {
        const server = host.server;
        if (server === undefined) throw new Error('no server');
        const log = open();
        await server.stop();
        let failed: unknown;
        await log.append(entry()).catch((e: unknown) => {
          failed = e;
        });
        expect(failed).to.be.instanceOf(Error);
        await server.restart();
        await log.append(entry());
        expect((await pageOf(log, { limit: 5 })).items).to.have.length(1);
      });
    }

    // By actor the range is scanned and filtered in memory; by subject the subject's index is read.
    // Not on a cluster: there a range read may lag an acknowledged append by a moment (decision
    // 0023), so "every earlier entry" holds a moment later, not at once; one node keeps the property.
    for (const by of onCluster ? [] : (['actor', 'subject'] as const))
      it(`property: pages by ${by} read while entries are appended list every earlier entry exactly once, never one twice`, async () => {
        const log = open();
        const offset = fc.integer({ min: 0, max: 40 });
        const step = fc.oneof(
          fc.record({ kind: fc.constant('append' as const), at: offset, wait: fc.boolean() }),
          fc.record({ kind: fc.constant('page' as const) }),
        );
        await fc.assert(
          fc.asyncProperty(
            fc.array(offset, { maxLength: 12 }),
            fc.integer({ min: 1, max: 4 }),
            fc.array(step, { maxLength: 16 }),
            async (before, limit, steps) => {
              // Each run has its own actor and subject, so runs share the database without seeing each other's entries.
              const actor = randomUUID();
              const subject = randomUUID();
              const appendAtOffset = (at: number): Promise<void> => {
                // Times repeat and go backwards: ties and late entries below the cursor are the hard cases.
                now = BASE + at;
                return log.append(entry({ actor_user_id: actor, subject_id: subject }));
              };
              await Promise.all(before.map(appendAtOffset));
              const existing = (
                await store.db.audit.allDocs({ startkey: 'audit:', endkey: 'audit;', include_docs: true })
              ).rows
                .filter(
                  (r) => r.doc !== undefined && 'actor_user_id' in r.doc && r.doc.actor_user_id === actor,
                )
                .map((r) => r.id);
              expect(existing).to.have.length(before.length);

              const listed: string[] = [];
              const inFlight: Array<Promise<void>> = [];
              let cursor: string | null | undefined;
              const readPage = async () => {
                const page = await pageOf(log, {
                  ...(by === 'actor' ? { actor } : { subjectId: subject }),
                  limit,
                  ...(typeof cursor === 'string' ? { cursor } : {}),
                });
                expect(page.items.length).to.be.at.most(limit);
                listed.push(...page.items.map(idOf));
                cursor = page.nextCursor;
              };
              for (const s of steps) {
                if (s.kind === 'page') {
                  if (cursor !== null) await readPage();
                } else if (s.wait) await appendAtOffset(s.at);
                else inFlight.push(appendAtOffset(s.at));
              }
              while (cursor !== null) await readPage();
              await Promise.all(inFlight);

              expect(new Set(listed).size, 'listed twice').to.equal(listed.length);
              expect(listed, 'an earlier entry missing').to.include.members(existing);
              expect(
                listed.every((id, i) => i === 0 || id < (listed[i - 1] ?? '')),
                'not newest first',
              ).to.equal(true);
            },
          ),
          { numRuns: propertyRuns },
        );
      });
  });
}

describe('audit log claims short of their quorum, on a cluster shaped by hand', () => {
  /**
   * Two writers' claims of one decision, each short of its quorum on the copy it reached, the other's
   * claim readable meanwhile (the likeliest path of one decision audited at two times, three nodes).
   * Each writer's first claim of an id the shared database lacks, or holds only as the other writer's
   * short copy, falls short; that copy then holds the other writer's time until its writer withdraws
   * it, which it does before its next claim. Later claims are plain writes: 201, or 409 on the claim
   * that stands.
   */
  const shortClaims = (): {
    readonly claims: (otherTime: string) => Database;
    readonly db: Database;
  } => {
    const db: Database = new PouchDB(`claims-${randomUUID()}`, { adapter: 'memory' });
    const shortCopies = new Set<string>();
    const claims = (otherTime: string): Database => {
      const tried = new Set<string>();
      const bulkDocs = async (docs: Array<PouchDB.Core.PutDocument<object>>) => {
        const out: Array<PouchDB.Core.Response | PouchDB.Core.Error> = [];
        for (const doc of docs) {
          const id = doc._id ?? '';
          const held = await db.get(id).catch(() => undefined);
          if (!tried.has(id) && (held === undefined || shortCopies.has(id))) {
            tried.add(id);
            shortCopies.add(id);
            await db.put({
              _id: id,
              docType: 'auditClaim',
              created_at: otherTime,
              ...(held ? { _rev: held._rev } : {}),
            });
            out.push(new QuorumNotMetError(id));
            continue;
          }
          if (held !== undefined && shortCopies.has(id)) {
            shortCopies.delete(id);
            await db.remove(id, held._rev);
          }
          const [r] = await db.bulkDocs([doc]);
          if (r !== undefined) out.push(r);
        }
        return out;
      };
      return withBulkDocs(db, bulkDocs);
    };
    return { claims, db };
  };

  it('writes each decision once, at the time of the claim that stands, never at a short claim’s', async () => {
    const { claims, db: claimsDb } = shortClaims();
    const audit: Database = new PouchDB(`audit-${randomUUID()}`, { adapter: 'memory' });
    const times = ['2026-03-01T11:59:10.000Z', '2026-03-01T11:59:10.100Z'] as const;
    const logs = [
      auditLog(audit, { clock: () => new Date(BASE), claims: claims(times[1]) }),
      auditLog(audit, { clock: () => new Date(BASE), claims: claims(times[0]) }),
    ];
    const auditId = uuidV5('decision-short', uuidV5.URL);
    const e = entry({ action: 'CONFLICT_RESOLVED', endpoint: 'PIPELINE /events/_changes' });
    // One writer after the other: each finds the other's short copy where its own claim fell short.
    for (const [w, log] of logs.entries()) await log.appendKeyed(e, { at: times[w] ?? '', auditId });
    for (const log of logs) await log.close();
    const entries = (await audit.allDocs({ startkey: 'audit:', endkey: 'audit:\ufff0' })).rows.map(
      (r) => r.id,
    );
    const stands: unknown = await claimsDb.get(`auditClaim:${auditId}`);
    expect(stands).to.deep.include({ created_at: times[0] });
    expect(entries).to.deep.equal([auditDocId(times[0], auditId)]);
  });
});

describe('audit log claims refused yet taken by one copy, on a cluster shaped by hand', () => {
  const times = ['2026-03-01T11:59:10.000Z', '2026-03-01T11:59:10.100Z'] as const;
  const e = entry({ action: 'CONFLICT_RESOLVED', endpoint: 'PIPELINE /events/_changes' });
  const memory = (name: string): Database => new PouchDB(`${name}-${randomUUID()}`, { adapter: 'memory' });
  const logs: AuditLog[] = [];
  const open = (audit: Database, options: Partial<AuditLogOptions> = {}): AuditLog => {
    const log = auditLog(audit, { clock: () => new Date(BASE), ...options });
    logs.push(log);
    return log;
  };
  afterEach(async () => {
    await Promise.all(logs.splice(0).map((l) => l.close()));
  });
  const entryIds = async (audit: Database): Promise<string[]> =>
    (await audit.allDocs({ startkey: 'audit:', endkey: 'audit:\ufff0' })).rows.map((r) => r.id);

  it('a writer refused whose claim one copy took writes at the time of the claim that stood, and withdraws its copy', async () => {
    const [claims, audit] = [memory('claims'), memory('audit')];
    const auditId = uuidV5('decision-refused-taken', uuidV5.URL);
    await open(audit, { claims }).appendKeyed(e, { at: times[0], auditId });
    await open(audit, { claims: refusedButTaken(claims) }).appendKeyed(e, { at: times[1], auditId });
    expect(await entryIds(audit)).to.deep.equal([auditDocId(times[0], auditId)]);
    // Later readers (a replay, another writer) find the claim that stood alone.
    const claim = await claims.get(`auditClaim:${auditId}`, { conflicts: true });
    expect(claim).to.deep.include({ created_at: times[0] });
    expect(claim._conflicts ?? []).to.deep.equal([]);
  });

  it('a later writer finding the claim forked by a refused copy left behind writes at the time already audited', async () => {
    const [claims, audit] = [memory('claims'), memory('audit')];
    const auditId = uuidV5('decision-fork-left', uuidV5.URL);
    await open(audit, { claims }).appendKeyed(e, { at: times[0], auditId });
    // The refused copy of a writer that died before withdrawing it: the winner of every plain read.
    await claims.bulkDocs(
      [
        {
          _id: `auditClaim:${auditId}`,
          _rev: ABOVE,
          docType: 'auditClaim',
          created_at: times[1],
          claimant: randomUUID(),
        },
      ],
      { new_edits: false },
    );
    expect(await claims.get(`auditClaim:${auditId}`)).to.deep.include({ created_at: times[1] });
    // Replays of both writers' decisions, at either time.
    for (const at of [times[1], times[0], times[1]])
      await open(audit, { claims }).appendKeyed(e, { at, auditId });
    expect(await entryIds(audit)).to.deep.equal([auditDocId(times[0], auditId)]);
  });

  it('a claim forked between two other times with no entry at either is waited on, then taken at its earliest past the grace', async () => {
    const [claims, audit] = [memory('claims'), memory('audit')];
    const auditId = uuidV5('decision-fork-unaudited', uuidV5.URL);
    const id = `auditClaim:${auditId}`;
    await claims.put({ _id: id, docType: 'auditClaim', created_at: times[1], claimant: randomUUID() });
    await claims.bulkDocs([{ _id: id, _rev: ABOVE, docType: 'auditClaim', created_at: times[0] }], {
      new_edits: false,
    });
    const at = '2026-03-01T11:59:10.200Z';
    const waited: unknown = await open(audit, { claims })
      .appendKeyed(e, { at, auditId })
      .then(
        () => undefined,
        (x: unknown) => x,
      );
    expect(waited).to.be.instanceOf(AuditEntryNotStored);
    expect(await entryIds(audit)).to.deep.equal([]);
    await open(audit, { claims, claimForkGraceMs: 0 }).appendKeyed(e, { at, auditId });
    // Within its grace, a writer now finds the entry written past it.
    await open(audit, { claims }).appendKeyed(e, { at: times[1], auditId });
    expect(await entryIds(audit)).to.deep.equal([auditDocId(times[0], auditId)]);
  });
});
