/**
 * The browser client's endpoints are the server's routes: each declaration is held to the route of
 * the same method and path in the registry, codec by codec (the same values, not look-alikes), and a
 * call is built from it as the route reads it.
 */
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import { callOf, type Endpoint } from '../../src/client/endpoint.js';
import { apiOf, endpoints } from '../../src/client/endpoints.js';
import type { Call } from '../../src/client/transport.js';
import { routes } from '../../src/http/registry.js';

const routeOf = (e: Endpoint) => routes.find((r) => r.method === e.method.toLowerCase() && r.path === e.path);

describe('client: the endpoints are the routes', () => {
  for (const [name, endpoint] of Object.entries(endpoints) as Array<[string, Endpoint]>)
    it(`${name}: ${endpoint.method} ${endpoint.path} with the route's own codecs`, () => {
      const route = routeOf(endpoint);
      expect(route, 'a route of that method and path').to.not.equal(undefined);
      expect(route?.response.codec === endpoint.response, 'the response codec').to.equal(true);
      if (endpoint.query !== undefined)
        expect(route?.query === endpoint.query, 'the query codec').to.equal(true);
      // A route that reads a body gets the one it declares; one that reads none gets none.
      expect(
        route?.body === endpoint.body || (route?.bodyOptional === true && endpoint.body === undefined),
      ).to.equal(true);
      if (endpoint.accept !== undefined) expect(route?.response.csv, 'a CSV answer').to.not.equal(undefined);
    });
});

describe('client: a call built from an endpoint', () => {
  it('fills the path, encoded, and writes the query as the route reads it, absent fields left out', () => {
    const call = callOf(endpoints.listStudents, {
      query: { status: 'ACTIVE', q: 'joão silva', limit: '25' },
    });
    expect(call.method).to.equal('GET');
    expect(call.path).to.equal('/api/v1/students?q=jo%C3%A3o+silva&status=ACTIVE&limit=25');
    expect(callOf(endpoints.getStudent, { params: { studentId: 'a/b?c' } }).path).to.equal(
      '/api/v1/students/a%2Fb%3Fc',
    );
    expect(callOf(endpoints.listClasses, {}).path).to.equal('/api/v1/classes');
    expect(
      callOf(endpoints.verifyPickupAdult, {
        params: { studentId: 's1', pickupId: 'p1' },
        body: { code: '1234' },
      }).path,
    ).to.equal('/api/v1/students/s1/pickup-list/p1/verify');
  });

  it('sends a JSON body as its codec encodes it, and bytes as they are with their media type', () => {
    expect(callOf(endpoints.createNucleus, { body: { name: 'Centro' } }).body).to.deep.equal({
      json: { name: 'Centro' },
    });
    const photo = new Blob([new Uint8Array([0xff, 0xd8])], { type: 'image/jpeg' });
    const upload = callOf(endpoints.putStudentPhoto, {
      params: { studentId: 's1' },
      body: { bytes: photo, type: 'image/png' },
    });
    expect(upload.method).to.equal('PUT');
    expect(upload.body).to.deep.equal({ bytes: photo, type: 'image/png' });
  });

  it('reads a JSON answer by the route’s codec, a CSV as text, an image as bytes', async () => {
    const turma = {
      classId: '00000000-0000-4000-8000-000000000001',
      name: 'Turma',
      nucleusId: null,
      capacity: 12,
      childrenPerVolunteer: null,
      ageRange: null,
      status: 'ACTIVE',
      createdAt: '2026-03-01T10:00:00.000Z',
      updatedAt: '2026-03-01T10:00:00.000Z',
    };
    const list = callOf(endpoints.listClasses, {});
    expect(await list.read(Response.json({ items: [turma] }))).to.deep.equal(E.right({ items: [turma] }));
    // What the route's codec refuses (a capacity of 0) is no answer this client takes.
    expect(await list.read(Response.json({ items: [{ ...turma, capacity: 0 }] }))).to.deep.equal(
      E.left({ kind: 'unexpected', status: 200 }),
    );
    const csv = callOf(endpoints.attendanceReportCsv, { query: { from: '2026-03-01' } });
    expect(csv.accept).to.equal('text/csv');
    expect(await csv.read(new Response('"date"\r\n'))).to.deep.equal(E.right('"date"\r\n'));
    const image = callOf(endpoints.getStudentPhoto, { params: { studentId: 's1' } });
    const bytes = await image.read(
      new Response(new Uint8Array([1, 2, 3]), { headers: { 'Content-Type': 'image/jpeg' } }),
    );
    expect(bytes).to.deep.equal(E.right({ bytes: new Uint8Array([1, 2, 3]), type: 'image/jpeg' }));
  });

  it('the api hands each call to the transport and gives back its answer', async () => {
    const sent: Array<Call<unknown>> = [];
    const api = apiOf({
      send: async <A>(call: Call<A>) => {
        sent.push(call);
        return E.left({ kind: 'network' } as const);
      },
    });
    expect(await api.endSchedule({ params: { scheduleId: 'x' }, body: {} })).to.deep.equal(
      E.left({ kind: 'network' }),
    );
    expect(sent.map((c) => [c.method, c.path])).to.deep.equal([['POST', '/api/v1/schedules/x/end']]);
  });
});
