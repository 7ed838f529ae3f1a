import { expect } from 'chai';
import { type CouchServer, startCouchServer } from '../support/couchServer.js';
import { call, expectEnvelope } from '../support/http.js';
import { startTestService, type TestService } from '../support/testService.js';

describe('public system endpoints', () => {
  let svc: TestService;
  const fixedNow = new Date('2026-11-25T12:34:56.789Z');
  before(async () => {
    svc = await startTestService({ env: { LICENSE_MODULES: 'kiosk,reports' }, clock: () => fixedNow });
  });
  after(() => svc.dispose());

  it('GET /api/v1/health answers ok with the server time', async () => {
    const r = await call(`${svc.url}/api/v1/health`);
    expect(r.status).to.equal(200);
    expect(r.json).to.deep.equal({ status: 'ok', serverTime: fixedNow.toISOString() });
  });

  it('GET /api/v1/license lists the entitled modules under `modules`', async () => {
    const r = await call(`${svc.url}/api/v1/license`);
    expect(r.status).to.equal(200);
    expect(r.json).to.deep.equal({ modules: ['kiosk', 'reports'] });
  });

  it('GET /.well-known/security.txt is RFC 9116 plain text expiring one year after it is served', async () => {
    const r = await call(`${svc.url}/.well-known/security.txt`);
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.equal('text/plain; charset=utf-8');
    const lines = r.text.trim().split('\n');
    expect(lines.filter((l) => /^Contact: mailto:\S+@\S+$/.test(l))).to.have.length(2);
    expect(lines).to.include('Expires: 2027-11-25T12:34:56Z');
    expect(lines).to.include('Preferred-Languages: pt-BR, en');
  });

  it('a public route refuses unknown query parameters like any other input', async () => {
    expectEnvelope(await call(`${svc.url}/api/v1/license?debug=1`), 400, 'VALIDATION_FAILED');
  });
});

describe('unlicensed service', () => {
  it('lists no modules', async () => {
    const svc = await startTestService();
    try {
      expect((await call(`${svc.url}/api/v1/license`)).json).to.deep.equal({ modules: [] });
    } finally {
      await svc.dispose();
    }
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
    let couch: CouchServer;
    let svc: TestService;
    before(async () => {
      couch = await startCouchServer();
      svc = await startTestService({ env: { COUCHDB_URL: couch.url } });
    });
    after(async () => {
      await svc.dispose();
      await couch.dispose();
    });

    it('reports ok, then 503 while the server is stopped, then ok again without a restart of ours', async () => {
      expect((await call(`${svc.url}/api/v1/health`)).status).to.equal(200);
      await couch.stop();
      expectEnvelope(await call(`${svc.url}/api/v1/health`), 503, 'STORE_UNAVAILABLE');
      await couch.restart();
      expect((await call(`${svc.url}/api/v1/health`)).status).to.equal(200);
    });
  });
});
