import { expect } from 'chai';
import * as t from 'io-ts';
import { getDocs, UndecodableDocument } from '../../src/store/docs.js';
import type { Database } from '../../src/store/pouch.js';
import { type StoreHost, storeBackends } from '../support/storeBackends.js';

const Note = t.type({ _id: t.string, _rev: t.string, text: t.string });

/** The embedded store reads id by id and CouchDB in one request: both must answer alike. */
const backends = storeBackends('docs');

for (const [name, setUp] of backends) {
  describe(`getDocs on ${name}`, function () {
    this.timeout(60_000);
    let host: StoreHost;
    let db: Database;
    let tests = 0;
    before(async () => {
      host = await setUp();
    });
    after(() => host.dispose());
    beforeEach(() => {
      tests += 1;
      db = host.open(`notes_${tests}`);
    });
    afterEach(() => db.close());

    it('returns the existing documents in the order asked, leaving out absent and deleted ones', async () => {
      // More ids than one chunk, so chunking keeps the order across chunks too.
      const ids = Array.from({ length: 600 }, (_, i) => `note:${String(i).padStart(4, '0')}`);
      await db.bulkDocs(ids.filter((_, i) => i % 3 !== 0).map((id) => ({ _id: id, text: id })));
      const gone = await db.get('note:0001');
      await db.remove(gone);
      const asked = [...ids].reverse();
      const found = await getDocs(db, Note, asked);
      const expected = asked.filter((id) => Number(id.slice(5)) % 3 !== 0 && id !== 'note:0001');
      expect(found.map((d) => d._id)).to.deep.equal(expected);
      expect(found.every((d) => d.text === d._id)).to.equal(true);
    });

    it('refuses a document its codec does not read, naming it', async () => {
      await db.put({ _id: 'note:bad', text: 42 });
      const error: unknown = await getDocs(db, Note, ['note:bad']).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(UndecodableDocument);
      if (error instanceof UndecodableDocument) expect(error.id).to.equal('note:bad');
    });

    it('reads nothing for no ids', async () => {
      expect(await getDocs(db, Note, [])).to.deep.equal([]);
    });
  });
}
