import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import MemoryAdapter from 'pouchdb-adapter-memory';
import { runWithin, startDeadline } from '../../src/lib/deadline.js';
import { boundedFetch } from '../../src/store/boundedFetch.js';
import { type Database, PouchDB } from '../../src/store/pouch.js';
import { sortsAbove, WITHDRAWN, withQuorumWrites } from '../../src/store/quorumWrites.js';
import { QuorumNotMetError } from '../../src/store/storeErrors.js';
import { type CouchServer, couchServerLabel, startCouchServer } from '../support/couchServer.js';

PouchDB.plugin(MemoryAdapter);

describe('quorum writes: which live leaf CouchDB makes the winner', () => {
  const table: ReadonlyArray<readonly [string, string, boolean]> = [
    ['2-aaa', '1-fff', true], // a later generation wins, whatever its hash
    ['1-fff', '2-aaa', false],
    ['10-aaa', '9-fff', true], // generations compare as numbers, not as text
    ['1-bbb', '1-aaa', true], // the same generation: the higher revision id
    ['1-aaa', '1-bbb', false],
    ['1-aaa', '1-aaa', false], // a leaf is not above itself
  ];
  for (const [x, y, above] of table)
    it(`${x} ${above ? 'sorts above' : 'does not sort above'} ${y}`, () => {
      expect(sortsAbove(x, y)).to.equal(above);
    });

  it('of any two different leaves, exactly one sorts above the other', () => {
    const revs = ['1-a', '1-b', '2-a', '3-0', '10-z', '9-z'];
    for (const x of revs)
      for (const y of revs)
        if (x !== y) expect(sortsAbove(x, y) !== sortsAbove(y, x), `${x} ${y}`).to.equal(true);
  });
});

type NewDoc = PouchDB.Core.PutDocument<object>;
type WriteResult = PouchDB.Core.Response | PouchDB.Core.Error;
type Store = (docs: NewDoc[], options?: PouchDB.Core.BulkDocsOptions) => Promise<WriteResult[]>;

/**
 * `db` shaped as a CouchDB cluster answers: `copies` per document in its info, and each interactive
 * write answered by `write`, which may store what it likes first (a replicated write, say). What must
 * be there before is stored before this: PouchDB's own `put` calls `bulkDocs` with a callback.
 */
const asCluster = (
  db: Database,
  copies: number,
  write: (doc: NewDoc, store: Store) => Promise<WriteResult>,
) => {
  const info = db.info.bind(db);
  const store: Store = db.bulkDocs.bind(db);
  return Object.assign(db, {
    info: async () => ({ ...(await info()), cluster: { n: copies } }),
    bulkDocs: async (docs: NewDoc[], options: PouchDB.Core.BulkDocsOptions = {}) => {
      if (options.new_edits === false) return store(docs, options);
      const out: WriteResult[] = [];
      for (const doc of docs) out.push(await write(doc, store));
      return out;
    },
  });
};

/**
 * CouchDB's answer to `POST {db}/_bulk_get` naming no revision (every leaf of each document, as
 * `open_revs=all`), each document's leaves from `leavesOf`.
 */
const bulkGetAnswer = async (
  init: RequestInit,
  leavesOf: (id: string) => Promise<unknown>,
): Promise<Response> => {
  const body: unknown = JSON.parse(String(init.body));
  const docs: unknown = Reflect.get(Object(body), 'docs');
  const ids = (Array.isArray(docs) ? docs : []).map((d: unknown) => String(Reflect.get(Object(d), 'id')));
  const results = await Promise.all(ids.map(async (id) => ({ id, docs: await leavesOf(id) })));
  return new Response(JSON.stringify({ results }));
};

/** CouchDB's answer to a read of every leaf: `GET {id}?open_revs=all…`, or `POST _bulk_get` of several. */
const leavesAnswer = async (
  path: string,
  init: RequestInit,
  leavesOf: (id: string) => Promise<unknown>,
): Promise<Response> =>
  path.startsWith('_bulk_get?')
    ? bulkGetAnswer(init, leavesOf)
    : new Response(JSON.stringify(await leavesOf(decodeURIComponent(path.slice(0, path.indexOf('?'))))));

describe('quorum writes: the copy a refused write left behind', () => {
  /**
   * PouchDB shaped as one CouchDB cluster answers: `copies` per document, and a write to one of
   * `keptOnRefusal` answered 409 while a copy took it (stored beside the other writer's revision as a
   * second leaf, as internal replication would bring it).
   */
  const clusterShaped = async (
    copies: number,
    keptOnRefusal: ReadonlySet<string>,
    stored: { readonly _id: string; readonly owner: string },
  ): Promise<{ readonly db: Database; readonly rev: string }> => {
    const db: Database = new PouchDB(`qw-${randomUUID()}`, { adapter: 'memory' });
    // Stored before the override: PouchDB's own put calls bulkDocs with a callback.
    const { rev } = await db.put(stored);
    const shaped = asCluster(db, copies, async (doc, store) => {
      const id = doc._id ?? '';
      const [plain] = !keptOnRefusal.has(id) || '_deleted' in doc ? await store([doc]) : [];
      if (plain !== undefined) return plain;
      await store([{ ...doc, _id: id, _rev: '1-0000000000000000000000000000000f' }], { new_edits: false });
      return { id, error: 'conflict', reason: 'Document update conflict.' };
    });
    return { db: shaped, rev };
  };
  const leaves = async (db: Database, id: string) => {
    const got: unknown = await db.get(id, { open_revs: 'all' });
    return (Array.isArray(got) ? got : []).map((l: unknown) => {
      const doc: unknown = Reflect.get(Object(l), 'ok');
      return {
        rev: String(Reflect.get(Object(doc), '_rev')),
        deleted: Reflect.get(Object(doc), '_deleted') === true,
        withdrawn: Reflect.get(Object(doc), 'withdrawn') === WITHDRAWN,
      };
    });
  };
  const refusal = (e: unknown): unknown => Reflect.get(Object(e), 'status');
  /** Each of `ids` left with one live leaf, the other writer's, and its own copy withdrawn. */
  const expectEachWithdrawnOnce = async (db: Database, ids: ReadonlyArray<string>) => {
    for (const id of ids) {
      const after = await leaves(db, id);
      expect(
        after.filter((l) => !l.deleted),
        id,
      ).to.have.length(1);
      expect(
        after.filter((l) => l.deleted && l.withdrawn),
        id,
      ).to.have.length(1);
    }
  };

  it('withdraws the copy it left beside the write that won, and still answers 409', async () => {
    const { db: raw, rev } = await clusterShaped(3, new Set(['claim:k']), { _id: 'claim:k', owner: 'B' });
    const db = withQuorumWrites(raw);
    expect(await db.put({ _id: 'claim:k', owner: 'A' }).catch(refusal)).to.equal(409);
    const after = await leaves(db, 'claim:k');
    expect(after.filter((l) => !l.deleted).map((l) => l.rev)).to.deep.equal([rev]);
    expect(after.filter((l) => l.deleted && l.withdrawn)).to.have.length(1);
    expect(((await db.get('claim:k')) as { owner?: string }).owner).to.equal('B');
  });

  it('writes nothing after a refusal that left no copy', async () => {
    const { db: raw, rev } = await clusterShaped(3, new Set(), { _id: 'claim:k', owner: 'B' });
    const db = withQuorumWrites(raw);
    expect(await db.put({ _id: 'claim:k', owner: 'A' }).catch(refusal)).to.equal(409);
    expect(await leaves(db, 'claim:k')).to.deep.equal([{ rev: rev, deleted: false, withdrawn: false }]);
  });

  /**
   * Each of `ids` stored by another writer, then written again through a cluster that refuses the
   * write while one copy takes it; the leaves read through `_bulk_get`, each request's documents kept
   * in `asked`, a document in `failing` answered with a copy's error instead of its leaves.
   */
  const refusedBatch = async (
    ids: ReadonlyArray<string>,
    failing: ReadonlySet<string> = new Set(),
    reads: { readonly delayMs: number; readonly deadlineMs: number } | undefined = undefined,
  ) => {
    const raw: Database = new PouchDB(`qw-${randomUUID()}`, { adapter: 'memory' });
    for (const id of ids) await raw.put({ _id: id, owner: 'B' });
    const get = raw.get.bind(raw);
    const asked: string[][] = [];
    const shaped = asCluster(raw, 3, async (doc, store) => {
      const id = doc._id ?? '';
      const [deletion] = '_deleted' in doc ? await store([doc]) : [];
      if (deletion !== undefined) return deletion;
      await store([{ ...doc, _id: id, _rev: '1-0000000000000000000000000000000f' }], { new_edits: false });
      return { id, error: 'conflict', reason: 'Document update conflict.' };
    });
    const answer = async (path: string, init: RequestInit = {}) => {
      expect(path).to.equal('_bulk_get?revs=true&r=3');
      // As a cluster under load answers: after a while, unless the caller stopped waiting.
      if (reads !== undefined)
        await sleep(reads.delayMs, undefined, init.signal ? { signal: init.signal } : {});
      const batch: string[] = [];
      asked.push(batch);
      return bulkGetAnswer(init, async (id) => {
        batch.push(id);
        return failing.has(id)
          ? [{ error: { id, rev: 'undefined', error: 'internal_fabric_error', reason: 'timeout' } }]
          : get(id, { open_revs: 'all', revs: true });
      });
    };
    // The store's own fetch around it, which stops a read in flight at its caller's deadline.
    const ADDRESS = 'http://couchdb.invalid/events/';
    const bounded = boundedFetch(5_000, (input, init) => answer(String(input).slice(ADDRESS.length), init));
    Object.assign(shaped, {
      fetch: (path: string, init?: RequestInit) => bounded(`${ADDRESS}${path}`, init),
    });
    const write = () => withQuorumWrites(shaped).bulkDocs(ids.map((id) => ({ _id: id, owner: 'A' })));
    if (reads === undefined) return { db: shaped, asked, results: await write() };
    const deadline = startDeadline(reads.deadlineMs);
    try {
      return { db: shaped, asked, results: await runWithin(deadline, write), fired: deadline.fired() };
    } finally {
      deadline.end();
    }
  };

  it('reads the leaves of every refused write of a batch in one request, and withdraws each copy left', async () => {
    const ids = ['claim:a', 'claim:b', 'claim:c'];
    const { db, asked, results } = await refusedBatch(ids);
    expect(results.map((r) => ('error' in r ? r.error : 'ok'))).to.deep.equal([
      'conflict',
      'conflict',
      'conflict',
    ]);
    expect(asked.map((batch) => [...batch].sort())).to.deep.equal([ids]);
    await expectEachWithdrawnOnce(db, ids);
  });

  it("withdraws the copies left behind when the request's deadline passes while their leaves are read", async () => {
    const ids = ['event:a', 'event:b'];
    // The read outlasts the deadline: cut there, it withdrew nothing, and each event held the pipeline
    // of every instance for its grace (the two-instance row on three nodes, under load).
    const out = await refusedBatch(ids, new Set(), { delayMs: 300, deadlineMs: 100 });
    expect(out.fired, 'the deadline passed while the write was judged').to.equal(true);
    expect(out.results.map((r) => ('error' in r ? r.error : 'ok'))).to.deep.equal(['conflict', 'conflict']);
    await expectEachWithdrawnOnce(out.db, ids);
  });

  it('a document whose leaves a copy could not read is left as it is, and the others of the batch withdrawn', async () => {
    const { db, asked } = await refusedBatch(['claim:a', 'claim:b'], new Set(['claim:b']));
    expect(asked).to.have.length(1);
    expect((await leaves(db, 'claim:a')).filter((l) => l.deleted && l.withdrawn)).to.have.length(1);
    // Unknown, the copy left behind is not judged: two live leaves, as before the refusal was looked at.
    expect((await leaves(db, 'claim:b')).filter((l) => !l.deleted)).to.have.length(2);
  });

  it('leaves a single copy alone: one copy cannot take a write it refused', async () => {
    const { db: raw } = await clusterShaped(1, new Set(['claim:k']), { _id: 'claim:k', owner: 'B' });
    const db = withQuorumWrites(raw);
    expect(await db.put({ _id: 'claim:k', owner: 'A' }).catch(refusal)).to.equal(409);
    expect((await leaves(db, 'claim:k')).filter((l) => l.deleted)).to.deep.equal([]);
  });
});

describe('quorum writes: which of two writers that split the copies keeps its write', () => {
  const OTHER = '1-88888888888888888888888888888888';
  /**
   * PouchDB shaped as a cluster where a create of `event:e` reaches one copy only (202, `accepted`):
   * it is stored as revision `ours` beside the other writer's live revision `OTHER`.
   */
  const split = async (ours: string, nodes?: { readonly connected: number }): Promise<Database> => {
    const db: Database = new PouchDB(`qw-${randomUUID()}`, { adapter: 'memory' });
    await db.bulkDocs([{ _id: 'event:e', _rev: OTHER, by: 'B' }], { new_edits: false });
    const get = db.get.bind(db);
    const shaped = asCluster(db, 3, async (doc, store) => {
      const [deletion] = '_deleted' in doc ? await store([doc]) : [];
      if (deletion !== undefined) return deletion;
      await store([{ ...doc, _id: 'event:e', _rev: ours }], { new_edits: false });
      return { ok: true, id: 'event:e', rev: ours, accepted: true };
    });
    if (nodes === undefined) return shaped;
    // The two requests of the CouchDB protocol the quorum writes make through PouchDB's `fetch`.
    const all = ['node1', 'node2', 'node3'];
    return Object.assign(shaped, {
      fetch: async (path: string, init: RequestInit = {}) =>
        path === '/_membership'
          ? new Response(JSON.stringify({ all_nodes: all.slice(0, nodes.connected), cluster_nodes: all }))
          : leavesAnswer(path, init, (id) => get(id, { open_revs: 'all' })),
    });
  };
  const live = async (db: Database): Promise<string[]> => {
    const got: unknown = await db.get('event:e', { open_revs: 'all' });
    return (Array.isArray(got) ? got : []).flatMap((l: unknown) => {
      const doc: unknown = Reflect.get(Object(l), 'ok');
      return Reflect.get(Object(doc), '_deleted') === true ? [] : [String(Reflect.get(Object(doc), '_rev'))];
    });
  };
  const TOP = '1-ffffffffffffffffffffffffffffffff';
  const BOTTOM = '1-00000000000000000000000000000000';

  it('keeping the winner, the leaf on top stands and withdraws the one below it sees', async () => {
    // Every node connected: the copy below had reached the quorum and its writer was told "stored",
    // so this one hears 409, as it would had that copy stood.
    const connected = withQuorumWrites(await split(TOP, { connected: 3 }), {
      keep: 'winner',
      withdrawBelow: true,
    });
    expect(
      await connected
        .put({ _id: 'event:e', by: 'A' })
        .catch((e: unknown) => Reflect.get(Object(e), 'status')),
    ).to.equal(409);
    expect(await live(connected)).to.deep.equal([TOP]);
    // A node away: the writers may have split the copies, the one below withdraws its own and hears
    // 409, so this one is told its write stands.
    const away = withQuorumWrites(await split(TOP, { connected: 2 }), {
      keep: 'winner',
      withdrawBelow: true,
    });
    expect((await away.put({ _id: 'event:e', by: 'A' })).rev).to.equal(TOP);
    expect(await live(away)).to.deep.equal([TOP]);
  });

  it('keeping the winner without withdrawing below, both stand: a fork for the reader to merge', async () => {
    const db = withQuorumWrites(await split(TOP), { keep: 'winner' });
    expect((await db.put({ _id: 'event:e', by: 'A' })).rev).to.equal(TOP);
    expect((await live(db)).sort()).to.deep.equal([OTHER, TOP].sort());
  });

  it('keeping the winner, a leaf below another is withdrawn and the write is refused', async () => {
    const db = withQuorumWrites(await split(BOTTOM), { keep: 'winner', withdrawBelow: true });
    expect(await db.put({ _id: 'event:e', by: 'A' }).catch((e: unknown) => e)).to.be.instanceOf(
      QuorumNotMetError,
    );
    expect(await live(db)).to.deep.equal([OTHER]);
  });

  it('by default a write short of its quorum stands only alone, whichever sorts above', async () => {
    const db = withQuorumWrites(await split(TOP));
    expect(await db.put({ _id: 'event:e', by: 'A' }).catch((e: unknown) => e)).to.be.instanceOf(
      QuorumNotMetError,
    );
    expect(await live(db)).to.deep.equal([OTHER]);
  });
});

describe(`quorum writes through the CouchDB protocol with credentials in the address, on ${couchServerLabel()}`, function () {
  this.timeout(60_000);
  let server: CouchServer;
  before(async () => {
    server = await startCouchServer();
  });
  after(() => server.dispose());

  it('reads the leaves of a write short of its quorum, and keeps it when it is the only one', async () => {
    const address = new URL(`${server.url}/qw-${randomUUID()}`);
    if (address.username === '') {
      // express-pouchdb asks for none, and ignores what it is sent: the client still sends them.
      address.username = 'someone';
      address.password = 'secret';
    }
    const raw: Database = new PouchDB(address.toString());
    await raw.info();
    // One copy took the write (CouchDB's 202): nobody else wrote the document, so it stands.
    const shaped = asCluster(raw, 3, async (doc, store) => {
      const [r] = await store([doc]);
      if (r === undefined) throw new Error('no result');
      return 'ok' in r && r.ok === true ? { ...r, accepted: true } : r;
    });
    const db = withQuorumWrites(shaped);
    try {
      const written = await db.put({ _id: 'claim:alone', owner: 'A' });
      expect((await db.get('claim:alone'))._rev).to.equal(written.rev);
    } finally {
      await db.destroy();
    }
  });
});

describe('quorum writes: a write short of its quorum, alone, and a stale compare-and-swap', () => {
  type Result = PouchDB.Core.Response | PouchDB.Core.Error;
  /**
   * Three copies of one database, each a PouchDB, behind one database shaped as a CouchDB cluster
   * answers: an interactive write goes to every copy it reaches and is answered by the copies that
   * agree (two: 201; one took it: 202, `accepted`; two refused: 409), a replicated write goes to every
   * copy, and a read of every leaf merges the copies' trees. `shortOnce` makes the next interactive
   * write reach copy 0 only (the others slow), and `meanwhile` runs before the next replicated write,
   * as another writer's request would land after the short write's writer read its leaves.
   */
  const threeCopies = (connected = 3) => {
    const copies = [0, 1, 2].map((): Database => new PouchDB(`copy-${randomUUID()}`, { adapter: 'memory' }));
    const front: Database = new PouchDB(`front-${randomUUID()}`, { adapter: 'memory' });
    let short = false;
    let meanwhile: (() => Promise<void>) | undefined;
    const conflict = (doc: NewDoc): Result => ({
      id: doc._id ?? '',
      error: 'conflict',
      name: 'conflict',
      status: 409,
      message: 'conflict',
    });
    // CouchDB refuses an edit of a revision that is not a leaf of the copy (PouchDB's adapter throws
    // on some); each copy gets its own clone, PouchDB changing the documents it is given.
    const writeTo = async (c: Database, doc: NewDoc): Promise<Result | undefined> => {
      if (doc._rev !== undefined) {
        const got: unknown = await c.get(doc._id ?? '', { open_revs: 'all' }).catch(() => []);
        const leaves = (Array.isArray(got) ? got : []).map((l: unknown) =>
          Reflect.get(Object(Reflect.get(Object(l), 'ok')), '_rev'),
        );
        if (!leaves.includes(doc._rev)) return conflict(doc);
      }
      return (await c.bulkDocs([structuredClone(doc)]))[0];
    };
    const writeOne = async (doc: NewDoc): Promise<Result> => {
      const reached = short ? copies.slice(0, 1) : copies;
      short = false;
      const answers: Array<Result | undefined> = [];
      for (const c of reached) answers.push(await writeTo(c, doc));
      const oks = answers.filter(
        (a): a is PouchDB.Core.Response => a !== undefined && 'ok' in a && a.ok === true,
      );
      const first = oks[0];
      if (oks.length >= 2 && first !== undefined) return first;
      if (answers.length - oks.length >= 2 || first === undefined) return conflict(doc);
      return { ...first, accepted: true } as PouchDB.Core.Response;
    };
    const leavesOf = async (id: string): Promise<unknown[]> => {
      const seen = new Map<string, unknown>();
      for (const c of copies) {
        const got: unknown = await c.get(id, { open_revs: 'all', revs: true }).catch(() => []);
        for (const l of Array.isArray(got) ? got : []) {
          const rev: unknown = Reflect.get(Object(Reflect.get(Object(l), 'ok')), '_rev');
          if (typeof rev === 'string') seen.set(rev, l);
        }
      }
      // As CouchDB merges the copies' trees: a leaf of one copy that another extended is not a leaf.
      const ancestors = new Set(
        [...seen.values()].flatMap((l) => {
          const revs: unknown = Reflect.get(Object(Reflect.get(Object(l), 'ok')), '_revisions');
          const start: unknown = Reflect.get(Object(revs), 'start');
          const ids: unknown = Reflect.get(Object(revs), 'ids');
          if (typeof start !== 'number' || !Array.isArray(ids)) return [];
          return ids.slice(1).map((hash: unknown, i) => `${start - 1 - i}-${String(hash)}`);
        }),
      );
      return [...seen.entries()].flatMap(([rev, l]) => (ancestors.has(rev) ? [] : [l]));
    };
    const db = Object.assign(front, {
      info: async () => ({ db_name: 'three', doc_count: 0, update_seq: 0, cluster: { n: 3 } }),
      bulkDocs: async (docs: NewDoc[], options: PouchDB.Core.BulkDocsOptions = {}) => {
        if (options.new_edits === false) {
          const then = meanwhile;
          meanwhile = undefined;
          if (then !== undefined) await then();
          for (const c of copies) await c.bulkDocs(structuredClone(docs), { new_edits: false });
          return [];
        }
        const out: Result[] = [];
        for (const doc of docs) out.push(await writeOne(doc));
        return out;
      },
      get: async (id: string, options: { open_revs?: 'all' } = {}) => {
        if (options.open_revs === 'all') return leavesOf(id);
        return copies[1]?.get(id);
      },
    });
    // The requests of the CouchDB protocol the quorum writes make through PouchDB's `fetch`: every
    // leaf, the replicated write (201: every copy took it), and the membership (`connected` nodes).
    const all = ['node1', 'node2', 'node3'];
    Object.assign(db, {
      fetch: async (path: string, init: RequestInit = {}) => {
        if (path === '/_membership')
          return new Response(JSON.stringify({ all_nodes: all.slice(0, connected), cluster_nodes: all }));
        if (path === '_bulk_docs') {
          const body: unknown = JSON.parse(String(init.body));
          const docs: unknown = Reflect.get(Object(body), 'docs');
          await db.bulkDocs(Array.isArray(docs) ? docs : [], { new_edits: false });
          return new Response('[]', { status: 201 });
        }
        return leavesAnswer(path, init, leavesOf);
      },
    });
    return {
      db,
      shortOnce: (then?: () => Promise<void>) => {
        short = true;
        meanwhile = then;
      },
      live: async (id: string): Promise<string[]> =>
        (await leavesOf(id)).flatMap((l) => {
          const doc: unknown = Reflect.get(Object(l), 'ok');
          return Reflect.get(Object(doc), '_deleted') === true
            ? []
            : [String(Reflect.get(Object(doc), '_rev'))];
        }),
    };
  };
  const refusal = (e: unknown): unknown => Reflect.get(Object(e), 'status');

  it('spreads an update that one copy took to the others, so a stale compare-and-swap is refused', async () => {
    const cluster = threeCopies();
    const db = withQuorumWrites(cluster.db);
    const created = await db.put({ _id: 'volunteer:v', out: null });
    cluster.shortOnce();
    const first = await db.put({ _id: 'volunteer:v', _rev: created.rev, out: 'u-1' });
    // Another writer's copy of the created revision, with a change of its own.
    expect(await db.put({ _id: 'volunteer:v', _rev: created.rev, out: 'u-2' }).catch(refusal)).to.equal(409);
    expect(await cluster.live('volunteer:v')).to.deep.equal([first.rev]);
  });

  it('withdraws a short update when a stale compare-and-swap got in before it spread, and refuses it', async () => {
    // Looked at once, the short update is alone; the other writer's gets in before it is spread.
    const cluster = threeCopies();
    const db = withQuorumWrites(cluster.db);
    const created = await db.put({ _id: 'volunteer:v', out: null });
    let stale: PouchDB.Core.Response | undefined;
    // The other writer's update reaches the two copies that lack this one: its quorum.
    cluster.shortOnce(async () => {
      stale = await db.put({ _id: 'volunteer:v', _rev: created.rev, out: 'u-2' });
    });
    expect(await db.put({ _id: 'volunteer:v', _rev: created.rev, out: 'u-1' }).catch(refusal)).to.equal(409);
    expect(stale?.rev).to.be.a('string');
    expect(await cluster.live('volunteer:v')).to.deep.equal([stale?.rev]);
  });

  it('with a node away, keeps a short update that a stale one got in before it spread, as before', async () => {
    // The other leaf may be short too, its writer withdrawing it on seeing this one: had this one
    // withdrawn too, the document would be left with no live revision.
    const cluster = threeCopies(2);
    const db = withQuorumWrites(cluster.db);
    const created = await db.put({ _id: 'volunteer:v', out: null });
    let stale: PouchDB.Core.Response | undefined;
    cluster.shortOnce(async () => {
      stale = await db.put({ _id: 'volunteer:v', _rev: created.rev, out: 'u-2' });
    });
    const first = await db.put({ _id: 'volunteer:v', _rev: created.rev, out: 'u-1' });
    expect((await cluster.live('volunteer:v')).sort()).to.deep.equal([first.rev, stale?.rev].sort());
  });
});
