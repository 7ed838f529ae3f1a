import { expect } from 'chai';
import { firstValueFrom, take } from 'rxjs';
import { type Database, PouchDB } from '../../src/store/pouch.js';
import { type Change, ChangeFeedEndedError, changes$, followChanges$ } from '../../src/sync/changeFeed.js';
import { figure } from '../reliability/figures.js';
import { realCouchNodes, startExpressPouchDB } from '../support/couchServer.js';
import { readUntil } from '../support/readUntil.js';
import { type StoreHost, storeBackends } from '../support/storeBackends.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * How long a change may take to be told. On a cluster the feed is served by one copy of each shard,
 * and a write is acknowledged once two copies took it: the copy the feed follows may take it later,
 * from its own write request or from internal replication, which on a loaded machine has lagged past
 * 10 s (a deletion read back as live that long, reliability.md). So the same bound as the tests'
 * wait for the copies to agree; on one copy the change is told at once.
 */
const FEED_WAIT_MS = realCouchNodes() > 1 ? 60_000 : 5_000;

/**
 * Waits until `seen` holds `count` changes (the feed is live: it never completes by itself). Past the
 * bound it fails with what the feed told, how long it waited, and what a one-shot read of `db`'s
 * changes lists: a document listed there and not told is a feed that missed it, not one that lagged.
 */
const until = async (seen: ReadonlyArray<Change>, count: number, db?: Database): Promise<void> => {
  const started = Date.now();
  while (seen.length < count && Date.now() - started < FEED_WAIT_MS) await sleep(25);
  const waited = Date.now() - started;
  if (seen.length >= count) {
    if (waited > 5_000) figure('change-feed-wait', `${count} changes told after ${waited} ms`);
    return;
  }
  const told = seen.map((c) => `${c.id} (seq ${String(c.seq).slice(0, 16)})`).join(', ');
  const listed =
    db === undefined ? 'not read' : (await db.changes({ since: 0 })).results.map((r) => r.id).join(', ');
  expect.fail(
    `${seen.length} of ${count} changes told in ${waited} ms: [${told}]; one-shot _changes: [${listed}]`,
  );
};

/** The documents `untilListening` writes, kept apart from what a test compares. */
const isProbe = (c: Change): boolean => c.id.startsWith('listening-');

/**
 * Waits until a feed started `since: 'now'` is listening: `now` is fixed when its request reaches the
 * server, and a write made before then is never told (a CI run on three nodes under load: the first
 * 20 of a burst written 100 ms after the subscription, those of one shard, missing). So a probe
 * document is written, and another every second, until the feed tells one: everything written after
 * that probe is after `now`. A change may lag on a cluster, hence the bound of the other waits.
 */
const untilListening = async (probes: ReadonlyArray<Change>, db: Database): Promise<void> => {
  const started = Date.now();
  for (let k = 0; probes.length === 0; k += 1) {
    if (Date.now() - started > FEED_WAIT_MS) expect.fail(`the feed told none of ${k} probes`);
    await db.put({ _id: `listening-${k}` });
    const wrote = Date.now();
    while (probes.length === 0 && Date.now() - wrote < 1_000) await sleep(25);
  }
};

for (const [label, host] of storeBackends('feed')) {
  describe(`change feed observable (${label})`, () => {
    let store: StoreHost;
    let db: Database;
    let n = 0;
    before(async () => {
      store = await host();
    });
    after(async () => {
      await store.dispose();
    });
    beforeEach(() => {
      n += 1;
      db = store.open(`feed-${Date.now()}-${n}`);
    });
    afterEach(async () => {
      await db.destroy();
    });

    it('replays existing documents and then follows new ones, with their sequence', async () => {
      await db.put({ _id: 'a' });
      const seen: Change[] = [];
      const subscription = changes$(db, { includeDocs: true }).subscribe((c) => seen.push(c));
      try {
        // 'b' is written only once the replay has told 'a': a cluster's feed merges its shards in
        // no fixed order, so two documents already stored when the feed starts may come either way.
        await until(seen, 1, db);
        await db.put({ _id: 'b', n: 1 });
        await until(seen, 2, db);
      } finally {
        subscription.unsubscribe();
      }
      expect(seen.map((c) => c.id)).to.deep.equal(['a', 'b']);
      expect(seen[1]?.doc).to.deep.include({ _id: 'b', n: 1 });
      expect(seen.every((c) => c.seq !== undefined)).to.equal(true);
    });

    it('resumes after a given sequence without replaying earlier documents', async () => {
      const first = await db.put({ _id: 'a' });
      // On a cluster the sequence names the copy of each shard it was read from: once every copy
      // holds 'a', whichever copy it names is past it.
      await store.copiesAgree();
      const info = await db.info();
      await db.put({ _id: 'b' });
      const next = await firstValueFrom(changes$(db, { since: info.update_seq }).pipe(take(1)));
      expect(first.id).to.equal('a');
      expect(next.id).to.equal('b');
    });

    it('reports deletions as deleted changes, with the revision each change made', async () => {
      const put = await db.put({ _id: 'gone' });
      const removed = await db.remove('gone', put.rev);
      // The feed is served by one copy of each shard: on a cluster a copy that lags tells the document's
      // creation first (a CI run read it so 500 ms after the copies' internal replication was idle), so
      // the feed is read again until it tells the deletion's revision.
      const change = await readUntil(
        () => firstValueFrom(changes$(db).pipe(take(1))),
        (c) => c.rev === removed.rev,
        FEED_WAIT_MS,
      );
      expect(change).to.deep.include({ id: 'gone', deleted: true, rev: removed.rev });
    });

    it('leaves out the documents unless asked for them', async () => {
      await db.put({ _id: 'bare', secret: 'x' });
      const change = await firstValueFrom(changes$(db).pipe(take(1)));
      expect(change.id).to.equal('bare');
      expect(change.doc).to.equal(undefined);
    });

    it('counts every leaf of a forked document when asked to', async () => {
      await db.bulkDocs(
        [
          { _id: 'forked', _rev: '1-aaaa', n: 1 },
          { _id: 'forked', _rev: '1-bbbb', n: 2 },
        ],
        { new_edits: false },
      );
      const plain = await firstValueFrom(changes$(db).pipe(take(1)));
      // Likewise a lagging copy may hold one of the two leaves yet.
      const all = await readUntil(
        () => firstValueFrom(changes$(db, { allLeaves: true }).pipe(take(1))),
        (c) => c.leaves === 2,
        FEED_WAIT_MS,
      );
      expect(plain.leaves).to.equal(undefined);
      expect(all.leaves).to.equal(2);
    });

    it('stops the live feed when unsubscribed, so nothing arrives after teardown', async () => {
      const seen: Change[] = [];
      const probes: Change[] = [];
      const subscription = changes$(db, { since: 'now' }).subscribe((c) =>
        (isProbe(c) ? probes : seen).push(c),
      );
      await untilListening(probes, db);
      await db.put({ _id: 'during' });
      await until(seen, 1);
      subscription.unsubscribe();
      await db.put({ _id: 'after' });
      await sleep(200);
      expect(seen.map((c) => c.id)).to.deep.equal(['during']);
    });

    it('tells a burst of writes in order, each once', async () => {
      const seen: Change[] = [];
      const probes: Change[] = [];
      const subscription = followChanges$(db, { since: 'now' }).subscribe((c) =>
        (isProbe(c) ? probes : seen).push(c),
      );
      try {
        await untilListening(probes, db);
        const ids = Array.from({ length: 60 }, (_, i) => `doc-${String(i).padStart(3, '0')}`);
        for (let i = 0; i < ids.length; i += 20)
          await db.bulkDocs(ids.slice(i, i + 20).map((_id) => ({ _id })));
        await until(seen, ids.length);
        await sleep(100);
        expect(seen.map((c) => c.id).sort()).to.deep.equal(ids);
      } finally {
        subscription.unsubscribe();
      }
    });
  });
}

describe('a change feed over HTTP across a server restart (express-pouchdb)', () => {
  it('reconnects from the last change it told: each change once, none lost', async () => {
    const server = await startExpressPouchDB();
    const db = new PouchDB(`${server.url}/restarted`);
    const seen: Change[] = [];
    const probes: Change[] = [];
    const retries: unknown[] = [];
    const subscription = followChanges$(db, {
      since: 'now',
      maxBackoffMs: 200,
      onRetry: (_attempt, error) => retries.push(error),
    }).subscribe((c) => (isProbe(c) ? probes : seen).push(c));
    try {
      await untilListening(probes, db);
      await db.put({ _id: 'before' });
      await until(seen, 1);
      await server.stop();
      await server.restart();
      await db.put({ _id: 'after' });
      await until(seen, 2);
      await sleep(300);
      expect(seen.map((c) => c.id)).to.deep.equal(['before', 'after']);
      expect(retries, 'the feed was cut and taken up again').to.have.length.at.least(1);
    } finally {
      subscription.unsubscribe();
      await server.dispose();
    }
  });
});

describe('a change feed over HTTP that is refused', () => {
  it('fails with the database named without the password of its address', async () => {
    const db = new PouchDB('http://admin:s3cret-pass@127.0.0.1:9/chamada_private', { skip_setup: true });
    // The server's answer, without a server: 401, as to a wrong password.
    Object.assign(db, { fetch: async () => new Response(null, { status: 401 }) });
    const error: unknown = await firstValueFrom(changes$(db)).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(ChangeFeedEndedError);
    expect(String(error))
      .to.include('chamada_private')
      .and.include('HTTP 401')
      .and.not.include('s3cret-pass');
  });
});
