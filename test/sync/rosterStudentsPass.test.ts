/**
 * The roster's students' pass (issue #41): after some active students' records change and new ones
 * arrive, it leaves the roster a full pass would, reading only those students and the families they
 * were or are in. Whatever changed (a name, allergies, a guardian, a phone that moves a child to
 * another family or into a second one) and whatever the page size, the roster it leaves is exactly
 * `rosterDocs` of the whole roll at once; a student deleted or not found asks for the full pass and
 * writes nothing. Both backends.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { type AspectDoc, aspectDocId } from '../../src/domain/projection.js';
import { RosterFamily } from '../../src/domain/roster.js';
import { projectionOfDoc } from '../../src/store/projections.js';
import { rosterStore } from '../../src/store/roster.js';
import { toRecord } from '../../src/store/students.js';
import { rosterFullPass, rosterStudentsPass } from '../../src/sync/rosterInput.js';
import {
  type AStudent,
  adultsOf,
  aStudent,
  NOW,
  PHONES,
  rosterOf,
  sessions,
  settingsDeps,
  storedRoll,
  wholeRoster,
} from '../support/rosterFixtures.js';
import { type StoreHost, storeBackends } from '../support/storeBackends.js';

/** A change to an active student's record; null keeps the field as it was. */
const aChange = fc.record({
  pick: fc.nat(),
  name: fc.constantFrom(null, 'Eva', 'Fábio'),
  allergies: fc.constantFrom(null, 'leite'),
  guardian: fc.constantFrom(null, 'Joana Lima', 'Rita'),
  phone: fc.constantFrom(null, ...PHONES),
  secondPhone: fc.constantFrom(null, ...PHONES),
});

/** A check-in at the roster's first session, as the pipeline stores its aspect. */
const checkedIn = (studentId: string): AspectDoc => {
  const sessionId = sessions[0]?.sessionId ?? 'none';
  const aspect = `checkin:${sessionId}:${studentId}`;
  return {
    _id: aspectDocId(aspect),
    _rev: '1-a',
    docType: 'aspect',
    aspect,
    kind: 'checkin',
    subjectId: studentId,
    sessionId,
    day: NOW.toISOString().slice(0, 10),
    events: [
      {
        eventId: randomUUID(),
        type: 'CHECK_IN',
        baseVersion: null,
        subjectId: studentId,
        userId: 'u-1',
        role: 'VOLUNTEER',
        deviceId: 'tablet-1',
        clientTimestamp: NOW.toISOString(),
        serverTimestamp: NOW.toISOString(),
        payload: { checkInId: randomUUID(), sessionId, visitor: true },
      },
    ],
    applied: [],
    superseded: [],
    waiting: [],
    version: null,
    state: null,
  };
};

for (const [backend, setUp] of storeBackends('roster-students-pass')) {
  describe(`roster students' pass on ${backend}: the roster a full pass would leave, from the changed students alone`, function () {
    this.timeout(120_000);
    let host: StoreHost;
    let n = 0;
    before(async () => {
      host = await setUp();
    });
    after(() => host.dispose());

    const setUpRoll = (roll: ReadonlyArray<AStudent>) => {
      n += 1;
      return storedRoll((name) => host.open(name), n, roll);
    };
    /** What the passes read, over `r`'s roll. */
    const depsOf = (r: Awaited<ReturnType<typeof setUpRoll>>) => ({
      ...settingsDeps,
      students: r.students,
      directory: {
        get: r.directory.get,
        activeConsents: r.activeConsents,
        consentsRecorded: r.consentsRecorded,
      },
      pickups: { allowedAdultsOfAll: adultsOf },
      projections: { eachAspectByDay: async () => undefined },
      roster: rosterStore(r.rosterDb),
      thumbnail: r.thumbnail,
    });
    /** One active child with the phone `phone` and nothing else on record. */
    const aChild = (name: AStudent['name'], phone: AStudent['phone']): AStudent => ({
      name,
      active: true,
      photo: false,
      consented: false,
      thumbnail: false,
      allergies: null,
      visitor: false,
      phone,
      birthDate: null,
      consentsEver: 0,
      classB: false,
    });

    it('leaves exactly rosterDocs of the whole roll after changes and new students, whatever the page size', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(aStudent, { maxLength: 10 }),
          fc.array(aChange, { maxLength: 5 }),
          fc.array(aStudent, { maxLength: 4 }),
          fc.boolean(),
          fc.integer({ min: 1, max: 3 }),
          async (roll, changes, arriving, checkedInFirst, pageSize) => {
            const r = await setUpRoll(roll);
            // A new child the tablets checked in before the server knew it (a visitor offline).
            const aspects: AspectDoc[] = [];
            const projections = {
              eachAspectByDay: async (
                kind: string,
                _from: string,
                _to: string,
                visit: (d: AspectDoc) => void,
              ) => {
                for (const a of aspects) if (a.kind === kind) visit(a);
              },
            };
            const deps = { ...depsOf(r), projections };
            const newcomers = arriving.map((s) => ({ ...s, active: true }));
            const firstNewId = randomUUID();
            if (checkedInFirst && newcomers.length > 0) aspects.push(checkedIn(firstNewId));
            const { context } = await rosterFullPass({ ...deps, pageSize })();

            const changed = new Set<string>();
            const now = new Map(r.docs.map((d) => [d.studentId, d]));
            const active = r.docs.filter((d) => d.status === 'ACTIVE');
            for (const c of changes) {
              const target = active[c.pick % Math.max(1, active.length)];
              if (target === undefined) break;
              const current = now.get(target.studentId) ?? target;
              const record = toRecord(current);
              const phones = [
                ...(c.phone === null ? record.phones : [{ number: c.phone, qualifier: 'mãe' }]),
                ...(c.secondPhone === null ? [] : [{ number: c.secondPhone, qualifier: 'pai' }]),
              ];
              const next = await r.students.update(current, {
                ...record,
                displayName: c.name ?? record.displayName,
                allergies: c.allergies ?? record.allergies,
                guardianName: c.guardian ?? record.guardianName,
                phones,
              });
              if (next === 'CONFLICT') throw new Error('no one else writes here');
              now.set(next.studentId, next);
              changed.add(next.studentId);
            }
            for (const [i, s] of newcomers.entries()) {
              // The first newcomer has the id its check-in named.
              const doc = await r.add(s, i === 0 ? firstNewId : randomUUID());
              now.set(doc.studentId, doc);
              changed.add(doc.studentId);
            }

            const result = await rosterStudentsPass({ ...deps, pageSize })([...changed], context);
            expect(result, 'a pass of active students needs no full one').to.not.equal(undefined);
            const all = [...now.values()];
            const projected = aspects.flatMap((a) => {
              const p = projectionOfDoc(a);
              return p === undefined ? [] : [{ version: p.version, state: p.state }];
            });
            const whole = await wholeRoster(all, {
              activeConsents: r.activeConsents,
              consentsRecorded: r.consentsRecorded,
              thumbnail: r.thumbnail,
              aspects: projected,
            });
            expect(await rosterOf(r.rosterDb)).to.deep.equal(whole);
            expect([...(result?.context.activeIds ?? [])].sort()).to.deep.equal(
              all
                .filter((d) => d.status === 'ACTIVE')
                .map((d) => d.studentId)
                .sort(),
            );
            // Run again over the same records, it finds nothing to write.
            expect(await rosterStudentsPass(deps)([...changed], result?.context ?? context)).to.deep.include({
              written: 0,
              deleted: 0,
            });
          },
        ),
        { seed: 20261130, numRuns: 25 },
      );
    });

    it('asks for the full pass, and writes nothing, when a student is deleted or not found', async () => {
      const r = await setUpRoll([aChild('Ana', PHONES[0]), aChild('Bia', PHONES[0])]);
      const deps = depsOf(r);
      const { context } = await rosterFullPass(deps)();
      const [ana, bia] = r.docs;
      if (ana === undefined || bia === undefined) throw new Error('two students');
      const before = await rosterOf(r.rosterDb);
      // Ana renamed and Bia deleted: Bia's aspects and her place in the family are not this pass's.
      const renamed = await r.students.update(ana, { ...toRecord(ana), displayName: 'Ana Clara' });
      const deleted = await r.students.update(bia, { ...toRecord(bia), status: 'DELETED' });
      expect([renamed, deleted]).to.not.include('CONFLICT');
      const pass = rosterStudentsPass(deps);
      expect(await pass([ana.studentId, bia.studentId], context)).to.equal(undefined);
      expect(await pass([ana.studentId, randomUUID()], context)).to.equal(undefined);
      expect(await rosterOf(r.rosterDb)).to.deep.equal(before);
    });

    it('asks for the full pass when another writer changed a family after the pass read it', async () => {
      const r = await setUpRoll([aChild('Ana', PHONES[1])]);
      const deps = depsOf(r);
      const roster = deps.roster;
      const { context } = await rosterFullPass(deps)();
      const newcomer = await r.add(aChild('Bia', PHONES[1]));
      // Another instance writes the family (a third sibling it knows of) between this pass's read
      // of it and its write.
      const familiesHeld = async () =>
        (await rosterOf(r.rosterDb)).flatMap((d) => {
          const f = RosterFamily.decode(d);
          return E.isRight(f) ? [f.right] : [];
        });
      const familyId = (await familiesHeld())[0]?._id;
      expect(familyId, 'the siblings’ family').to.be.a('string');
      const racing = {
        ...roster,
        async stored(ids: ReadonlyArray<string>) {
          const read = await roster.stored(ids);
          const family = familyId === undefined ? undefined : read.get(familyId);
          if (family !== undefined)
            await r.rosterDb.put({
              ...family.doc,
              _id: familyId ?? '',
              _rev: family.rev,
              studentIds: ['someone'],
            });
          return read;
        },
      };
      expect(await rosterStudentsPass({ ...deps, roster: racing })([newcomer.studentId], context)).to.equal(
        undefined,
      );
      // The full pass it asks for leaves the family the records give.
      await rosterFullPass(deps)();
      expect((await familiesHeld()).map((f) => [...f.studentIds].sort())).to.deep.equal([
        [r.docs[0]?.studentId, newcomer.studentId].sort(),
      ]);
    });
  });
}
