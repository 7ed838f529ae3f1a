/**
 * Two builds of the service side by side under the same load at the same time, for A/B comparisons on
 * a shared machine, where runs taken one after the other differ by more than most changes do: noise
 * from other processes hits both sides alike. Each side is its own process on its own copy of the
 * quick data set, with its own autocannon at 50 connections, both started together.
 *
 *   npx tsx bench/duel.ts <a/dist/server/main.js> <b/dist/server/main.js> [rounds=5] [seconds=5]
 *
 * BENCH_SERVICE_ENV (NAME=value pairs) goes to both sides, BENCH_DUEL_ENV_A and BENCH_DUEL_ENV_B to
 * one each (such as NODE_OPTIONS=--v8-pool-size=2 to compare a runtime flag on one build).
 *
 * Prints each round's requests per second, p99 and server CPU per request for both sides, and the
 * median of B/A. Not part of `npm run bench`: a tool for deciding whether a change helps. The two
 * sides are not quite symmetric (their autocannons share this process's event loop), so run it both
 * ways round, and once with the same build on both sides to see the noise: on the 2-core machine of
 * decision 0019, CPU per request B/A of one build against itself came out between 0.93 and 1.08, and
 * throughput B/A between 0.96 and 1.24.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import autocannon from 'autocannon';
import * as t from 'io-ts';
import { serviceProcess, waitHealthy } from '../test/support/mainProcess.js';
import { writeDataset } from './dataset.js';
import { envPairs } from './options.js';
import { median } from './stats.js';

const [entryA, entryB, roundsArg, secondsArg] = process.argv.slice(2);
if (entryA === undefined || entryB === undefined) throw new Error('usage: duel.ts <a main.js> <b main.js>');
const rounds = Number(roundsArg ?? 5);
const seconds = Number(secondsArg ?? 5);
const DEVICE_ID = '6f1c2a8e-9d3b-4c5e-8f7a-1b2c3d4e5f60';
const Token = t.type({ accessToken: t.string });

const cpuMs = async (pid: number | undefined): Promise<number> => {
  if (pid === undefined) throw new Error('the service is not running');
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
};

const side = async (label: 'a' | 'b', entry: string) => {
  const svc = await serviceProcess(
    `duel-${label}`,
    {
      AUTH_MODE: 'jwt',
      NODE_ENV: 'development',
      // The load is fifty connections of one principal and device: at the per-device default (600 a
      // minute) it would measure 429s. On, at the highest limit, which the load never reaches: the
      // figures include counting every request (in memory, so any limit costs the same; README).
      RATE_LIMIT_REQUESTS: '1000000',
      ...envPairs(process.env.BENCH_SERVICE_ENV),
      ...envPairs(label === 'a' ? process.env.BENCH_DUEL_ENV_A : process.env.BENCH_DUEL_ENV_B),
    },
    { kind: 'built', path: entry },
  );
  await svc.start(60_000);
  await svc.stop();
  const data = await writeDataset(svc.dataDir, { students: 10_000, sessions: 20, events: 20_000 });
  const url = await svc.start(60_000);
  await waitHealthy(url, 20);
  await fetch(`${url}/api/v1/_seed`, { method: 'POST' });
  const login = await fetch(`${url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'admin@chamada.local', password: 'chamada-dev-password' }),
  });
  const token = Token.decode(await login.json());
  if (token._tag === 'Left') throw new Error(`${label}: login answered ${login.status}`);
  const pairs = data.sessionIds.flatMap((sessionId) =>
    data.studentIds.map((studentId) => ({ studentId, sessionId })),
  );
  let next = 0;
  const headers = {
    authorization: `Bearer ${token.right.accessToken}`,
    'x-device-id': DEVICE_ID,
    'content-type': 'application/json',
  };
  const load = async (duration: number) => {
    const before = await cpuMs(svc.pid());
    const r = await autocannon({
      url,
      connections: 50,
      duration,
      requests: [
        {
          method: 'POST',
          path: '/api/v1/check-in',
          setupRequest: (req) => {
            const pair = pairs[next % pairs.length];
            next += 1;
            return {
              ...req,
              headers: { ...headers, 'idempotency-key': randomUUID() },
              body: JSON.stringify(pair),
            };
          },
        },
      ],
    });
    return { r, cpu: async () => ((await cpuMs(svc.pid())) - before) / Math.max(1, r.requests.total) };
  };
  return { svc, load };
};

const a = await side('a', entryA);
const b = await side('b', entryB);
try {
  // Warm-up: the roster's first full pass and the JIT.
  await Promise.all([a.load(3), b.load(3)]);
  await new Promise((r) => setTimeout(r, 3000));
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  for (let i = 0; i < rounds; i += 1) {
    const [ra, rb] = await Promise.all([a.load(seconds), b.load(seconds)]);
    // Both sides' leftover work (the roster's debounced pass) before CPU is read.
    await new Promise((r) => setTimeout(r, 2000));
    const [ca, cb] = [await ra.cpu(), await rb.cpu()];
    ratios.push(rb.r.requests.average / ra.r.requests.average);
    cpuRatios.push(cb / ca);
    process.stdout.write(
      `round ${i + 1}: A ${ra.r.requests.average.toFixed(0)} req/s p99 ${ra.r.latency.p99} ms cpu ${ca.toFixed(2)} ms | ` +
        `B ${rb.r.requests.average.toFixed(0)} req/s p99 ${rb.r.latency.p99} ms cpu ${cb.toFixed(2)} ms | ` +
        `B/A ${ratios[i]?.toFixed(3)} cpu B/A ${cpuRatios[i]?.toFixed(3)}\n`,
    );
  }
  process.stdout.write(
    `median B/A throughput ${median(ratios).toFixed(3)}, CPU per request ${median(cpuRatios).toFixed(3)}\n`,
  );
} finally {
  for (const s of [a, b]) {
    await s.svc.stop();
    await s.svc.dispose();
  }
}
