/**
 * `POST /api/v1/sync/events` with 500-event batches (validation, authorisation, storage once per id,
 * the pipeline's decision read back) beside a raw PouchDB `bulkDocs` of the same number of event
 * documents on the same kind of embedded store. Runs alternate so machine noise hits both alike.
 */
import { randomUUID } from 'node:crypto';
import { PouchDB } from '../../src/store/pouch.js';
import { seedSmallRoster } from '../../test/support/seed.js';
import { makeTempDir, removeDir } from '../../test/support/tempDir.js';
import { DEV_TOKENS, mutationHeaders, startTestService } from '../../test/support/testService.js';
import { median, spread } from '../stats.js';
import type { ScenarioResult } from './types.js';

const BATCH = 500;

export const syncThroughput = async (quick: boolean): Promise<ScenarioResult> => {
  // One principal and device pulls or pushes what many doors would: the limit is on, above that load.
  const svc = await startTestService({ env: { RATE_LIMIT_REQUESTS: '1000000' } });
  const dir = await makeTempDir('bench-sync');
  const raw = new PouchDB(`${dir}/raw`);
  try {
    // Marks of 100 children, one per child and day (no session): each event is its own aspect, as
    // a real backlog of offline marks would mostly be.
    const { studentIds } = await seedSmallRoster(
      svc.url,
      Array.from({ length: 100 }, (_, i) => `Criança ${i}`),
    );
    let n = 0;
    const batch = () =>
      Array.from({ length: BATCH }, () => {
        n += 1;
        return {
          eventId: randomUUID(),
          type: n % 2 === 0 ? 'MARK_PRESENT' : 'MARK_ABSENT',
          studentId: studentIds[n % studentIds.length] ?? '',
          clientTimestamp: new Date(
            Date.UTC(2020, 0, 1 + Math.floor(n / studentIds.length), 9),
          ).toISOString(),
        };
      });
    const viaSync = async (batches: number): Promise<number> => {
      const started = process.hrtime.bigint();
      for (let b = 0; b < batches; b += 1) {
        const r = await fetch(`${svc.url}/api/v1/sync/events`, {
          method: 'POST',
          headers: mutationHeaders(DEV_TOKENS.DEV_CALLER_TOKEN),
          body: JSON.stringify({ events: batch() }),
        });
        if (r.status !== 200) throw new Error(`sync answered ${r.status}`);
        await r.arrayBuffer();
      }
      return (batches * BATCH) / (Number(process.hrtime.bigint() - started) / 1e9);
    };
    const viaBulkDocs = async (batches: number): Promise<number> => {
      const started = process.hrtime.bigint();
      for (let b = 0; b < batches; b += 1) {
        await raw.bulkDocs(batch().map((e) => ({ _id: `event:${e.eventId}`, docType: 'event', ...e })));
      }
      return (batches * BATCH) / (Number(process.hrtime.bigint() - started) / 1e9);
    };
    const batches = quick ? 2 : 6;
    const runs = quick ? 3 : 5;
    await viaBulkDocs(1);
    await viaSync(1);
    const base: number[] = [];
    const measured: number[] = [];
    for (let i = 0; i < runs; i += 1) {
      base.push(await viaBulkDocs(batches));
      measured.push(await viaSync(batches));
    }
    return {
      scenario: `POST /api/v1/sync/events, ${BATCH}-event batches (embedded store, in process)`,
      unit: 'events/s',
      median: median(measured),
      spread: spread(measured),
      p99Ms: undefined,
      baseline: {
        name: 'raw PouchDB bulkDocs of the same documents',
        median: median(base),
        spread: spread(base),
      },
      ratio: median(measured.map((m, i) => m / (base[i] ?? 1))),
      target: '≥ 0.5',
      runs,
    };
  } finally {
    await raw.close();
    await svc.dispose();
    await removeDir(dir);
  }
};
