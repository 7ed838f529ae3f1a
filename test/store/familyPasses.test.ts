/**
 * The family pass generations (decision 0049) on the embedded LevelDB and over the CouchDB protocol:
 * a family starts at 0, each revocation adds one, a retry of the same keyed revocation adds nothing,
 * concurrent revocations are each counted, and the whole list is one range read.
 */
import { expect } from 'chai';
import { familyPassStore } from '../../src/store/familyPasses.js';
import { withQuorumWrites } from '../../src/store/quorumWrites.js';
import { databasePerTest, storeBackends } from '../support/storeBackends.js';

for (const [label, host] of storeBackends('familypasses'))
  describe(`family pass store on ${label}`, function () {
    this.timeout(60_000);
    const per = databasePerTest(host, 'familypasses');
    const store = () => familyPassStore(withQuorumWrites(per.db()));

    it('a family is at generation 0 until revoked; each revocation adds one and names when and by whom', async () => {
      const passes = store();
      expect(await passes.generation('famA')).to.equal(0);
      const first = await passes.revoke('famA', '2026-03-01T10:00:00.000Z', 'admin-1');
      expect(first).to.include({ familyKey: 'famA', generation: 1, revokedBy: 'admin-1' });
      const second = await passes.revoke('famA', '2026-03-02T10:00:00.000Z', null);
      expect(second).to.include({ generation: 2, revokedAt: '2026-03-02T10:00:00.000Z', revokedBy: null });
      expect(await passes.generation('famA')).to.equal(2);
      expect(await passes.generation('famB')).to.equal(0);
    });

    it('a retry of the last keyed revocation answers what it wrote and adds nothing', async () => {
      const passes = store();
      const once = await passes.revoke('famA', '2026-03-01T10:00:00.000Z', 'admin-1', 'key-1');
      const retried = await passes.revoke('famA', '2026-03-01T10:00:05.000Z', 'admin-1', 'key-1');
      expect(retried).to.deep.equal(once);
      expect(
        (await passes.revoke('famA', '2026-03-01T10:01:00.000Z', 'admin-1', 'key-2')).generation,
      ).to.equal(2);
    });

    it('concurrent revocations of one family are each counted', async () => {
      const passes = store();
      const all = await Promise.all(
        Array.from({ length: 4 }, (_, i) => passes.revoke('famA', '2026-03-01T10:00:00.000Z', `admin-${i}`)),
      );
      expect(all.map((d) => d.generation).sort()).to.deep.equal([1, 2, 3, 4]);
      expect(await passes.generation('famA')).to.equal(4);
    });

    it('lists every revoked family with its generation, and no other document', async () => {
      const passes = store();
      await passes.revoke('famA', '2026-03-01T10:00:00.000Z', null);
      await passes.revoke('famB', '2026-03-01T10:00:00.000Z', null);
      await passes.revoke('famB', '2026-03-01T10:00:00.000Z', null);
      await per.db().put({ _id: 'student:x', docType: 'student' });
      await per.db().put({ _id: 'familyPassword', docType: 'other' });
      expect(Object.fromEntries(await passes.all())).to.deep.equal({ famA: 1, famB: 2 });
    });
  });
