/**
 * The aspect cache where two pipelines commit the same aspects (two instances on one CouchDB, issue
 * #23): the projections' change feed forgets what the other writer commits, this pipeline's own
 * commits stay cached when the feed brings them back, and a commit decided on a stale cached revision
 * meets a conflict (the retry reads the store) rather than overwriting the other writer. Also: a
 * commit whose aspects have no loser reads no conflict records.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Subscription } from 'rxjs';
import { projectAspect } from '../../src/rules/projections.js';
import { copiesOf } from '../../src/store/copies.js';
import { docCache } from '../../src/store/docCache.js';
import type { Database } from '../../src/store/pouch.js';
import { aspectChanged, type LoadedAspect, projectionStore } from '../../src/store/projections.js';
import { followChanges$ } from '../../src/sync/changeFeed.js';
import { attendanceMark } from '../support/attendanceMarks.js';
import { readUntil } from '../support/readUntil.js';
import { type StoreHost, storeBackends } from '../support/storeBackends.js';

const STUDENT = '0b7e3c1a-4d2f-4e6a-9b8c-5d4e3f2a1b0c';
const ASPECT = `attendance:${STUDENT}:2026-11-29`;

const mark = (
  type: 'MARK_PRESENT' | 'MARK_ABSENT',
  role: 'ADMIN' | 'CHAMADOR',
  base: string | null,
  minute: number,
) => attendanceMark(STUDENT, randomUUID(), type, role, base, minute);

for (const [name, host] of storeBackends('shared-aspect-cache')) {
  describe(`the aspect cache kept by the projections' feed, on ${name}`, () => {
    let server: StoreHost;
    let db: Database;
    let other: Database;
    let following: Subscription | undefined;
    before(async () => {
      server = await host();
    });
    after(() => server.dispose());
    beforeEach(() => {
      const dbName = `projections-${randomUUID()}`;
      db = server.open(dbName);
      // The other instance: its own connection to the same database, uncached.
      other = name.startsWith('embedded') ? db : server.open(dbName);
    });
    afterEach(async () => {
      following?.unsubscribe();
      following = undefined;
      await db.destroy();
    });

    const cached = async () => {
      const cache = docCache<LoadedAspect>(100);
      // The documents the feed has told the cache of, each once the cache has taken it.
      const told: string[] = [];
      following = followChanges$(db, { since: (await db.info()).update_seq }).subscribe((c) => {
        aspectChanged(cache, c);
        told.push(c.id);
      });
      return { cache, told, store: projectionStore(db, cache) };
    };
    const first = mark('MARK_PRESENT', 'CHAMADOR', null, 0);
    const second = mark('MARK_ABSENT', 'CHAMADOR', first.eventId, 1);

    /** This store commits the first version and holds it; the other instance commits the next one. */
    const committedOverByTheOther = async (store: ReturnType<typeof projectionStore>) => {
      const one = projectAspect(ASPECT, 'attendance', [], [first]);
      const onlyAspect = (projection: typeof one, rev: string | undefined) => ({
        aspects: [{ projection, rev }],
        conflicts: [],
        noConflict: [],
      });
      expect(await store.commit(onlyAspect(one, undefined))).to.equal('OK');
      const held = (await store.loadAspects([ASPECT])).get(ASPECT);
      expect(held?.events.map((e) => e.eventId)).to.deep.equal([first.eventId]);
      const two = projectAspect(ASPECT, 'attendance', one.events, [second]);
      expect(await projectionStore(other).commit(onlyAspect(two, held?.rev))).to.equal('OK');
      const third = mark('MARK_PRESENT', 'CHAMADOR', first.eventId, 2);
      return { held, stale: onlyAspect(projectAspect(ASPECT, 'attendance', one.events, [third]), held?.rev) };
    };

    it("reads the other writer's commit once the feed tells it", async () => {
      const { store } = await cached();
      await committedOverByTheOther(store);
      const seen = await readUntil(
        async () => (await store.loadAspects([ASPECT])).get(ASPECT)?.events.length,
        (n) => n === 2,
      );
      expect(seen, "the other writer's version was never read").to.equal(2);
    });

    it('meets a conflict when it commits on a stale cached revision, and then reads the store', async () => {
      // No feed at all: the cache is as stale as it can be.
      const store = projectionStore(db, docCache<LoadedAspect>(100));
      const { stale } = await committedOverByTheOther(store);
      expect((await store.loadAspects([ASPECT])).get(ASPECT)?.events.length, 'still cached').to.equal(1);
      const outcome = await store.commit(stale);
      if (outcome === 'CONFLICT') {
        expect((await store.loadAspects([ASPECT])).get(ASPECT)?.events.length).to.equal(2);
        return;
      }
      // A cluster under load may answer the other writer's commit 202 (one copy took it): the stale
      // commit then reaches the quorum on the copies still at the first revision, and the aspect
      // forks, which its reader merges (decision 0038). Nowhere else may the stale commit pass.
      expect(await copiesOf(db), `the stale commit answered ${outcome}`).to.be.greaterThan(1);
      const merged = await readUntil(
        async () => (await projectionStore(db).loadAspects([ASPECT])).get(ASPECT)?.events.length,
        (n) => n === 3,
      );
      expect(merged, 'the forked aspect read as the events of both leaves').to.equal(3);
    });

    it('keeps its own commit cached when the feed brings it back', async () => {
      const { cache, told, store } = await cached();
      const one = projectAspect(ASPECT, 'attendance', [], [first]);
      expect(
        await store.commit({ aspects: [{ projection: one, rev: undefined }], conflicts: [], noConflict: [] }),
      ).to.equal('OK');
      const rev = cache.peek(ASPECT)?.rev;
      expect(rev).to.be.a('string');
      // Until the cache's own feed has told it of the aspect. (Not inferred from another document's
      // change on another feed: a cluster's feed merges its shards in no fixed order.)
      const seen = await readUntil(
        async () => told.includes(`aspect:${ASPECT}`),
        (yes) => yes,
      );
      expect(seen, 'the feed never told the commit').to.equal(true);
      expect(cache.peek(ASPECT)?.rev, 'forgotten although it held the revision the feed reported').to.equal(
        rev,
      );
    });

    it('reads no conflict records for aspects without a loser, and reads them when there is one', async () => {
      const store = projectionStore(db);
      const allDocs = db.allDocs;
      let keyedReads = 0;
      db.allDocs = ((...args: Parameters<typeof allDocs>) => {
        const [options] = args;
        if (options !== undefined && 'keys' in options) keyedReads += 1;
        return allDocs.apply(db, args);
      }) as typeof allDocs;
      try {
        const one = projectAspect(ASPECT, 'attendance', [], [first, second]);
        expect(one.conflicts).to.have.length(0);
        await store.commit({
          aspects: [{ projection: one, rev: undefined }],
          conflicts: [],
          noConflict: [first.eventId, second.eventId],
        });
        expect(keyedReads, 'no loser, no read').to.equal(0);
        const rival = mark('MARK_PRESENT', 'ADMIN', first.eventId, 3);
        const two = projectAspect(ASPECT, 'attendance', one.events, [rival]);
        expect(two.conflicts).to.have.length(1);
        const rev = (await db.get(`aspect:${ASPECT}`))._rev;
        await store.commit({
          aspects: [{ projection: two, rev }],
          conflicts: two.conflicts,
          noConflict: [first.eventId, rival.eventId],
        });
        expect(keyedReads, 'a loser: its record is compared with the stored one').to.equal(1);
      } finally {
        db.allDocs = allDocs;
      }
    });
  });
}
