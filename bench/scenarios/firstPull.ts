/**
 * A tablet's first pull of a 10,000-student roster with PouchDB's replicator (memory adapter), from
 * this service (authentication, the minimised roster, audit of each `_bulk_get`) beside express-pouchdb
 * (a stock CouchDB-protocol server from npm) serving the same documents, in the same run. Runs
 * alternate so machine noise hits both alike.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import expressPouchDB from 'express-pouchdb';
import { PouchDB } from '../../src/store/pouch.js';
import { seedSmallRoster } from '../../test/support/seed.js';
import { makeTablet } from '../../test/support/tablet.js';
import { makeTempDir, removeDir } from '../../test/support/tempDir.js';
import { DEV_TOKENS, startTestService } from '../../test/support/testService.js';
import { benchStudent } from '../dataset.js';
import { median, spread } from '../stats.js';
import type { ScenarioResult } from './types.js';

const seconds = async (work: () => Promise<unknown>): Promise<number> => {
  const started = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - started) / 1e9;
};

export const firstPull = async (quick: boolean): Promise<ScenarioResult> => {
  const students = quick ? 2000 : 10_000;
  // One principal and device pulls or pushes what many doors would: the limit is on, above that load.
  const svc = await startTestService({ env: { RATE_LIMIT_REQUESTS: '1000000' } });
  const dir = await makeTempDir('bench-pull');
  const Stock = PouchDB.defaults({ prefix: `${dir}/` });
  const stockApp = expressPouchDB(Stock, { mode: 'minimumForPouchDB', inMemoryConfig: true });
  const stock = createServer(stockApp);
  try {
    const { classId } = await seedSmallRoster(svc.url, [], new Date().toISOString().slice(0, 10));
    const at = new Date().toISOString();
    // Students written straight into the store (the REST path is measured elsewhere); the roster
    // projector picks them up from the private database's feed as it would any change.
    const docs = Array.from({ length: students }, (_, i) => benchStudent(randomUUID(), i, classId, at));
    await svc.deps.replication.reconciler.refresh();
    const before = (await svc.store.db.roster.info()).doc_count;
    for (let i = 0; i < docs.length; i += 1000) await svc.store.db.private.bulkDocs(docs.slice(i, i + 1000));
    // The directory learns of them from that feed, asynchronously: a refresh before it has would
    // leave most of them out of the roster (and both servers would then serve a short one).
    const deadline = Date.now() + 60_000;
    for (;;) {
      await svc.deps.replication.reconciler.refresh();
      if ((await svc.store.db.roster.info()).doc_count >= before + students) break;
      if (Date.now() > deadline) throw new Error('the roster never took in the bench students');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The stock server serves a copy of exactly the roster documents.
    const roster = await svc.store.db.roster.allDocs({ include_docs: true });
    const copy = new Stock('roster');
    await copy.bulkDocs(
      roster.rows.flatMap((r) => {
        if (r.id.startsWith('_design/') || r.doc === undefined || r.doc === null) return [];
        const { _rev: _r, ...body } = r.doc;
        return [body];
      }),
    );
    await new Promise<void>((resolve) => stock.listen(0, '127.0.0.1', () => resolve()));
    const address: AddressInfo | string | null = stock.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    const stockUrl = `http://127.0.0.1:${address.port}/roster`;

    const pullOurs = () =>
      seconds(async () => {
        const tablet = makeTablet(svc.url, DEV_TOKENS.DEV_CALLER_TOKEN);
        const r = await tablet.pull();
        if (r.docs_written < students) throw new Error(`pulled ${r.docs_written} documents`);
        await tablet.close();
      });
    const pullStock = () =>
      seconds(async () => {
        const local = new PouchDB(`stock-${randomUUID()}`, { adapter: 'memory' });
        const r = await local.replicate.from(new PouchDB(stockUrl, { skip_setup: true }), {
          batch_size: 100,
        });
        if (r.docs_written < students) throw new Error(`pulled ${r.docs_written} documents`);
        await local.destroy();
      });
    const runs = 3;
    await pullStock();
    await pullOurs();
    const ours: number[] = [];
    const base: number[] = [];
    for (let i = 0; i < runs; i += 1) {
      base.push(await pullStock());
      ours.push(await pullOurs());
    }
    return {
      scenario: `a tablet's first pull of ${students.toLocaleString('en')} roster documents (PouchDB replicator, batch 100)`,
      unit: 's',
      median: median(ours),
      spread: spread(ours),
      p99Ms: undefined,
      baseline: {
        name: 'express-pouchdb serving the same documents',
        median: median(base),
        spread: spread(base),
      },
      // Time, so the ratio reads "times the stock server's seconds": lower is better.
      ratio: median(ours.map((o, i) => o / (base[i] ?? 1))),
      target: '≤ 1.0× the stock seconds',
      runs,
    };
  } finally {
    await new Promise<void>((resolve) => stock.close(() => resolve()));
    await svc.dispose();
    await removeDir(dir);
  }
};
