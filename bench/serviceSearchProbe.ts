/**
 * Where a one-child search's time goes through the service on a real CouchDB (decision 0074): a
 * service on CouchDB behind a counting proxy (`countingProxy.ts`), the growth bench's roll imported
 * file by file, then rounds of the growth bench's one-child search at 10 connections. Per round: the
 * rate and p99, the service's and CouchDB's Erlang CPU per answered search, and CouchDB requests per
 * search by kind. Then each kind of request the search makes, alone against the same CouchDB, 10 at
 * once: what CouchDB's CPU each costs.
 *
 *   PROBE_COUCHDB_URL=<CouchDB with credentials> PROBE_COUCH_PID=<its beam.smp pid> \
 *     npx tsx bench/serviceSearchProbe.ts [students=50000] [seconds=10] [rounds=2]
 *
 * `PROBE_CPU_PROF_DIR=<dir>` has the service write a V8 CPU profile of the whole run there when it
 * stops (`bench/cpuProfile.mjs`). `PROBE_PREFIX` names the databases (default `searchsvc_`): a second run on the same prefix imports
 * nothing (`PROBE_IMPORT=0`), so the rounds can be repeated on one roll. The proxy runs in this
 * process, beside the load generator: rates are lower than the growth bench's, the split is not.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { foldName } from '../src/rules/students.js';
import { PouchDB } from '../src/store/pouch.js';
import { studentViews } from '../src/store/studentViews.js';
import { serviceProcess, waitHealthy } from '../test/support/mainProcess.js';
import { basicAuth, couchCpu } from './couchServer.js';
import { countingProxy } from './countingProxy.js';
import { nameOf, oneChildQuery } from './scenarios/growth.js';
import { drive, quiet, signedInAdmin } from './scenarios/serviceLoad.js';

const couch = process.env.PROBE_COUCHDB_URL;
if (couch === undefined) throw new Error('PROBE_COUCHDB_URL names the CouchDB to probe');
const beam = Number(process.env.PROBE_COUCH_PID ?? 0);
const students = Number(process.argv[2] ?? 50_000);
const seconds = Number(process.argv[3] ?? 10);
const rounds = Number(process.argv[4] ?? 2);
const prefix = process.env.PROBE_PREFIX ?? 'searchsvc_';
const profileDir = process.env.PROBE_CPU_PROF_DIR;
const FILE_ROWS = 10_000;
const CONNECTIONS = 10;

const { base, authorization } = basicAuth(couch);
const couchGet = async (path: string, init: RequestInit = {}): Promise<unknown> =>
  fetch(`${base}${path}`, {
    ...init,
    headers: { authorization, 'content-type': 'application/json', ...init.headers },
  }).then((r) => r.json());
const erlangMs = async () => (await couchCpu(beam)).erlang;

/** Waits until CouchDB indexes and compacts nothing: a search measured beside either pays for it. */
const couchQuiet = async (): Promise<void> => {
  for (;;) {
    const tasks = await couchGet('/_active_tasks');
    const busy =
      Array.isArray(tasks) &&
      tasks.some(
        (task: unknown) =>
          typeof task === 'object' &&
          task !== null &&
          'type' in task &&
          typeof task.type === 'string' &&
          (task.type === 'indexer' || task.type.endsWith('compaction')),
      );
    if (!busy) return;
    await new Promise((r) => setTimeout(r, 1_000));
  }
};

const csv = (from: number, to: number): string =>
  [
    'Código;Nome;Data de Nascimento;Responsável;Telefone;Turma',
    ...Array.from({ length: to - from }, (_, k) => {
      const i = from + k;
      return `M-${i};${nameOf(i)};${String((i % 28) + 1).padStart(2, '0')}/0${(i % 9) + 1}/2019;Responsável ${i};(11) 9${String(10_000_000 + i).slice(-8)};Maternal`;
    }),
  ].join('\r\n');

/** The `sessionId` and `userId` claims of a bearer token: the two documents each request reads. */
const claimsOf = (bearer: string): { sessionId: string; userId: string } => {
  const payload: unknown = JSON.parse(
    Buffer.from(bearer.replace(/^Bearer /, '').split('.')[1] ?? '', 'base64url').toString('utf8'),
  );
  if (
    typeof payload === 'object' &&
    payload !== null &&
    'sessionId' in payload &&
    typeof payload.sessionId === 'string' &&
    'userId' in payload &&
    typeof payload.userId === 'string'
  )
    return { sessionId: payload.sessionId, userId: payload.userId };
  throw new Error('the access token carries no session and user');
};

/** CouchDB's Erlang CPU per request of `send`, 10 at once, `n` times. */
const alone = async (
  n: number,
  send: () => Promise<Response | unknown>,
): Promise<{ cpuMs: number; perS: number }> => {
  let next = 0;
  const cpu0 = await erlangMs();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next++ < n) {
        const r = await send();
        if (!(r instanceof Response)) continue;
        await r.arrayBuffer();
        if (r.status >= 300) throw new Error(`answered ${r.status}`);
      }
    }),
  );
  return { cpuMs: ((await erlangMs()) - cpu0) / n, perS: n / ((performance.now() - t0) / 1000) };
};

const proxy = await countingProxy(couch, prefix);
const svc = await serviceProcess(
  'service-search-probe',
  {
    AUTH_MODE: 'jwt',
    NODE_ENV: 'development',
    COUCHDB_URL: proxy.url,
    DB_PREFIX: prefix,
    RATE_LIMIT_REQUESTS: '1000000',
    // The same secret every run: a second run on the prefix signs in as the first one's ADMIN.
    JWT_SECRET: 'service-search-probe-secret-service-search-probe-secret-0123',
    // The service's own CPU profile, written when it stops (`bench/cpuProfile.mjs`).
    ...(profileDir === undefined
      ? {}
      : {
          NODE_OPTIONS: `--import=${pathToFileURL(resolve('bench/cpuProfile.mjs')).href}`,
          BENCH_CPU_PROF_DIR: resolve(profileDir),
        }),
  },
  { kind: 'built', path: 'dist/server/main.js' },
);
try {
  const url = await svc.start(120_000);
  await waitHealthy(url);
  const login = await fetch(`${url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'admin@chamada.local', password: 'chamada-dev-password' }),
  });
  const signedIn = login.status === 200 ? undefined : await signedInAdmin(url);
  const token: unknown = signedIn === undefined ? await login.json() : undefined;
  const auth =
    signedIn ??
    (typeof token === 'object' &&
    token !== null &&
    'accessToken' in token &&
    typeof token.accessToken === 'string'
      ? { authorization: `Bearer ${token.accessToken}`, 'x-device-id': randomUUID() }
      : undefined);
  if (auth === undefined) throw new Error(`login answered ${login.status}`);
  if (process.env.PROBE_IMPORT !== '0' && signedIn !== undefined) {
    await fetch(`${url}/api/v1/classes`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ name: 'Maternal' }),
    });
    for (let from = 0; from < students; from += FILE_ROWS) {
      const t0 = performance.now();
      const r = await fetch(`${url}/api/v1/imports/students?dryRun=false`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'text/csv', 'idempotency-key': randomUUID() },
        body: csv(from, Math.min(students, from + FILE_ROWS)),
      });
      await r.arrayBuffer();
      process.stdout.write(
        `file from ${from}: ${r.status} in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
      );
    }
  }
  await quiet(svc.pid(), 900_000);
  await couchQuiet();
  await quiet(svc.pid(), 60_000);
  const path = `/api/v1/students?limit=50&q=${encodeURIComponent(oneChildQuery(students))}`;
  for (let round = 1; round <= rounds; round += 1) {
    proxy.reset();
    const cpu0 = await erlangMs();
    const load = await drive(
      {
        url,
        connections: CONNECTIONS,
        duration: seconds,
        headers: auth,
        requests: [{ method: 'GET', path }],
      },
      svc.pid(),
    );
    const answered = load.rps * seconds;
    const kinds = [...proxy.counts()]
      .filter(([, n]) => n / answered >= 0.01)
      .sort((a, b) => b[1] - a[1])
      .map(([kind, n]) => `${kind} ${(n / answered).toFixed(2)}`)
      .join(', ');
    process.stdout.write(
      `round ${round}: ${load.rps.toFixed(0)} searches/s, p99 ${load.p99} ms; CPU a search: service ${load.cpuMsPerRequest?.toFixed(2) ?? '?'} ms, CouchDB ${(((await erlangMs()) - cpu0) / answered).toFixed(2)} ms; CouchDB requests a search: ${kinds}\n`,
    );
  }
  // Each kind alone, on the documents and databases the searches used.
  const { sessionId, userId } = claimsOf(auth.authorization ?? '');
  const keys = [`session:${sessionId}`, `user:${userId}`];
  const auditEntries = () =>
    JSON.stringify({
      docs: Array.from({ length: 4 }, () => ({
        _id: `audit:${new Date().toISOString()}:${randomUUID()}`,
        docType: 'probe',
        created_at: new Date().toISOString(),
        subject_id: null,
      })),
    });
  const headers = { authorization, 'content-type': 'application/json' };
  // The search's one view read: its rarest word (the child's number) read whole, as the service reads it.
  const views = studentViews(new PouchDB(`${couch.replace(/\/$/, '')}/${prefix}private`));
  const rarest = foldName(oneChildQuery(students)).split(' ')[1] ?? '';
  const kinds: Record<string, () => Promise<Response | unknown>> = {
    "the search's view read (its rarest word's rows)": () => views.byWord('ACTIVE', rarest, 2_001, false),
    'GET /_up (no authentication)': () => fetch(`${base}/_up`),
    'GET / (authenticated)': () => fetch(`${base}/`, { headers }),
    'a document read': () =>
      fetch(`${base}/${prefix}private/${encodeURIComponent(keys[1] ?? '')}`, { headers }),
    "_all_docs of a request's session and user": () =>
      fetch(`${base}/${prefix}private/_all_docs?include_docs=true`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ keys }),
      }),
    '_bulk_docs of 4 audit-sized entries': () =>
      fetch(`${base}/${prefix}audit/_bulk_docs`, { method: 'POST', headers, body: auditEntries() }),
  };
  for (const [kind, send] of Object.entries(kinds)) {
    const { cpuMs, perS } = await alone(1_000, send);
    process.stdout.write(`alone, ${kind}: ${cpuMs.toFixed(2)} ms of CouchDB's CPU, ${perS.toFixed(0)}/s\n`);
  }
} finally {
  // Stopped gracefully first: a profile is written at the process's exit, which a kill skips.
  await svc.stop();
  await svc.dispose();
  await proxy.close();
}
