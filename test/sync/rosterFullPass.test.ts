/**
 * The roster's full pass reads the students a page at a time and reconciles each page's range of the
 * roster before reading the next. Whatever the roll, the page size and what the roster held before
 * (stale students, photos, classes), the roster it leaves is exactly `rosterDocs` of the whole roll at
 * once. Both backends: the pages' bounds are key ranges of the primary index.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import type { RosterDoc } from '../../src/domain/roster.js';
import { rosterStore } from '../../src/store/roster.js';
import { rosterFullPass } from '../../src/sync/rosterInput.js';
import { countingBodyReads } from '../support/bodyReads.js';
import {
  adultsOf,
  aStudent,
  CLASS_A,
  rosterOf,
  settingsDeps,
  storedRoll,
  wholeRoster,
} from '../support/rosterFixtures.js';
import { type StoreHost, storeBackends } from '../support/storeBackends.js';

const stale = (id: string): RosterDoc => ({
  _id: `student:${id}`,
  docType: 'rosterStudent',
  studentId: id,
  displayName: 'Antigo',
  classId: CLASS_A,
  photoRef: null,
  allergies: null,
  specialNeeds: null,
  visitor: false,
  pickup: [],
});

for (const [backend, setUp] of storeBackends('roster-pass')) {
  describe(`roster full pass on ${backend}: streamed a page at a time, the same roster as the whole at once`, function () {
    this.timeout(120_000);
    let host: StoreHost;
    let n = 0;
    before(async () => {
      host = await setUp();
    });
    after(() => host.dispose());

    it('leaves exactly rosterDocs of the whole roll, whatever the page size and what was there', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(aStudent, { maxLength: 12 }),
          fc.integer({ min: 1, max: 5 }),
          fc.array(
            fc.constantFrom('stale-student', 'stale-photo', 'stale-class', 'after-last', 'stale-family'),
            { maxLength: 4 },
          ),
          fc.integer({ min: 1, max: 3 }),
          async (roll, pageSize, leftovers, familyPageSize) => {
            n += 1;
            const { rosterDb, students, directory, docs, activeConsents, consentsRecorded, thumbnail } =
              await storedRoll((name) => host.open(name), n, roll);
            // What the roster held before: documents no student wants any more, in every range.
            const first = docs[0]?.studentId ?? 'x';
            const before: RosterDoc[] = leftovers.map((what, i) => {
              if (what === 'stale-student') return stale(randomUUID());
              if (what === 'stale-photo')
                return {
                  _id: `photo:${first}`,
                  docType: 'rosterPhoto',
                  studentId: first,
                  photoRef: 'old.jpg',
                  contentType: 'image/jpeg',
                  data: 'old',
                };
              if (what === 'after-last') return stale(`ffffffff-${i}`);
              if (what === 'stale-family')
                return {
                  _id: `family:gone-${i}`,
                  docType: 'rosterFamily',
                  familyKey: `gone-${i}`,
                  guardianName: 'Antiga',
                  phoneSuffix: '0000',
                  studentIds: [],
                  pass: 'old',
                  revoked: [],
                };
              return { _id: `class:gone-${i}`, docType: 'rosterClass', classId: `gone-${i}`, name: 'Gone' };
            });
            if (before.length > 0) await rosterDb.bulkDocs(before.map((d) => ({ ...d })));

            // What each reconcile of family documents was given: at most a page of families.
            const bodies = countingBodyReads(rosterDb);
            const roster = rosterStore(bodies.db);
            let mostFamilies = 0;
            const countingRoster: Pick<typeof roster, 'reconcileRange' | 'keepRangeMemos'> = {
              reconcileRange: (range, desired) => {
                const families = desired.filter((d) => d.docType === 'rosterFamily').length;
                mostFamilies = Math.max(mostFamilies, families);
                return roster.reconcileRange(range, desired);
              },
              keepRangeMemos: (ranges) => roster.keepRangeMemos(ranges),
            };
            const deps = {
              ...settingsDeps,
              students,
              directory: { get: directory.get, activeConsents, consentsRecorded },
              pickups: { allowedAdultsOfAll: adultsOf },
              projections: { eachAspectByDay: async () => undefined },
              roster: countingRoster,
              thumbnail,
              pageSize,
              familyPageSize,
            };
            const pass = rosterFullPass(deps);
            const result = await pass();

            const whole = await wholeRoster(docs, { activeConsents, consentsRecorded, thumbnail });
            expect(await rosterOf(rosterDb)).to.deep.equal(whole);
            // Past one page of students, the families are reconciled a page at a time.
            if (docs.length > pageSize) expect(mostFamilies).to.be.at.most(familyPageSize);
            expect([...result.context.activeIds].sort()).to.deep.equal(
              docs
                .filter((d) => d.status === 'ACTIVE')
                .map((d) => d.studentId)
                .sort(),
            );
            // A second pass over the same records finds nothing to write, from the revisions alone.
            await host.copiesAgree();
            bodies.count = 0;
            expect(await pass()).to.deep.include({ written: 0, deleted: 0 });
            expect(bodies.count, 'roster documents read again').to.equal(0);
            // A document changed by another writer since is put back, one added is taken away.
            const held = (await rosterDb.allDocs({ include_docs: true })).rows.flatMap((r) =>
              r.doc === null || r.doc === undefined || r.id.startsWith('_design/') ? [] : [r.doc],
            );
            const changed = held[Math.floor(held.length / 2)];
            if (changed !== undefined) await rosterDb.put({ ...changed, changedByHand: true });
            await rosterDb.put(stale(`by-hand-${n}`));
            await host.copiesAgree();
            expect(await pass()).to.deep.include({ written: changed === undefined ? 0 : 1, deleted: 1 });
            expect(await rosterOf(rosterDb)).to.deep.equal(whole);
            // After a restart (a new store over the same database), the kept memos serve its first pass.
            await host.copiesAgree();
            const restarted = countingBodyReads(rosterDb);
            const firstAfterStart = rosterFullPass({ ...deps, roster: rosterStore(restarted.db) });
            expect(await firstAfterStart()).to.deep.include({ written: 0, deleted: 0 });
            expect(restarted.count, 'roster documents read after a restart').to.equal(0);
          },
        ),
        { seed: 20261127, numRuns: 20 },
      );
    });
  });
}
