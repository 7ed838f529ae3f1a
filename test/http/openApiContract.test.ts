/**
 * The check every black-box response goes through (`test/support/openApiContract.ts`, called from
 * `call`): it must catch what a client generated from the document would trip on.
 */
import { expect } from 'chai';
import { openApiDocumentFor } from '../../src/http/openapi/openApiDocument.js';
import { routes } from '../../src/http/registry.js';
import { openApiContract } from '../support/openApiContract.js';

const contract = openApiContract(openApiDocumentFor(routes));
const CORRELATION = '0b8f3c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e';
const json = (extra: Record<string, string> = {}) =>
  new Headers({
    'Content-Type': 'application/json; charset=utf-8',
    'X-Correlation-Id': CORRELATION,
    ...extra,
  });
const envelope = (code: string) =>
  JSON.stringify({ error: { code, message: 'm', correlationId: CORRELATION } });
const health = JSON.stringify({ status: 'ok', serverTime: '2026-11-26T22:00:00.000Z' });

describe('the OpenAPI contract check of every response', () => {
  it('passes a response the document describes', () =>
    expect(
      contract.check({ method: 'GET', path: '/api/v1/health', status: 200, headers: json(), text: health }),
    ).to.deep.equal([]));

  it('catches a status the operation does not list', () =>
    expect(
      contract.check({
        method: 'GET',
        path: '/api/v1/health',
        status: 418,
        headers: json(),
        text: envelope('INTERNAL_ERROR'),
      }),
    ).to.deep.equal(['GET /api/v1/health → 418: status not documented']));

  it('catches a header the response does not document, and a documented one of the wrong form', () => {
    const problems = contract.check({
      method: 'POST',
      path: '/api/v1/auth/login',
      status: 429,
      headers: json({ 'X-Secret-Debug': '1', 'Retry-After': 'soon' }),
      text: envelope('RATE_LIMITED'),
    });
    expect(problems).to.have.length(2);
    expect(problems[0]).to.contain('header retry-after');
    expect(problems[1]).to.contain('header x-secret-debug not documented');
  });

  it('catches a field the schema does not name, and a wrong type', () => {
    const problems = contract.check({
      method: 'GET',
      path: '/api/v1/health',
      status: 200,
      headers: json(),
      text: JSON.stringify({ status: 'ok', serverTime: 42, leaked: 'x' }),
    });
    expect(problems.join('\n'))
      .to.match(/additional properties/)
      .and.match(/serverTime/);
  });

  it('passes a 401 SESSION_EXPIRED from an authenticated route, and catches a 401 code no route lists', () => {
    const answer = (code: string) =>
      contract.check({
        method: 'GET',
        path: '/api/v1/users',
        status: 401,
        headers: json(),
        text: envelope(code),
      });
    expect(answer('SESSION_EXPIRED')).to.deep.equal([]);
    expect(answer('COMPROMISED_SESSION')).to.deep.equal([
      'GET /api/v1/users → 401: error code COMPROMISED_SESSION not listed',
    ]);
  });

  it('matches path templates and leaves undescribed paths alone', () => {
    expect(
      contract.check({
        method: 'PATCH',
        path: '/api/v1/students/6f1c2a8e-9d3b-4c5e-8f7a-1b2c3d4e5f60',
        status: 402,
        headers: json(),
        text: envelope('INTERNAL_ERROR'),
      }),
    ).to.deep.equal(['PATCH /api/v1/students/{studentId} → 402: status not documented']);
    expect(
      contract.check({
        method: 'GET',
        path: '/api/v1/replication/roster/',
        status: 200,
        headers: json(),
        text: '{}',
      }),
    ).to.deep.equal([]);
  });
});
