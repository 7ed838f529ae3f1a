/**
 * A mutation's audit entry rides in its idempotency record and reaches the log after the answer
 * (decision 0041, the embedded store), black-box: the log shows it as soon as the answer is out, the
 * health check shows what is on its way, and an entry the log refused before the process stopped is
 * in the log after the next start.
 */
import { expect } from 'chai';
import * as t from 'io-ts';
import { call, decodeAs } from '../support/http.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';
import {
  authHeaders,
  DEV_TOKENS,
  mutationHeaders,
  startTestService,
  type TestService,
} from '../support/testService.js';

const AuditPage = t.type({
  items: t.array(t.type({ correlation_id: t.string, endpoint: t.string, details: t.UnknownRecord })),
});
const Health = t.type({
  status: t.literal('ok'),
  auditBacklog: t.type({ entries: t.number, oldestMs: t.number, failing: t.boolean }),
});

const ENDPOINT = 'POST /api/v1/classes';

const createClass = async (svc: TestService, name: string) => {
  const r = await call(`${svc.url}/api/v1/classes`, {
    method: 'POST',
    headers: mutationHeaders(DEV_TOKENS.DEV_ADMIN_TOKEN),
    body: JSON.stringify({ name }),
  });
  expect(r.status, r.text).to.equal(201);
  const correlationId = r.headers.get('x-correlation-id');
  if (correlationId === null) throw new Error('no correlation id');
  return correlationId;
};

const loggedCorrelations = async (svc: TestService): Promise<string[]> => {
  const r = await call(`${svc.url}/api/v1/audit-logs?endpoint=${encodeURIComponent(ENDPOINT)}`, {
    headers: authHeaders(DEV_TOKENS.DEV_ADMIN_TOKEN),
  });
  expect(r.status, r.text).to.equal(200);
  return decodeAs(AuditPage, r.json).items.map((e) => e.correlation_id);
};

const health = async (svc: TestService) => {
  const r = await call(`${svc.url}/api/v1/health`);
  expect(r.status, r.text).to.equal(200);
  return decodeAs(Health, r.json).auditBacklog;
};

describe('a mutation’s audit entry carried by its idempotency record (embedded store)', function () {
  this.timeout(60_000);

  it('is in the log as soon as the answer is out, and nothing is left on its way', async () => {
    const svc = await startTestService();
    try {
      const answered = await Promise.all(
        Array.from({ length: 20 }, (_, i) => createClass(svc, `Turma ${i}`)),
      );
      expect((await loggedCorrelations(svc)).sort()).to.deep.equal([...answered].sort());
      expect(await health(svc)).to.deep.equal({ entries: 0, oldestMs: 0, failing: false });
    } finally {
      await svc.dispose();
    }
  });

  it('reaches the log at the next start when the log refused it before the process stopped', async () => {
    const dataDir = await makeTempDir('carried-audit-restart');
    try {
      const first = await startTestService({ env: { DATA_DIR: dataDir } });
      let correlationId: string;
      try {
        // The log refuses every append from here on, the stop's last try included.
        Object.assign(first.deps.audit, {
          appendKeyed: () => Promise.reject(new Error('audit database full')),
        });
        correlationId = await createClass(first, 'Turma B');
        const backlog = await health(first);
        expect(backlog.failing, 'the refusal shows in the health check').to.equal(true);
        expect(await loggedCorrelations(first), 'not in the log while it refuses').to.not.include(
          correlationId,
        );
      } finally {
        await first.dispose();
      }
      const second = await startTestService({ env: { DATA_DIR: dataDir } });
      try {
        // The start's first tick appends what the records carry; read until it has.
        let logged: string[] = [];
        for (let i = 0; i < 100 && !logged.includes(correlationId); i += 1) {
          logged = await loggedCorrelations(second);
          if (!logged.includes(correlationId)) await new Promise((r) => setTimeout(r, 50));
        }
        expect(logged).to.include(correlationId);
        expect(logged.filter((c) => c === correlationId)).to.have.length(1);
        expect(await health(second)).to.deep.include({ entries: 0, failing: false });
      } finally {
        await second.dispose();
      }
    } finally {
      await removeDir(dataDir);
    }
  });
});
