/**
 * Two instances on one CouchDB agree on the roll (decision 0056): on CouchDB the list and the search
 * are answered by the views. The instance that wrote a student lists and finds it on its next request
 * (it waits for the index after its own write); the other once its private feed told it of the write
 * (as with the in-memory directory before), bounded here, never timed as a figure.
 */
import { expect } from 'chai';
import * as t from 'io-ts';
import { call, decodeAs } from '../support/http.js';
import { readUntil } from '../support/readUntil.js';
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
  const eventually = (on: svc.TestService, query: string, expected: string[]) =>
    readUntil(
      () => names(on, query),
      (got) => JSON.stringify(got) === JSON.stringify(expected),
    ).then((got) => expect(got, query).to.deep.equal(expected));

  it('a student written through one instance is listed and found by it at once, and by the other', async () => {
    const { a, b } = instances();
    const classId = await createdId(a.url, '/api/v1/classes', { name: 'Turma' }, 'classId');
    const student = (displayName: string) => ({
      displayName,
      guardianName: 'Rita',
      phones: [{ number: '+55 11 5555-0101', qualifier: 'mãe' }],
      classId,
    });
    const studentId = await createdId(a.url, '/api/v1/students', student('Ícaro Tavares'), 'studentId');
    expect(await names(a, '&q=icaro')).to.deep.equal(['Ícaro Tavares']);
    await createdId(b.url, '/api/v1/students', student('Beatriz Tavares'), 'studentId');
    expect(await names(b, '')).to.deep.equal(['Beatriz Tavares', 'Ícaro Tavares']);
    await eventually(a, '', ['Beatriz Tavares', 'Ícaro Tavares']);
    const renamed = await svc.mutate(
      `${b.url}/api/v1/students/${studentId}`,
      'PATCH',
      { displayName: 'Caio Tavares' },
      admin,
    );
    expect(renamed.status, renamed.text).to.equal(200);
    expect(await names(b, '&q=icaro')).to.deep.equal([]);
    await eventually(a, '&q=icaro', []);
    await eventually(a, '&q=tavares', ['Beatriz Tavares', 'Caio Tavares']);
    const deleted = await svc.mutate(
      `${a.url}/api/v1/students/${studentId}/delete`,
      'POST',
      { justification: 'registered twice by mistake' },
      admin,
    );
    expect(deleted.status, deleted.text).to.equal(200);
    expect(await names(a, '&q=tavares')).to.deep.equal(['Beatriz Tavares']);
    await eventually(b, '&q=tavares', ['Beatriz Tavares']);
    await eventually(b, '&status=DELETED&q=caio', ['Caio Tavares']);
  });
});
