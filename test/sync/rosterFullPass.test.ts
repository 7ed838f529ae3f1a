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
import { familyPages, packMember, rosterFullPass, unpackMember } from '../../src/sync/rosterInput.js';
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

describe("roster full pass: the family members held packed until the families' pages", () => {
  // Family keys are 22 characters (a slice of an HMAC in base64url); the rest is any text a record holds.
  const aKey = fc.stringMatching(/^[A-Za-z0-9_-]{22}$/);
  const aMember = fc.record({
    familyKey: aKey,
    phoneSuffix: fc.stringMatching(/^[0-9]{4}$/),
    studentId: fc.oneof(fc.uuid(), fc.string({ unit: 'grapheme-ascii', minLength: 1 })),
    // Lone surrogates and NULs included: a guardian's name is whatever the record was given.
    guardianName: fc.string({ unit: 'binary' }),
  });

  it('gives back each member exactly as it was packed', () => {
    fc.assert(
      fc.property(aMember, (m) => {
        expect(unpackMember(packMember(m))).to.deep.equal(m);
      }),
      { seed: 20261201, numRuns: 500 },
    );
  });

  it('pages the packed members in family key order, a family never split, every family id covered', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat({ max: 6 }), aMember), { maxLength: 30 }),
        fc.integer({ min: 1, max: 4 }),
        (drawn, familyPage) => {
          // A few families of several members each: keys drawn from a small set.
          const keys = [...new Set(drawn.map(([, m]) => m.familyKey))];
          const members = drawn.map(([k, m]) => ({ ...m, familyKey: keys[k % keys.length] ?? m.familyKey }));
          const pages = familyPages(members.map(packMember).sort(), familyPage);
          const paged = pages.flatMap((p) => p.members);
          expect(paged.map((m) => m.familyKey)).to.deep.equal(members.map((m) => m.familyKey).sort());
          expect([...paged].sort(byAll)).to.deep.equal([...members].sort(byAll));
          const pageOfFamily = new Map<string, number>();
          for (const [i, page] of pages.entries()) {
            expect(new Set(page.members.map((m) => m.familyKey)).size).to.be.at.most(familyPage);
            for (const m of page.members) {
              expect(pageOfFamily.get(m.familyKey) ?? i, 'a family on one page').to.equal(i);
              pageOfFamily.set(m.familyKey, i);
              const id = `family:${m.familyKey}`;
              expect(id >= page.range.from && (page.range.to === undefined || id < page.range.to)).to.equal(
                true,
              );
            }
          }
          // The ranges follow one another from the first family id to past the last.
          expect(pages[0]?.range.from).to.equal('family:');
          expect(pages.at(-1)?.range.to).to.equal('family;');
          for (let i = 1; i < pages.length; i += 1)
            expect(pages[i]?.range.from).to.equal(pages[i - 1]?.range.to);
        },
      ),
      { seed: 20261201, numRuns: 300 },
    );
  });
});

const byAll = (a: object, b: object): number => {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
};
