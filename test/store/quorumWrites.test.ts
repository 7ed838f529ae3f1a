import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import MemoryAdapter from 'pouchdb-adapter-memory';
import { type Database, PouchDB } from '../../src/store/pouch.js';
import { sortsAbove, WITHDRAWN, withQuorumWrites } from '../../src/store/quorumWrites.js';

PouchDB.plugin(MemoryAdapter);

describe('quorum writes: which live leaf CouchDB makes the winner', () => {
  const table: ReadonlyArray<readonly [string, string, boolean]> = [
    ['2-aaa', '1-fff', true], // a later generation wins, whatever its hash
    ['1-fff', '2-aaa', false],
    ['10-aaa', '9-fff', true], // generations compare as numbers, not as text
    ['1-bbb', '1-aaa', true], // the same generation: the higher revision id
    ['1-aaa', '1-bbb', false],
    ['1-aaa', '1-aaa', false], // a leaf is not above itself
  ];
  for (const [x, y, above] of table)
    it(`${x} ${above ? 'sorts above' : 'does not sort above'} ${y}`, () => {
      expect(sortsAbove(x, y)).to.equal(above);
    });

  it('of any two different leaves, exactly one sorts above the other', () => {
    const revs = ['1-a', '1-b', '2-a', '3-0', '10-z', '9-z'];
    for (const x of revs)
      for (const y of revs)
        if (x !== y) expect(sortsAbove(x, y) !== sortsAbove(y, x), `${x} ${y}`).to.equal(true);
  });
});

describe('quorum writes: the copy a refused write left behind', () => {
  /**
   * PouchDB shaped as one CouchDB cluster answers: `copies` per document, and a write to one of
   * `keptOnRefusal` answered 409 while a copy took it (stored beside the other writer's revision as a
   * second leaf, as internal replication would bring it).
   */
  const clusterShaped = async (
    copies: number,
    keptOnRefusal: ReadonlySet<string>,
    stored: { readonly _id: string; readonly owner: string },
  ): Promise<{ readonly db: Database; readonly rev: string }> => {
    const db: Database = new PouchDB(`qw-${randomUUID()}`, { adapter: 'memory' });
    // Stored before the override: PouchDB's own put calls bulkDocs with a callback.
    const { rev } = await db.put(stored);
    const info = db.info.bind(db);
    const bulkDocs = db.bulkDocs.bind(db);
    const shaped = Object.assign(db, {
      info: async () => ({ ...(await info()), cluster: { n: copies } }),
      bulkDocs: async (
        docs: PouchDB.Core.PutDocument<object>[],
        options: PouchDB.Core.BulkDocsOptions = {},
      ) => {
        if (options.new_edits === false) return bulkDocs(docs, options);
        const out = [];
        for (const doc of docs) {
          const id = doc._id ?? '';
          if (!keptOnRefusal.has(id) || '_deleted' in doc) {
            out.push(...(await bulkDocs([doc])));
            continue;
          }
          await bulkDocs([{ ...doc, _id: id, _rev: '1-0000000000000000000000000000000f' }], {
            new_edits: false,
          });
          out.push({ id, error: 'conflict', reason: 'Document update conflict.' });
        }
        return out;
      },
    });
    return { db: shaped, rev };
  };
  const leaves = async (db: Database, id: string) => {
    const got: unknown = await db.get(id, { open_revs: 'all' });
    return (Array.isArray(got) ? got : []).map((l: unknown) => {
      const doc: unknown = Reflect.get(Object(l), 'ok');
      return {
        rev: String(Reflect.get(Object(doc), '_rev')),
        deleted: Reflect.get(Object(doc), '_deleted') === true,
        withdrawn: Reflect.get(Object(doc), 'withdrawn') === WITHDRAWN,
      };
    });
  };
  const refusal = (e: unknown): unknown => Reflect.get(Object(e), 'status');

  it('withdraws the copy it left beside the write that won, and still answers 409', async () => {
    const { db: raw, rev } = await clusterShaped(3, new Set(['claim:k']), { _id: 'claim:k', owner: 'B' });
    const db = withQuorumWrites(raw);
    expect(await db.put({ _id: 'claim:k', owner: 'A' }).catch(refusal)).to.equal(409);
    const after = await leaves(db, 'claim:k');
    expect(after.filter((l) => !l.deleted).map((l) => l.rev)).to.deep.equal([rev]);
    expect(after.filter((l) => l.deleted && l.withdrawn)).to.have.length(1);
    expect(((await db.get('claim:k')) as { owner?: string }).owner).to.equal('B');
  });

  it('writes nothing after a refusal that left no copy', async () => {
    const { db: raw, rev } = await clusterShaped(3, new Set(), { _id: 'claim:k', owner: 'B' });
    const db = withQuorumWrites(raw);
    expect(await db.put({ _id: 'claim:k', owner: 'A' }).catch(refusal)).to.equal(409);
    expect(await leaves(db, 'claim:k')).to.deep.equal([{ rev: rev, deleted: false, withdrawn: false }]);
  });

  it('leaves a single copy alone: one copy cannot take a write it refused', async () => {
    const { db: raw } = await clusterShaped(1, new Set(['claim:k']), { _id: 'claim:k', owner: 'B' });
    const db = withQuorumWrites(raw);
    expect(await db.put({ _id: 'claim:k', owner: 'A' }).catch(refusal)).to.equal(409);
    expect((await leaves(db, 'claim:k')).filter((l) => l.deleted)).to.deep.equal([]);
  });
});
