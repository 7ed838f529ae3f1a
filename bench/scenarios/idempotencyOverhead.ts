/**
 * The idempotency ledger's cost on a mutation: the same store write done bare (baseline) and through
 * `executeIdempotently` with a fresh key each time, on the embedded store with the ledger the service
 * uses there (claims in memory, one write of the response), at a fixed concurrency. Runs alternate
 * baseline and ledger so machine noise hits both alike.
 */
import { randomUUID } from 'node:crypto';
import { DEFAULT_IDEMPOTENCY_SETTINGS, executeIdempotently } from '../../src/http/idempotency.js';
import { exclusiveIdempotencyLedger } from '../../src/store/idempotencyLedger.js';
import { openStore } from '../../src/store/store.js';
import { makeTempDir, removeDir } from '../../test/support/tempDir.js';
import { median, percentile, spread } from '../stats.js';
import type { ScenarioResult } from './types.js';

const CONCURRENCY = 10;

const timeOps = async (
  ops: number,
  op: () => Promise<void>,
): Promise<{ opsPerSec: number; latencies: number[] }> => {
  const latencies: number[] = [];
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < ops) {
        next += 1;
        const t0 = process.hrtime.bigint();
        await op();
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { opsPerSec: ops / seconds, latencies };
};

export const idempotencyOverhead = async (quick: boolean): Promise<ScenarioResult> => {
  const dir = await makeTempDir('bench-idem');
  const store = await openStore({ kind: 'embedded', dataDir: dir, prefix: 'bench_' });
  try {
    const ledger = exclusiveIdempotencyLedger(store.db.requests);
    const write = async () => {
      await store.db.events.put({ _id: randomUUID(), docType: 'bench', at: Date.now() });
    };
    const withLedger = async () => {
      const outcome = await executeIdempotently({
        ledger,
        clock: () => new Date(),
        settings: DEFAULT_IDEMPOTENCY_SETTINGS,
        key: randomUUID(),
        principalId: 'bench',
        fingerprint: 'f',
        correlationId: randomUUID(),
        run: async () => {
          await write();
          return { status: 201, headers: {}, contentType: 'application/json', body: '{}' };
        },
      });
      if (outcome.kind === 'fresh') await outcome.recorded;
    };
    const ops = quick ? 400 : 2000;
    const runs = quick ? 3 : 5;
    await timeOps(ops / 4, write);
    await timeOps(ops / 4, withLedger);
    const base: number[] = [];
    const led: number[] = [];
    const ledLatencies: number[] = [];
    const baseLatencies: number[] = [];
    for (let i = 0; i < runs; i += 1) {
      const b = await timeOps(ops, write);
      const l = await timeOps(ops, withLedger);
      base.push(b.opsPerSec);
      led.push(l.opsPerSec);
      baseLatencies.push(median(b.latencies));
      ledLatencies.push(percentile(l.latencies, 99));
    }
    const ratios = base.map((b, i) => (led[i] ?? 0) / b);
    return {
      scenario: 'mutation through the idempotency ledger (embedded store, 10 concurrent)',
      unit: 'mutations/s',
      median: median(led),
      spread: spread(led),
      p99Ms: median(ledLatencies),
      baseline: {
        name: 'the same store write without the ledger',
        median: median(base),
        spread: spread(base),
      },
      ratio: median(ratios),
      target: undefined,
      runs,
    };
  } finally {
    await store.close();
    await removeDir(dir);
  }
};
