/**
 * Two instances on one CouchDB agree on the roll at once (decision 0056): on CouchDB the list and the
 * search are answered by the views, which index every acknowledged write before answering, so a
 * student created, renamed or deleted through one instance is listed, found and left out by the other
 * on its next request, with no wait for a feed.
 */
import { expect } from 'chai';
import * as t from 'io-ts';
import { call, decodeAs } from '../support/http.js';
import { createdId } from '../support/seed.js';
import * as svc from '../support/testService.js';

const admin = svc.DEV_TOKENS.DEV_ADMIN_TOKEN;
const Page = t.type({
  items: t.array(t.type({ studentId: t.string, displayName: t.string })),
  nextCursor: t.union([t.string, t.null]),
});

describe('the roll on two instances of one CouchDB-protocol server', function () {
  this.timeout(120_000);
  const instances = svc.twoInstancesOnOneCouch();

  const names = async (on: svc.TestService, query: string): Promise<string[]> => {
    const r = await call(`${on.url}/api/v1/students?limit=200${query}`, { headers: svc.authHeaders(admin) });
    expect(r.status, r.text).to.equal(200);
    return decodeAs(Page, r.json).items.map((i) => i.displayName);
  };

  it('a student written through one instance is listed, found and renamed on the other at once', async () => {
    const { a, b } = instances();
    const classId = await createdId(a.url, '/api/v1/classes', { name: 'Turma' }, 'classId');
    const student = (displayName: string) => ({
      displayName,
      guardianName: 'Rita',
      phones: [{ number: '+55 11 5555-0101', qualifier: 'mãe' }],
      classId,
    });
    const studentId = await createdId(a.url, '/api/v1/students', student('Ícaro Tavares'), 'studentId');
    await createdId(b.url, '/api/v1/students', student('Beatriz Tavares'), 'studentId');
    expect(await names(b, '')).to.deep.equal(['Beatriz Tavares', 'Ícaro Tavares']);
    expect(await names(a, '')).to.deep.equal(['Beatriz Tavares', 'Ícaro Tavares']);
    expect(await names(b, '&q=icaro')).to.deep.equal(['Ícaro Tavares']);
    const renamed = await svc.mutate(
      `${b.url}/api/v1/students/${studentId}`,
      'PATCH',
      { displayName: 'Caio Tavares' },
      admin,
    );
    expect(renamed.status, renamed.text).to.equal(200);
    expect(await names(a, '&q=icaro')).to.deep.equal([]);
    expect(await names(a, '&q=tavares')).to.deep.equal(['Beatriz Tavares', 'Caio Tavares']);
    const deleted = await svc.mutate(
      `${a.url}/api/v1/students/${studentId}/delete`,
      'POST',
      { justification: 'registered twice by mistake' },
      admin,
    );
    expect(deleted.status, deleted.text).to.equal(200);
    expect(await names(b, '&q=tavares')).to.deep.equal(['Beatriz Tavares']);
    expect(await names(b, '&status=DELETED&q=caio')).to.deep.equal(['Caio Tavares']);
  });
});
