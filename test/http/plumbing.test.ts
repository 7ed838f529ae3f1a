/** Black-box tests of the plumbing every endpoint shares, against the real app on a loopback port. */
import { connect } from 'node:net';
import { expect } from 'chai';
import { CORS_ALLOWED_HEADERS } from '../../src/http/middleware/cors.js';
import { AUTH_CLASSES, type AuthClass } from '../../src/rules/authorization.js';
import { TOKENS, useService } from '../support/harness.js';
import { call, expectEnvelope, type HttpResult, issuePaths, SPEC_SECURITY_HEADERS } from '../support/http.js';
import { probeRoutes } from '../support/probeRoutes.js';
import { authHeaders, DEVICE_ID, mutationHeaders } from '../support/testService.js';

const ALLOWED_ORIGIN = 'https://kiosk.chamada.example';

const expectSecurityHeaders = (r: HttpResult) => {
  for (const [name, value] of SPEC_SECURITY_HEADERS) expect(r.headers.get(name), name).to.equal(value);
  expect(r.headers.get('x-powered-by')).to.equal(null);
};

/** Raw bytes to the server and its whole answer (it closes the connection), for what fetch cannot send. */
const rawRequest = (base: string, request: string): Promise<HttpResult> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(base);
    const socket = connect(Number(port), hostname, () => socket.end(request));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => {
      text += c;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = new Headers();
      for (const line of lines) {
        const at = line.indexOf(':');
        headers.append(line.slice(0, at), line.slice(at + 1).trim());
      }
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, text: body, json });
    });
  });

describe('HTTP plumbing', () => {
  const h = useService({
    env: { CORS_ORIGINS: `${ALLOWED_ORIGIN},http://localhost:5173` },
    routes: probeRoutes(),
  });
  const url = (path: string) => `${h.url}${path}`;

  describe('security headers', () => {
    const cases: ReadonlyArray<[string, () => Promise<HttpResult>, number]> = [
      ['a 2xx', () => call(url('/api/v1/health')), 200],
      ['a 4xx', () => call(url('/api/v1/_probe/admin')), 401],
      ['a 404', () => call(url('/api/v1/nothing-here')), 404],
      ['a 500', () => call(url('/api/v1/_probe/boom')), 500],
      [
        'a preflight',
        () =>
          call(url('/api/v1/health'), {
            method: 'OPTIONS',
            headers: { Origin: ALLOWED_ORIGIN, 'Access-Control-Request-Method': 'POST' },
          }),
        204,
      ],
      ['a plain-text 2xx outside /api', () => call(url('/.well-known/security.txt')), 200],
    ];
    for (const [what, send, status] of cases) {
      it(`are on ${what} with their exact values`, async () => {
        const r = await send();
        expect(r.status).to.equal(status);
        expectSecurityHeaders(r);
      });
    }

    it('API responses are never cached (Cache-Control: no-store), errors included', async () => {
      expect((await call(url('/api/v1/health'))).headers.get('cache-control')).to.equal('no-store');
      expect((await call(url('/api/v1/missing'))).headers.get('cache-control')).to.equal('no-store');
    });
  });

  describe('CORS', () => {
    it('reflects an allowed origin and says Vary: Origin', async () => {
      const r = await call(url('/api/v1/health'), { headers: { Origin: ALLOWED_ORIGIN } });
      expect(r.headers.get('access-control-allow-origin')).to.equal(ALLOWED_ORIGIN);
      expect(r.headers.get('vary')).to.match(/Origin/);
      expect(r.headers.get('access-control-expose-headers')).to.contain('X-Correlation-Id');
    });

    it('answers an allowed preflight with 204, the six headers and a one-day max age', async () => {
      const r = await call(url('/api/v1/_probe/echo/x'), {
        method: 'OPTIONS',
        headers: {
          Origin: ALLOWED_ORIGIN,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'authorization,x-device-id,idempotency-key,content-type',
        },
      });
      expect(r.status).to.equal(204);
      expect(r.headers.get('access-control-allow-origin')).to.equal(ALLOWED_ORIGIN);
      expect(r.headers.get('access-control-max-age')).to.equal('86400');
      const allowed = (r.headers.get('access-control-allow-headers') ?? '')
        .split(',')
        .map((h) => h.trim().toLowerCase());
      expect(allowed).to.have.members(CORS_ALLOWED_HEADERS.map((h) => h.toLowerCase()));
      expect(allowed).to.have.length(6);
    });

    for (const [what, origin] of [
      ['an unknown origin', 'https://evil.example'],
      ['the null origin', 'null'],
      ['a look-alike origin', `${ALLOWED_ORIGIN}.evil.example`],
    ] as const) {
      it(`gives ${what} no Access-Control-Allow-Origin, on requests and preflights`, async () => {
        const simple = await call(url('/api/v1/health'), { headers: { Origin: origin } });
        expect(simple.headers.get('access-control-allow-origin')).to.equal(null);
        const preflight = await call(url('/api/v1/health'), {
          method: 'OPTIONS',
          headers: { Origin: origin, 'Access-Control-Request-Method': 'GET' },
        });
        expect(preflight.headers.get('access-control-allow-origin')).to.equal(null);
        expectSecurityHeaders(preflight);
      });
    }

    it('never answers with the * wildcard', async () => {
      const r = await call(url('/api/v1/health'), { headers: { Origin: 'http://localhost:5173' } });
      expect(r.headers.get('access-control-allow-origin')).to.equal('http://localhost:5173');
    });
  });

  describe('error envelope', () => {
    it('unknown route → 404 NOT_FOUND', async () => {
      expectEnvelope(await call(url('/api/v1/no-such-thing')), 404, 'NOT_FOUND');
    });

    it('malformed JSON → 400 VALIDATION_FAILED naming the body', async () => {
      const r = await call(url(`/api/v1/_probe/echo/${DEVICE_ID}`), {
        method: 'POST',
        headers: mutationHeaders(TOKENS.ADMIN),
        body: '{"displayName": ',
      });
      const e = expectEnvelope(r, 400, 'VALIDATION_FAILED');
      expect(e.details).to.deep.equal({ issues: [{ path: 'body', message: 'malformed JSON' }] });
    });

    it('invalid fields → 400 with details naming part and path', async () => {
      const r = await call(url('/api/v1/_probe/echo/not-a-uuid?verbose=maybe&extra=1'), {
        method: 'POST',
        headers: mutationHeaders(TOKENS.ADMIN),
        body: JSON.stringify({ displayName: '', status: 'DELETED' }),
      });
      const e = expectEnvelope(r, 400, 'VALIDATION_FAILED');
      const paths = issuePaths(e);
      expect(paths).to.have.members([
        'params.itemId',
        'query.verbose',
        'query.extra',
        'body.displayName',
        'body.status',
      ]);
    });

    it('names the first 100 issues and counts the rest (10,000 unknown fields: a small answer)', async () => {
      const body: Record<string, string> = { displayName: 'Ana' };
      for (let i = 0; i < 10_000; i += 1) body[`field${i}`] = 'x';
      const r = await call(url(`/api/v1/_probe/echo/${DEVICE_ID}`), {
        method: 'POST',
        headers: mutationHeaders(TOKENS.ADMIN),
        body: JSON.stringify(body),
      });
      const e = expectEnvelope(r, 400, 'VALIDATION_FAILED');
      const paths = issuePaths(e);
      expect(paths).to.have.length(100);
      expect(paths[0]).to.equal('body.field0');
      expect(e.details?.issuesOmitted).to.equal(9_900);
      // Was about 0.5 MB, several times the request.
      expect(r.text.length).to.be.below(10_000);
    });

    it('a body over 1 MiB → 413 PAYLOAD_TOO_LARGE', async () => {
      const r = await call(url(`/api/v1/_probe/echo/${DEVICE_ID}`), {
        method: 'POST',
        headers: mutationHeaders(TOKENS.ADMIN),
        body: JSON.stringify({ displayName: 'x'.repeat(1024 * 1024) }),
      });
      expectEnvelope(r, 413, 'PAYLOAD_TOO_LARGE');
    });

    it('an unsupported charset → 415 UNSUPPORTED_MEDIA_TYPE', async () => {
      const r = await call(url(`/api/v1/_probe/echo/${DEVICE_ID}`), {
        method: 'POST',
        headers: {
          ...mutationHeaders(TOKENS.ADMIN),
          'Content-Type': 'application/json; charset=klingon',
        },
        body: '{}',
      });
      expectEnvelope(r, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('an unexpected error → 500 INTERNAL_ERROR without internals, logged with its correlation id', async () => {
      const r = await call(url('/api/v1/_probe/boom'));
      const e = expectEnvelope(r, 500, 'INTERNAL_ERROR');
      expect(r.text).not.to.contain('secret').and.not.to.contain('João');
      const logged = h.svc
        .logLines()
        .find((l) => l.msg === 'unhandled error' && l.correlationId === e.correlationId);
      expect(logged, 'log line').to.not.equal(undefined);
    });

    it("headers over Node's limit → 431 HEADERS_TOO_LARGE in the envelope, with the security headers", async () => {
      const r = await rawRequest(
        h.url,
        `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`,
      );
      expectEnvelope(r, 431, 'HEADERS_TOO_LARGE');
      expectSecurityHeaders(r);
      expect(r.headers.get('cache-control')).to.equal('no-store');
    });

    for (const [what, request] of [
      ['a request line that is not HTTP', 'HELLO THERE\r\n\r\n'],
      ['a header without a colon', 'GET /api/v1/health HTTP/1.1\r\nHost: x\r\nbroken header\r\n\r\n'],
      [
        'a Content-Length that is not a number',
        'POST /api/v1/health HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n',
      ],
    ] as const) {
      it(`${what} → 400 VALIDATION_FAILED in the envelope, with the security headers`, async () => {
        const r = await rawRequest(h.url, request);
        expectEnvelope(r, 400, 'VALIDATION_FAILED');
        expectSecurityHeaders(r);
      });
    }

    it('a valid body passes through and the handler sets status and headers', async () => {
      const r = await call(url(`/api/v1/_probe/echo/${DEVICE_ID}`), {
        method: 'POST',
        headers: mutationHeaders(TOKENS.CADASTRO),
        body: JSON.stringify({ displayName: 'Ana' }),
      });
      expect(r.status).to.equal(201);
      expect(r.headers.get('location')).to.equal(`/api/v1/_probe/echo/${DEVICE_ID}`);
      expect(r.json).to.deep.equal({ displayName: 'Ana' });
    });

    it('a client correlation id that is a UUID is kept; anything else is replaced', async () => {
      const mine = '0b7e8d3c-2f4a-4e6b-9c1d-5a6b7c8d9e0f';
      const kept = await call(url('/api/v1/missing'), { headers: { 'X-Correlation-Id': mine } });
      expect(expectEnvelope(kept, 404, 'NOT_FOUND').correlationId).to.equal(mine);
      const replaced = await call(url('/api/v1/missing'), { headers: { 'X-Correlation-Id': 'drop table' } });
      expect(expectEnvelope(replaced, 404, 'NOT_FOUND').correlationId).not.to.equal('drop table');
    });
  });

  describe('device id', () => {
    it('is required on every authenticated request → 400 VALIDATION_FAILED', async () => {
      const r = await call(url('/api/v1/_probe/bearer'), {
        headers: { Authorization: `Bearer ${TOKENS.ADMIN}` },
      });
      const e = expectEnvelope(r, 400, 'VALIDATION_FAILED');
      expect(JSON.stringify(e.details)).to.contain('headers.x-device-id');
    });

    it('must be a UUID', async () => {
      const r = await call(url('/api/v1/_probe/bearer'), {
        headers: { Authorization: `Bearer ${TOKENS.ADMIN}`, 'X-Device-Id': 'tablet 3' },
      });
      expectEnvelope(r, 400, 'VALIDATION_FAILED');
    });

    it('is not needed on public routes', async () => {
      expect((await call(url('/api/v1/health'))).status).to.equal(200);
    });

    it('reaches the handler', async () => {
      const r = await call(url('/api/v1/_probe/bearer'), {
        headers: authHeaders(TOKENS.CHAMADOR),
      });
      expect(r.json).to.deep.include({ deviceId: DEVICE_ID });
    });
  });

  describe('development-mode roles', () => {
    const callers: ReadonlyArray<[string, string | undefined, string | undefined]> = [
      ['anonymous', undefined, undefined],
      ['a wrong token', 'not-a-known-token-at-all', undefined],
      ['ADMIN', TOKENS.ADMIN, 'dev-admin'],
      ['CHAMADOR', TOKENS.CHAMADOR, 'dev-caller'],
      ['RELATORIOS', TOKENS.RELATORIOS, 'dev-reports'],
      ['CADASTRO', TOKENS.CADASTRO, 'dev-cadastro'],
    ];
    const allowed: Readonly<Record<AuthClass, ReadonlyArray<string>>> = {
      none: ['anonymous', 'a wrong token', 'ADMIN', 'CHAMADOR', 'RELATORIOS', 'CADASTRO'],
      bearer: ['ADMIN', 'CHAMADOR', 'RELATORIOS', 'CADASTRO'],
      admin: ['ADMIN'],
      cadastro: ['ADMIN', 'CADASTRO'],
      chamador: ['ADMIN', 'CHAMADOR'],
      relatorios: ['ADMIN', 'RELATORIOS'],
      // A print agent's token only (0054): no user reaches these.
      printAgent: [],
    };
    for (const authClass of AUTH_CLASSES) {
      for (const [who, token, userId] of callers) {
        const ok = allowed[authClass].includes(who);
        const expected = ok ? 200 : token === undefined || userId === undefined ? 401 : 403;
        it(`${authClass} route, ${who} → ${expected}`, async () => {
          const r = await call(url(`/api/v1/_probe/${authClass}`), {
            headers: token === undefined ? {} : authHeaders(token),
          });
          if (expected === 200) {
            expect(r.status).to.equal(200);
            expect(r.json).to.deep.include({ userId: authClass === 'none' ? null : userId });
          } else expectEnvelope(r, expected, expected === 401 ? 'UNAUTHORIZED' : 'FORBIDDEN_ROLE');
        });
      }
    }

    it('a malformed Authorization header → 401', async () => {
      for (const header of ['Basic abc', 'Bearer', 'Bearer  two spaces', `bearer${TOKENS.ADMIN}`]) {
        const r = await call(url('/api/v1/_probe/bearer'), {
          headers: { Authorization: header, 'X-Device-Id': DEVICE_ID },
        });
        expectEnvelope(r, 401, 'UNAUTHORIZED');
      }
    });
  });

  describe('logs', () => {
    it('carry the correlation id and the route template, never the query string or body', async () => {
      const r = await call(url(`/api/v1/_probe/echo/${DEVICE_ID}?verbose=yes`), {
        method: 'POST',
        headers: mutationHeaders(TOKENS.ADMIN),
        body: JSON.stringify({ displayName: 'Joãozinho Personal' }),
      });
      const id = r.headers.get('x-correlation-id');
      const line = h.svc.logLines().find((l) => l.correlationId === id && l.msg === 'request');
      expect(line).to.deep.include({
        route: 'POST /api/v1/_probe/echo/{itemId}',
        status: 201,
        userId: 'dev-admin',
      });
      expect(h.svc.rawLog()).not.to.contain('Joãozinho');
      expect(h.svc.rawLog()).not.to.contain('verbose=yes');
      expect(h.svc.rawLog()).not.to.contain(TOKENS.ADMIN);
    });
  });
});
