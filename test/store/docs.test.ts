import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import * as t from 'io-ts';
import { getDoc, getDocs, isRemote, listDocs, UndecodableDocument } from '../../src/store/docs.js';
import type { Database } from '../../src/store/pouch.js';
import { StoreTimeoutError } from '../../src/store/storeErrors.js';
import { readUntil } from '../support/readUntil.js';
import { type StoreHost, storeBackends } from '../support/storeBackends.js';

const Note = t.type({ _id: t.string, _rev: t.string, text: t.string });

/** The embedded store reads id by id and CouchDB in one request: both must answer alike. */
const backends = storeBackends('docs');

for (const [name, setUp] of backends) {
  describe(`getDoc and getDocs on ${name}`, function () {
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
      const expected = asked.filter((id) => Number(id.slice(5)) % 3 !== 0 && id !== 'note:0001');
      // A cluster under load may answer a write 202 (one copy took it, the others were slow), and a
      // quorum read sees it once a second copy has it; where two copies disagree on a deletion,
      // CouchDB answers the live one (fabric_doc_open's choose_reply), so a deletion one copy took
      // reads as absent only once a second has it (once over 10 s: reliability.md). Read again, as
      // long as the copies agreeing may take, then compare.
      const found = await readUntil(
        () => getDocs(db, Note, asked),
        (docs) => docs.length === expected.length,
        60_000,
      );
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

    /** Counts the store calls a read makes (`get` one by one, `allDocs` batched). */
    const counted = (target: Database) => {
      const calls = { get: 0, allDocs: 0 };
      const get = target.get.bind(target);
      const allDocs = target.allDocs.bind(target);
      Object.assign(target, {
        get: (...args: Parameters<typeof get>) => {
          calls.get += 1;
          return get(...args);
        },
        allDocs: (...args: Parameters<typeof allDocs>) => {
          calls.allDocs += 1;
          return allDocs(...args);
        },
      });
      return calls;
    };

    it('answers each of many concurrent reads with its own document, or nothing for an absent or deleted one', async () => {
      await db.bulkDocs([
        { _id: 'note:a', text: 'a' },
        { _id: 'note:b', text: 'b' },
        { _id: 'note:gone', text: 'gone' },
      ]);
      await db.remove(await db.get('note:gone'));
      const asked = ['note:b', 'note:absent', 'note:a', 'note:gone', 'note:a'];
      const read = () => Promise.all(asked.map((id) => getDoc(db, Note, id)));
      // A cluster may answer the deletion from a copy that has not taken it yet: read until it has.
      await readUntil(read, (docs) => docs[3] === undefined, 60_000);
      const calls = counted(db);
      const found = await read();
      expect(found.map((d) => d?.text)).to.deep.equal(['b', undefined, 'a', undefined, 'a']);
      // On CouchDB the five concurrent reads went as one request with their keys.
      expect(calls).to.deep.equal(isRemote(db) ? { get: 0, allDocs: 1 } : { get: 5, allDocs: 0 });
    });

    it('answers each read alone when a batched read fails, so one failure is no other read’s', async () => {
      await db.bulkDocs([
        { _id: 'note:a', text: 'a' },
        { _id: 'note:b', text: 'b' },
      ]);
      await readUntil(
        () => getDoc(db, Note, 'note:b'),
        (d) => d !== undefined,
        60_000,
      );
      Object.assign(db, { allDocs: () => Promise.reject(new Error('one key could not be opened')) });
      const found = await Promise.all(['note:a', 'note:absent', 'note:b'].map((id) => getDoc(db, Note, id)));
      expect(found.map((d) => d?.text)).to.deep.equal(['a', undefined, 'b']);
    });

    it('fails every read of a batch at once when the store is away, reading none of them again', async () => {
      await db.put({ _id: 'note:a', text: 'a' });
      const away = new StoreTimeoutError(5_000);
      let alone = 0;
      Object.assign(db, {
        allDocs: () => Promise.reject(away),
        get: () => {
          alone += 1;
          return Promise.reject(away);
        },
      });
      const results = await Promise.allSettled(['note:a', 'note:b'].map((id) => getDoc(db, Note, id)));
      expect(results.map((r) => (r.status === 'rejected' ? r.reason : r.value))).to.deep.equal([away, away]);
      // On CouchDB the one batched request, and no read alone after it; the embedded store reads by get.
      expect(alone).to.equal(isRemote(db) ? 0 : 2);
    });

    it('reads the document as it is now, not as an earlier read found it', async () => {
      await db.put({ _id: 'note:x', text: 'one' });
      expect((await getDoc(db, Note, 'note:x'))?.text).to.equal('one');
      const current = await db.get('note:x');
      await db.put({ ...current, text: 'two' });
      const now = await readUntil(
        () => getDoc(db, Note, 'note:x'),
        (d) => d?.text === 'two',
        60_000,
      );
      expect(now?.text).to.equal('two');
    });

    it('refuses a document its codec does not read, and the reads beside it still answer', async () => {
      await db.bulkDocs([
        { _id: 'note:bad', text: 42 },
        { _id: 'note:good', text: 'good' },
      ]);
      const [bad, good] = await Promise.allSettled([
        getDoc(db, Note, 'note:bad'),
        getDoc(db, Note, 'note:good'),
      ]);
      expect(bad?.status === 'rejected' && bad.reason instanceof UndecodableDocument).to.equal(true);
      expect(good?.status === 'fulfilled' ? good.value?.text : undefined).to.equal('good');
    });
  });

  describe(`listDocs on ${name}`, function () {
    this.timeout(120_000);
    let host: StoreHost;
    let tests = 0;
    before(async () => {
      host = await setUp();
    });
    after(() => host.dispose());
    const TypedNote = t.type({ _id: t.string, _rev: t.string, docType: t.literal('note'), text: t.string });
    const typed = (key: string) => ({ _id: `note:${key}`, docType: 'note', text: key });

    it('lists every document of the type once, whatever its key, and nothing of another type', async () => {
      // The listing is read in parts split on the key's first character: keys on and around every
      // split, outside the hexadecimal digits, and empty. Up to `<docType>:\ufff0`, the range every
      // listing by prefix reads (ids are UUIDs).
      const edges = [
        '',
        '0',
        '3',
        '3~',
        '4',
        '4-',
        '7zz',
        '8',
        'b\u00ff',
        'c',
        'c0',
        'f',
        'z',
        'A',
        '~',
        'é',
        '\ufff0',
      ];
      const key = fc
        .oneof(
          fc.constantFrom(...edges),
          fc.uuid(),
          fc.string({ minLength: 0, maxLength: 6, unit: 'grapheme' }),
        )
        .filter((k) => (k.codePointAt(0) ?? 0) < 0xfff0 || k === '\ufff0');
      await fc.assert(
        fc.asyncProperty(fc.uniqueArray(key, { maxLength: 40 }), async (keys) => {
          tests += 1;
          const db = host.open(`listed_${tests}`);
          try {
            // A type whose name extends this one's, and one sorting right after the prefix.
            await db.bulkDocs([
              ...keys.map(typed),
              { _id: 'notebook:1', docType: 'notebook', text: 'x' },
              { _id: 'note;1', docType: 'note', text: 'x' },
            ]);
            const listed = (
              await readUntil(
                () => listDocs(db, TypedNote, 'note'),
                (l) => l.length >= keys.length,
              )
            )
              .map((d) => d._id)
              .sort();
            expect(listed).to.deep.equal(keys.map((k) => `note:${k}`).sort());
          } finally {
            await db.close();
          }
        }),
        { numRuns: name.startsWith('embedded') ? 40 : 10 },
      );
    });

    it('reads a large type whole (UUID keys, as every stored type has)', async () => {
      tests += 1;
      const db = host.open(`listed_${tests}`);
      try {
        const keys = Array.from({ length: 2000 }, () => randomUUID());
        await db.bulkDocs(keys.map(typed));
        const listed = await readUntil(
          () => listDocs(db, TypedNote, 'note'),
          (l) => l.length >= 2000,
        );
        expect(listed.length).to.equal(2000);
      } finally {
        await db.close();
      }
    });
  });
}
