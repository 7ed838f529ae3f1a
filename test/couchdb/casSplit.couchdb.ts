/**
 * Compare-and-swap updates of one document through two nodes at once while the third node is down
 * (decision 0023): what two pipelines do to an aspect, or two instances to a check-in record, in a
 * split. The two writes can each take one of the two live copies, neither reaching the quorum, and
 * each writer then decides whether to withdraw its copy. Whatever they decide, the document must keep
 * every change either writer was told was stored: no update acknowledged and then lost, and the
 * document never left with no live revision. Only on a cluster of three whose nodes this run controls.
 */
import { expect } from 'chai';
import type { Database } from '../../src/store/pouch.js';
import { figure } from '../reliability/figures.js';
import { realCouchNodes, untilCopiesAgree } from '../support/couchServer.js';
import { liveLeaves, splitCluster } from './splitCluster.js';

const controlled = realCouchNodes() >= 3 && process.env.COUCHDB_TEST_NO_FAULTS === undefined;

const DOCS = 8;
const ROUNDS = 25;
/** Read-modify-write attempts of one change, as the pipeline's step retries a refused commit. */
const ATTEMPTS = 8;

const itemsOf = (doc: unknown): string[] => {
  const items: unknown = typeof doc === 'object' && doc !== null ? Reflect.get(doc, 'items') : undefined;
  return Array.isArray(items) ? items.filter((i): i is string => typeof i === 'string') : [];
};

/** Adds `item` to document `id` with compare-and-swap; true once a write of it was acknowledged. */
const addItem = async (db: Database, id: string, item: string): Promise<boolean> => {
  for (let n = 0; n < ATTEMPTS; n += 1) {
    try {
      const doc = await db.get(id).catch((e: unknown) => {
        if (Reflect.get(Object(e), 'status') === 404) return undefined;
        throw e;
      });
      const items = itemsOf(doc);
      if (items.includes(item)) return true;
      await db.put({ _id: id, ...(doc === undefined ? {} : { _rev: doc._rev }), items: [...items, item] });
      return true;
    } catch {
      await new Promise((r) => setTimeout(r, 10 + Math.random() * 40));
    }
  }
  return false;
};

if (controlled)
  describe('compare-and-swap updates through two nodes at once while the third is down, on real CouchDB', function () {
    this.timeout(600_000);
    const cluster = splitCluster('cassplit_');

    it('keeps every acknowledged change, and never leaves a document with no live revision', async () => {
      const { server, a, b, split, heal } = await cluster();
      const ids = Array.from({ length: DOCS }, (_, i) => `aspect:split-${i}`);
      for (const id of ids) await a.db.projections.put({ _id: id, items: ['seed'] });
      await untilCopiesAgree(server);
      await split();
      const acknowledged = new Map<string, string[]>(ids.map((id) => [id, ['seed']]));
      let refused = 0;
      for (let round = 0; round < ROUNDS; round += 1) {
        const answers = await Promise.all(
          ids.flatMap((id) =>
            [a, b].map(async (s, w) => {
              const item = `${round}-${w === 0 ? 'A' : 'B'}`;
              return { id, item, ok: await addItem(s.db.projections, id, item) };
            }),
          ),
        );
        for (const { id, item, ok } of answers)
          if (ok) acknowledged.get(id)?.push(item);
          else refused += 1;
      }
      await heal();
      const lost: string[] = [];
      const emptied: string[] = [];
      let forked = 0;
      for (const [id, items] of acknowledged) {
        const live = await liveLeaves(a.db.projections, id);
        if (live.length === 0) emptied.push(id);
        if (live.length > 1) forked += 1;
        const held = new Set(live.flatMap(itemsOf));
        lost.push(...items.filter((i) => !held.has(i)).map((i) => `${id} ${i}`));
      }
      const total = [...acknowledged.values()].reduce((n, items) => n + items.length, 0);
      figure(
        'compare-and-swap split',
        `${ROUNDS} rounds × ${DOCS} documents × 2 writers through nodes 1 and 2 with node 3 down: ` +
          `${total} changes acknowledged, ${refused} given up after ${ATTEMPTS} attempts; ${emptied.length} documents ` +
          `left with no live revision, ${lost.length} acknowledged changes missing from every live leaf` +
          `${lost.length === 0 ? '' : ` (${lost.slice(0, 5).join(', ')})`}, ${forked} documents forked (for their readers to merge)`,
      );
      expect(emptied, 'documents left with no live revision').to.deep.equal([]);
      expect(lost.slice(0, 10), `${lost.length} acknowledged changes lost`).to.deep.equal([]);
    });
  });
