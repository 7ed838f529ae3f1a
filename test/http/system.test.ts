import { expect } from 'chai';
import { useService, useServiceOnCouch } from '../support/harness.js';
import { call, expectEnvelope } from '../support/http.js';
import { startTestService } from '../support/testService.js';

describe('public system endpoints', () => {
  const fixedNow = new Date('2026-11-25T12:34:56.789Z');
  const h = useService({ env: { LICENSE_MODULES: 'kiosk,reports' }, clock: () => fixedNow });

  it('GET /api/v1/health answers ok with the server time', async () => {
    const r = await call(`${h.url}/api/v1/health`);
    expect(r.status).to.equal(200);
    expect(r.json).to.deep.equal({ status: 'ok', serverTime: fixedNow.toISOString() });
  });

  it('GET /api/v1/license lists the entitled modules under `modules`', async () => {
    const r = await call(`${h.url}/api/v1/license`);
    expect(r.status).to.equal(200);
    expect(r.json).to.deep.equal({ modules: ['kiosk', 'reports'] });
  });

  it('GET /.well-known/security.txt is RFC 9116 plain text expiring one year after it is served', async () => {
    const r = await call(`${h.url}/.well-known/security.txt`);
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.equal('text/plain; charset=utf-8');
    const lines = r.text.trim().split('\n');
    expect(lines.filter((l) => /^Contact: mailto:\S+@\S+$/.test(l))).to.have.length(2);
    expect(lines).to.include('Expires: 2027-11-25T12:34:56Z');
    expect(lines).to.include('Preferred-Languages: pt-BR, en');
  });

  it('a public route refuses unknown query parameters like any other input', async () => {
    expectEnvelope(await call(`${h.url}/api/v1/license?debug=1`), 400, 'VALIDATION_FAILED');
  });
});

describe('unlicensed service', () => {
  const h = useService();
  it('lists no modules', async () => {
    expect((await call(`${h.url}/api/v1/license`)).json).to.deep.equal({ modules: [] });
  });
});

describe('health when the store is down', () => {
  it('embedded: 503 STORE_UNAVAILABLE once the databases are closed', async () => {
    const svc = await startTestService();
    try {
      await svc.store.close();
      const e = expectEnvelope(await call(`${svc.url}/api/v1/health`), 503, 'STORE_UNAVAILABLE');
      expect(e.details).to.deep.equal({ store: 'unreachable' });
    } finally {
      await svc.dispose();
    }
  });

  describe('on a CouchDB-protocol server', () => {
    const { h, couch } = useServiceOnCouch();

    it('reports ok, then 503 while the server is stopped, then ok again without a restart of ours', async () => {
      expect((await call(`${h.url}/api/v1/health`)).status).to.equal(200);
      await couch().stop();
      expectEnvelope(await call(`${h.url}/api/v1/health`), 503, 'STORE_UNAVAILABLE');
      await couch().restart();
      expect((await call(`${h.url}/api/v1/health`)).status).to.equal(200);
    });
  });
});
