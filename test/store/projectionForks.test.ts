/**
 * Forked projection documents (decision 0038). On a CouchDB cluster two pipelines that commit the
 * same aspect at once on different copies can both land: a write that lost on the quorum (409) may
 * still stand on the one copy that took it, and internal replication then gives the document two live
 * leaves. CouchDB shows the winner only; the events the losing leaf holds are missing from it.
 *
 * A fork is made here as the cluster makes it, a second leaf stored beside the first
 * (`new_edits: false`), on the embedded store and on the CouchDB protocol alike: the store reads a
 * forked aspect as the events of all its live leaves, the commit on it deletes the losing leaves, and
 * the pipeline, told of the fork by the projections' feed, settles it with no new event to project.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { filter, map, Subject } from 'rxjs';
import { quarantineDocId } from '../../src/domain/projection.js';
import { projectAspect } from '../../src/rules/projections.js';
import { docCache } from '../../src/store/docCache.js';
import type { Database } from '../../src/store/pouch.js';
import { aspectChanged, type LoadedAspect, projectionStore } from '../../src/store/projections.js';
import { followChanges$ } from '../../src/sync/changeFeed.js';
import { type EventPipeline, startEventPipeline } from '../../src/sync/pipelineRuntime.js';
import { settleForks } from '../../src/sync/projector.js';
import { attendanceMark } from '../support/attendanceMarks.js';
import { readUntil } from '../support/readUntil.js';
import { type StoreHost, storeBackends } from '../support/storeBackends.js';

const STUDENT = '5c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';
const ASPECT = `attendance:${STUDENT}:2026-11-29`;
const DOC = `aspect:${ASPECT}`;

/** Two marks on the same base (none): a race the ADMIN wins, whichever leaf holds which. */
const byCaller = () => attendanceMark(STUDENT, randomUUID(), 'MARK_ABSENT', 'CHAMADOR', null, 1);
const byAdmin = () => attendanceMark(STUDENT, randomUUID(), 'MARK_PRESENT', 'ADMIN', null, 2);

const Leaves = (doc: unknown): string[] => {
  const conflicts: unknown = Reflect.get(Object(doc), '_conflicts');
  return Array.isArray(conflicts) ? conflicts.filter((c): c is string => typeof c === 'string') : [];
};

for (const [name, host] of storeBackends('projection-forks')) {
  describe(`forked projection documents, on ${name}`, () => {
    let server: StoreHost;
    let db: Database;
    let scratch: Database;
    before(async () => {
      server = await host();
    });
    after(() => server.dispose());
    beforeEach(() => {
      db = server.open(`projections-${randomUUID()}`);
      scratch = server.open(`scratch-${randomUUID()}`);
    });
    afterEach(async () => {
      await db.destroy();
      await scratch.destroy();
    });

    /**
     * The aspect committed with `winner`'s events, and a second leaf of the same generation holding
     * `loser`'s, as internal replication leaves a write that lost on the quorum. CouchDB picks the
     * winner of two leaves of one generation by revision, so which one shows is the store's choice:
     * the test reads it back rather than assuming.
     */
    const fork = async (one: ReturnType<typeof byCaller>, other: ReturnType<typeof byCaller>) => {
      const commitOnly = (target: Database, event: typeof one) =>
        projectionStore(target).commit({
          aspects: [{ projection: projectAspect(ASPECT, 'attendance', [], [event]), rev: undefined }],
          conflicts: [],
          noConflict: [event.eventId],
        });
      expect(await commitOnly(db, one)).to.equal('OK');
      expect(await commitOnly(scratch, other)).to.equal('OK');
      const leaf: Record<string, unknown> = await scratch.get(DOC);
      await db.bulkDocs([leaf], { new_edits: false });
    };

    /** `fork`, read back once every copy holds it (a running pipeline may settle it first: not here). */
    const forked = async (one: ReturnType<typeof byCaller>, other: ReturnType<typeof byCaller>) => {
      await fork(one, other);
      // On a cluster under load the leaf may be acknowledged by one copy only (202), and the reads
      // below (a quorum `get`, a one-copy `_all_docs`) may ask the others: wait until all hold it.
      await server.copiesAgree();
      const shown = await readUntil(
        () => db.get(DOC, { conflicts: true }),
        (d) => Leaves(d).length === 1,
      );
      expect(Leaves(shown), 'two live leaves').to.have.length(1);
      return shown;
    };

    it('reads a forked aspect as the events of all its live leaves', async () => {
      const caller = byCaller();
      const admin = byAdmin();
      const shown = await forked(caller, admin);
      const loaded = (await projectionStore(db).loadAspects([ASPECT])).get(ASPECT);
      expect(loaded?.rev, 'the winner is the revision a commit writes on').to.equal(shown._rev);
      expect(loaded?.events.map((e) => e.eventId).sort()).to.deep.equal(
        [caller.eventId, admin.eventId].sort(),
      );
      expect(loaded?.fork?.revs).to.deep.equal(Leaves(shown));
      expect(loaded?.fork?.winnerEvents).to.have.length(1);
    });

    it('reads an aspect with one leaf as before, with no fork', async () => {
      const caller = byCaller();
      await projectionStore(db).commit({
        aspects: [{ projection: projectAspect(ASPECT, 'attendance', [], [caller]), rev: undefined }],
        conflicts: [],
        noConflict: [caller.eventId],
      });
      const loaded = (await projectionStore(db).loadAspects([ASPECT])).get(ASPECT);
      expect(loaded?.events.map((e) => e.eventId)).to.deep.equal([caller.eventId]);
      expect(loaded?.fork).to.equal(undefined);
    });

    it('settles a fork: one leaf left, holding every event, and the decision only the merge brings', async () => {
      const caller = byCaller();
      const admin = byAdmin();
      await forked(caller, admin);
      const audited: string[] = [];
      const deps = {
        projections: projectionStore(db),
        audit: async (entries: ReadonlyArray<{ readonly entry: { readonly action: string } }>) => {
          for (const e of entries) audited.push(e.entry.action);
        },
      };
      const settled = await settleForks(deps, [ASPECT]);
      expect(settled.aspectsWritten).to.equal(1);
      expect(
        settled.decided.map((c) => [c.winner.eventId, c.loser.eventId]),
        'the race of the two leaves, decided once they meet',
      ).to.deep.equal([[admin.eventId, caller.eventId]]);
      expect(audited).to.deep.equal(['CONFLICT_RESOLVED']);
      const stored = await db.get(DOC, { conflicts: true });
      expect(Leaves(stored), 'the losing leaf is deleted').to.deep.equal([]);
      const events: unknown = Reflect.get(stored, 'events');
      expect(Array.isArray(events) ? events.length : 0).to.equal(2);
      const record = await db.get(`conflict:${caller.eventId}`);
      expect(Reflect.get(record, 'aspect')).to.equal(ASPECT);

      // Settled, it is left alone: a second settle (another instance, the feed again) writes nothing.
      const again = await settleForks(deps, [ASPECT]);
      expect(again.aspectsWritten).to.equal(0);
      expect(audited).to.have.length(1);
    });

    it('deletes the losing leaf of a forked conflict record when its aspect is committed again', async () => {
      const caller = byCaller();
      const admin = byAdmin();
      const both = projectAspect(ASPECT, 'attendance', [], [caller, admin]);
      const store = projectionStore(db);
      const write = {
        aspects: [{ projection: both, rev: undefined }],
        conflicts: both.conflicts,
        noConflict: [],
      };
      expect(await store.commit(write)).to.equal('OK');
      const recordId = `conflict:${caller.eventId}`;
      // The same record as another pipeline wrote it a moment apart: a leaf of the same generation.
      const record: Record<string, unknown> = await db.get(recordId);
      await db.bulkDocs(
        [{ ...record, _rev: `1-${'f'.repeat(32)}`, detectedAt: '2026-11-29T09:01:30.000Z' }],
        {
          new_edits: false,
        },
      );
      // As in `forked`: the leaf may be on one copy only under load; read once every copy holds it.
      await server.copiesAgree();
      const shown = await readUntil(
        () => db.get(recordId, { conflicts: true }),
        (d) => Leaves(d).length === 1,
      );
      expect(Leaves(shown)).to.have.length(1);
      expect(await store.forkedAspects([recordId, DOC, 'quarantine:x'])).to.have.members([ASPECT]);
      await settleForks({ projections: store, audit: async () => undefined }, [ASPECT]);
      // As below for a quarantine record: a deletion one copy has not taken yet can read as the leaf.
      await server.copiesAgree();
      expect(Leaves(await db.get(recordId, { conflicts: true })), 'the losing leaf is deleted').to.deep.equal(
        [],
      );
      expect(await store.forkedAspects([recordId])).to.deep.equal([]);
    });

    it('the aspect cache forgets an aspect whose change shows several leaves, even at the revision it holds', async () => {
      const cache = docCache<LoadedAspect>(10);
      const store = projectionStore(db, cache);
      const caller = byCaller();
      await store.commit({
        aspects: [{ projection: projectAspect(ASPECT, 'attendance', [], [caller]), rev: undefined }],
        conflicts: [],
        noConflict: [caller.eventId],
      });
      const rev = cache.peek(ASPECT)?.rev;
      expect(rev).to.be.a('string');
      aspectChanged(cache, { id: DOC, ...(rev === undefined ? {} : { rev }), leaves: 1 });
      expect(cache.peek(ASPECT)?.rev, 'its own revision, one leaf: kept').to.equal(rev);
      aspectChanged(cache, { id: DOC, ...(rev === undefined ? {} : { rev }), leaves: 2 });
      expect(cache.peek(ASPECT), 'several leaves: forgotten').to.equal(undefined);
    });

    /** The quarantine record of `docId` stored at `hereAt`, and a second leaf at `otherAt`, as two writers leave it. */
    const quarantineTwice = async (docId: string, hereAt: string, otherAt: string) => {
      const found = [{ docId, reason: 'undecodable' }];
      await projectionStore(db).recordQuarantines(found, hereAt);
      await projectionStore(scratch).recordQuarantines(found, otherAt);
      const leaf: Record<string, unknown> = await scratch.get(quarantineDocId(docId));
      await db.bulkDocs([leaf], { new_edits: false });
    };

    describe('a quarantine record two pipelines stored at once', () => {
      const UNREADABLE = 'event:unreadable-1';
      const QDOC = quarantineDocId(UNREADABLE);
      const EARLY = '2026-11-28T10:00:00.000Z';
      const LATE = '2026-11-28T10:00:00.250Z';
      const forkedQuarantine = async (hereAt: string, otherAt: string) => {
        await quarantineTwice(UNREADABLE, hereAt, otherAt);
        await server.copiesAgree();
        const shown = await readUntil(
          () => db.get(QDOC, { conflicts: true }),
          (d) => Leaves(d).length === 1,
        );
        expect(Leaves(shown), 'two live leaves').to.have.length(1);
      };
      const detectedAt = async () => {
        const doc: unknown = await db.get(QDOC, { conflicts: true });
        return { detectedAt: Reflect.get(Object(doc), 'detectedAt'), leaves: Leaves(doc).length };
      };

      for (const [order, hereAt, otherAt] of [
        ['stored here first', EARLY, LATE],
        ['stored by the other writer first', LATE, EARLY],
      ] as const)
        it(`keeps the first detection's leaf alone (${order})`, async () => {
          await forkedQuarantine(hereAt, otherAt);
          expect(await projectionStore(db).settleQuarantineForks([QDOC, DOC])).to.equal(1);
          // A deletion one copy has not taken yet reads as the live leaf it deletes (three nodes: the
          // later detection read back, with the first's leaf as its conflict, right after the settle).
          await server.copiesAgree();
          expect(await detectedAt()).to.deep.equal({ detectedAt: EARLY, leaves: 0 });
          expect(await projectionStore(db).settleQuarantineForks([QDOC]), 'nothing left to settle').to.equal(
            0,
          );
        });
    });

    describe('the pipeline, told of a fork by the feed', () => {
      let pipeline: EventPipeline | undefined;
      afterEach(async () => {
        await pipeline?.stop();
        pipeline = undefined;
      });
      /** A pipeline told of forks by the projections' feed, as the service wires it on CouchDB. */
      const toldByTheFeed = async (events: Database, onForksSettled?: (aspects: number) => void) => {
        const since = (await db.info()).update_seq;
        pipeline = await startEventPipeline({
          events,
          projections: projectionStore(db),
          audit: async () => undefined,
          forked$: followChanges$(db, { since, allLeaves: true }).pipe(
            filter((c) => (c.leaves ?? 1) > 1),
            map((c) => c.id),
          ),
          forkBufferMs: 20,
          ...(onForksSettled === undefined ? {} : { onForksSettled }),
        });
      };

      it('settles it with no new event to project', async () => {
        const events = server.open(`events-${randomUUID()}`);
        try {
          let settledCount = 0;
          await toldByTheFeed(events, (n) => {
            settledCount += n;
          });
          const caller = byCaller();
          const admin = byAdmin();
          await fork(caller, admin);
          const leaves = await readUntil(
            async () => Leaves(await db.get(DOC, { conflicts: true })).length,
            (n) => n === 0,
          );
          expect(leaves, 'the fork was never settled').to.equal(0);
          const loaded = (await projectionStore(db).loadAspects([ASPECT])).get(ASPECT);
          expect(loaded?.events).to.have.length(2);
          expect(settledCount, 'the settle is counted').to.equal(1);
        } finally {
          await events.destroy();
        }
      });

      it('settles a forked quarantine record', async () => {
        const events = server.open(`events-${randomUUID()}`);
        try {
          await toldByTheFeed(events);
          await quarantineTwice('event:unreadable-2', '2026-11-28T10:00:00.000Z', '2026-11-28T10:00:01.000Z');
          const settled = await readUntil(
            async () => Leaves(await db.get(quarantineDocId('event:unreadable-2'), { conflicts: true })),
            (leaves) => leaves.length === 0,
          );
          expect(settled, 'the fork was never settled').to.deep.equal([]);
        } finally {
          await events.destroy();
        }
      });

      it('keeps trying a settle the store refused, until it goes through', async () => {
        const events = server.open(`events-${randomUUID()}`);
        try {
          const real = projectionStore(db);
          let refusals = 8;
          const refusing = {
            ...real,
            forkedAspects: async (ids: ReadonlyArray<string>) => {
              if (refusals > 0) {
                refusals -= 1;
                throw new Error('the store is away');
              }
              return real.forkedAspects(ids);
            },
          };
          const told = new Subject<string>();
          let errors = 0;
          pipeline = await startEventPipeline({
            events,
            projections: refusing,
            audit: async () => undefined,
            forked$: told,
            forkBufferMs: 5,
            retryDelayMs: 5,
            onError: () => {
              errors += 1;
            },
          });
          await forked(byCaller(), byAdmin());
          // Told once: the retries are the pipeline's own.
          told.next(DOC);
          const leaves = await readUntil(
            async () => Leaves(await db.get(DOC, { conflicts: true })).length,
            (n) => n === 0,
          );
          expect(leaves, 'the fork was left once the store refused').to.equal(0);
          expect(errors, 'each refusal reported').to.equal(8);
        } finally {
          await events.destroy();
        }
      });
    });
  });
}
