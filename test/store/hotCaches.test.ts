/**
 * The read caches of the check-in path (students and check-in records), on a real
 * embedded store: whatever mix of concurrent writes ran through a cached store, every read through it
 * afterwards equals a read of the store itself. A stale entry would show as a difference here, or as a
 * compare-and-swap retry loop that never ends (a conflict must make the next read go to the store).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import type { CheckinStatus } from '../../src/domain/checkin.js';
import type { StudentDoc, StudentRecord } from '../../src/domain/student.js';
import { type CheckinStore, checkinStore, type ProjectedCheckin } from '../../src/store/checkins.js';
import { docCache } from '../../src/store/docCache.js';
import { type StudentStore, studentStore, toRecord } from '../../src/store/students.js';
import { aStudentRecord } from '../support/fixtures.js';
import { embeddedStore } from '../support/storeBackends.js';

const AT = '2026-03-01T12:00:00.000Z';

const record = (studentId: string, displayName: string): StudentRecord =>
  aStudentRecord({ studentId, displayName, guardianName: 'Maria', createdAt: AT, updatedAt: AT });

const projected = (checkInId: string, studentId: string, status: CheckinStatus): ProjectedCheckin => ({
  checkInId,
  studentId,
  sessionId: 'session-1',
  code: 'ABC123',
  checkedInAt: AT,
  checkedInBy: 'user-1',
  status,
  checkedOutAt: status === 'CHECKED_IN' ? null : AT,
  checkedOutBy: status === 'CHECKED_IN' ? null : 'user-1',
  pickupPerson: status === 'CHECKED_IN' ? null : 'Maria',
  emergency: false,
  justification: null,
});

describe('read caches of the check-in path, against the store', function () {
  this.timeout(120_000);
  const store = embeddedStore('hotcache');

  it('student records: cached reads equal store reads after concurrent creates, updates and field writes', async () => {
    const studentOp = fc.oneof(
      fc.record({
        kind: fc.constant('update' as const),
        who: fc.nat(2),
        name: fc.constantFrom('Ana', 'Bia', 'Caio'),
      }),
      fc.record({
        kind: fc.constant('field' as const),
        who: fc.nat(2),
        allergies: fc.constantFrom(null, 'amendoim', 'leite'),
      }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(studentOp, { maxLength: 4 }), { minLength: 1, maxLength: 4 }),
        async (rounds) => {
          const cached: StudentStore = studentStore(store().db.private, docCache());
          const plain: StudentStore = studentStore(store().db.private);
          const ids = [randomUUID(), randomUUID(), randomUUID()];
          await Promise.all(ids.map((id) => cached.create(record(id, 'Início'))));
          for (const ops of rounds) {
            // Each round's writes race one another, as concurrent requests and the pipeline do.
            await Promise.all(
              ops.map(async (op) => {
                const id = ids[op.who] ?? '';
                if (op.kind === 'field') return cached.applyField(id, 'allergies', op.allergies, AT);
                const current = await cached.get(id);
                if (current === undefined) throw new Error('created student vanished');
                const { _id: _i, _rev: _r, docType: _d, ...rest } = current;
                return cached.update(current, { ...rest, displayName: op.name });
              }),
            );
            for (const id of ids) expect(await cached.get(id)).to.deep.equal(await plain.get(id));
            const many = await cached.getMany(ids);
            expect([...many.values()]).to.deep.equal([...(await plain.getMany(ids)).values()]);
          }
        },
      ),
      { seed: 20261126, numRuns: 25 },
    );
  });

  it('student records: a cache smaller than the roll returns what the store holds, whatever it dropped', async () => {
    // Five students through a cache of two: most reads miss, and entries are dropped between writes.
    const op = fc.oneof(
      fc.record({ kind: fc.constant('read' as const), who: fc.nat(4) }),
      fc.record({
        kind: fc.constant('update' as const),
        who: fc.nat(4),
        name: fc.constantFrom('Ana', 'Bia'),
      }),
      fc.record({
        kind: fc.constant('field' as const),
        who: fc.nat(4),
        allergies: fc.constantFrom(null, 'amendoim'),
      }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(op, { maxLength: 5 }), { minLength: 1, maxLength: 4 }),
        async (rounds) => {
          const cache = docCache<StudentDoc>(2);
          const cached: StudentStore = studentStore(store().db.private, cache);
          const plain: StudentStore = studentStore(store().db.private);
          const ids = Array.from({ length: 5 }, () => randomUUID());
          await Promise.all(ids.map((id) => cached.create(record(id, 'Início'))));
          for (const ops of rounds) {
            await Promise.all(
              ops.map(async (o) => {
                const id = ids[o.who] ?? '';
                if (o.kind === 'read') return cached.get(id);
                if (o.kind === 'field') return cached.applyField(id, 'allergies', o.allergies, AT);
                const current = await cached.get(id);
                if (current === undefined) throw new Error('created student vanished');
                return cached.update(current, { ...toRecord(current), displayName: o.name });
              }),
            );
            expect(cache.size()).to.be.at.most(2);
            for (const id of ids) expect(await cached.get(id)).to.deep.equal(await plain.get(id));
          }
        },
      ),
      { seed: 20261127, numRuns: 25 },
    );
  });

  it('check-in records: cached reads equal store reads after concurrent projections and failed attempts', async () => {
    const checkinOp = fc.oneof(
      fc.record({
        kind: fc.constant('project' as const),
        which: fc.nat(1),
        status: fc.constantFrom<CheckinStatus>('CHECKED_IN', 'CHECKED_OUT', 'SUPERSEDED'),
      }),
      fc.record({ kind: fc.constant('fail' as const), which: fc.nat(1) }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(checkinOp, { maxLength: 4 }), { minLength: 1, maxLength: 4 }),
        async (rounds) => {
          const cached: CheckinStore = checkinStore(store().db.private, {
            records: docCache(),
            config: docCache(),
          });
          const plain: CheckinStore = checkinStore(store().db.private);
          const studentId = randomUUID();
          const ids = [randomUUID(), randomUUID()];
          // Fresh ids, as the check-in service mints them: the cache knows they have no record yet.
          for (const id of ids) cached.minted(id);
          let failures = 0;
          for (const ops of rounds) {
            await Promise.all(
              ops.map(async (op) => {
                const checkInId = ids[op.which] ?? '';
                if (op.kind === 'project')
                  return cached.applyProjected(projected(checkInId, studentId, op.status));
                // An attempt on a record read through the cache: a stale one would lose its count.
                for (let tries = 0; tries < 20; tries += 1) {
                  const current = await cached.get(checkInId);
                  if (current === undefined) return undefined;
                  if ((await cached.countFailure(current)) !== 'CONFLICT') {
                    failures += 1;
                    return undefined;
                  }
                }
                throw new Error('a failed attempt was never counted');
              }),
            );
            for (const id of ids) expect(await cached.get(id)).to.deep.equal(await plain.get(id));
          }
          const counted = (await Promise.all(ids.map((id) => plain.get(id)))).reduce(
            (n, c) => n + (c?.failedAttempts ?? 0),
            0,
          );
          expect(counted).to.equal(failures);
        },
      ),
      { seed: 20261126, numRuns: 25 },
    );
  });

  it('with no record cache (CouchDB), a minted record is created with no read, and one another writer created first is read, not overwritten', async () => {
    let gets = 0;
    const db = store().db.private;
    const counting = new Proxy(db, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]): unknown => {
          if (prop === 'get') gets += 1;
          return Reflect.apply(value, target, args);
        };
      },
    });
    const here = checkinStore(counting);
    const studentId = randomUUID();
    const mine = randomUUID();
    here.minted(mine);
    expect(await here.applyProjected(projected(mine, studentId, 'CHECKED_IN'))).to.equal('written');
    expect(gets, 'reads of a minted record').to.equal(0);
    const stored = await checkinStore(db).get(mine);
    expect(here.lastWritten(mine)).to.deep.equal(stored);
    // Another instance's pipeline wrote the record of the same event first, then counted an attempt.
    const theirs = randomUUID();
    const other = checkinStore(db);
    await other.applyProjected(projected(theirs, studentId, 'CHECKED_IN'));
    const first = await other.get(theirs);
    if (first === undefined) throw new Error('not written');
    await other.countFailure(first);
    here.minted(theirs);
    expect(await here.applyProjected(projected(theirs, studentId, 'CHECKED_IN'))).to.equal('unchanged');
    expect((await other.get(theirs))?.failedAttempts, 'the count kept').to.equal(1);
    expect(here.lastWritten(theirs)).to.equal(undefined);
    // A later write goes through a read as before.
    gets = 0;
    expect(await here.applyProjected(projected(mine, studentId, 'CHECKED_OUT'))).to.equal('written');
    expect(gets).to.equal(1);
    expect(here.lastWritten(mine)?.status).to.equal('CHECKED_OUT');
  });

  it('an id minted again after its record was written (a retry of a key answered 503) keeps the record readable', async () => {
    const cached = checkinStore(store().db.private, { records: docCache(), config: docCache() });
    const checkInId = randomUUID();
    cached.minted(checkInId);
    await cached.applyProjected(projected(checkInId, randomUUID(), 'CHECKED_IN'));
    const stored = await checkinStore(store().db.private).get(checkInId);
    // The ledger keeps no 503: the retry's key is fresh again, and the service says so.
    cached.minted(checkInId);
    expect(await cached.get(checkInId)).to.deep.equal(stored);
    expect(cached.lastWritten(checkInId)).to.deep.equal(stored);
  });

  it('the configuration: a save is read back at once', async () => {
    const cached = checkinStore(store().db.private, {
      records: docCache(),
      config: docCache(),
    });
    const before = await cached.config();
    await cached.saveConfig({ ...before, maxCheckoutAttempts: before.maxCheckoutAttempts + 2 }, AT);
    expect((await cached.config()).maxCheckoutAttempts).to.equal(before.maxCheckoutAttempts + 2);
  });
});
