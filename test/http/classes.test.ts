/** Nuclei, classes and class sessions, black-box through the real app in development auth mode. */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import {
  ClassC,
  ClassList,
  ClassSession,
  ClassSessionList,
  Nucleus,
  NucleusList,
} from '../../src/domain/classes.js';
import { TOKENS, useService } from '../support/harness.js';
import { call, expectEnvelope, type HttpResult, issuePaths } from '../support/http.js';
import { mutationHeaders } from '../support/testService.js';

const ADMIN = TOKENS.ADMIN;
const CADASTRO = TOKENS.CADASTRO;
const CHAMADOR = TOKENS.CHAMADOR;
const RELATORIOS = TOKENS.RELATORIOS;

const decoded = <C extends t.Mixed>(codec: C, r: HttpResult, status: number): t.TypeOf<C> => {
  expect(r.status, r.text).to.equal(status);
  const d = codec.decode(r.json);
  if (E.isLeft(d)) throw new Error(`not a ${codec.name}: ${r.text}`);
  return d.right;
};

describe('nuclei, classes and class sessions', function () {
  this.timeout(30_000);
  let now: number;
  const h = useService(() => {
    now = Date.parse('2026-03-01T12:00:00Z');
    return { clock: () => new Date(now) };
  }, 'test');

  const send = (method: string, path: string, body: unknown, token: string = ADMIN) =>
    call(`${h.url}${path}`, { method, headers: mutationHeaders(token), body: JSON.stringify(body) });
  const { get } = h.as(ADMIN);

  const createNucleus = async (name: string) =>
    decoded(Nucleus, await send('POST', '/api/v1/nuclei', { name }), 201);
  const createClass = async (name: string, nucleusId?: string) =>
    decoded(
      ClassC,
      await send('POST', '/api/v1/classes', { name, ...(nucleusId === undefined ? {} : { nucleusId }) }),
      201,
    );
  const createSession = async (body: Record<string, unknown>) =>
    decoded(ClassSession, await send('POST', '/api/v1/sessions', body), 201);
  const listSessions = async (query = '') =>
    decoded(ClassSessionList, await get(`/api/v1/sessions${query}`), 200).items;

  describe('nuclei', () => {
    it('creates a nucleus (201 with Location), lists nuclei by name and renames one', async () => {
      const r = await send('POST', '/api/v1/nuclei', { name: 'Zona Sul' });
      const south = decoded(Nucleus, r, 201);
      expect(r.headers.get('location')).to.equal(`/api/v1/nuclei/${south.nucleusId}`);
      expect(south).to.deep.include({
        name: 'Zona Sul',
        createdAt: '2026-03-01T12:00:00.000Z',
        updatedAt: '2026-03-01T12:00:00.000Z',
      });
      const north = await createNucleus('Zona Norte');
      expect(decoded(NucleusList, await get('/api/v1/nuclei'), 200).items).to.deep.equal([north, south]);

      now += 60_000;
      const renamed = decoded(
        Nucleus,
        await send('PATCH', `/api/v1/nuclei/${south.nucleusId}`, { name: 'Centro' }),
        200,
      );
      expect(renamed).to.deep.equal({ ...south, name: 'Centro', updatedAt: '2026-03-01T12:01:00.000Z' });
      expect(decoded(NucleusList, await get('/api/v1/nuclei'), 200).items).to.deep.equal([renamed, north]);
    });

    it('refuses a name another nucleus has, case and accents aside: 409 NUCLEUS_NAME_TAKEN on create and rename', async () => {
      const south = await createNucleus('Zona Sul');
      const north = await createNucleus('Zona Norte');
      const taken = expectEnvelope(
        await send('POST', '/api/v1/nuclei', { name: 'zona súl' }),
        409,
        'CONFLICT',
      );
      expect(taken.details).to.deep.equal({ reason: 'NUCLEUS_NAME_TAKEN' });
      expect(
        expectEnvelope(
          await send('PATCH', `/api/v1/nuclei/${north.nucleusId}`, { name: 'ZONA SUL' }),
          409,
          'CONFLICT',
        ).details,
      ).to.deep.equal({ reason: 'NUCLEUS_NAME_TAKEN' });
      expect(decoded(NucleusList, await get('/api/v1/nuclei'), 200).items).to.deep.equal([north, south]);
    });

    it('refuses an empty or over-long name and writes to read-only fields, changing nothing', async () => {
      const south = await createNucleus('Zona Sul');
      for (const body of [{ name: '' }, { name: 'x'.repeat(121) }, {}]) {
        expectEnvelope(await send('POST', '/api/v1/nuclei', body), 400, 'VALIDATION_FAILED');
      }
      for (const body of [{ nucleusId: randomUUID() }, { createdAt: '2020-01-01T00:00:00Z' }, { name: '' }]) {
        const e = expectEnvelope(
          await send('PATCH', `/api/v1/nuclei/${south.nucleusId}`, body),
          400,
          'VALIDATION_FAILED',
        );
        expect(issuePaths(e)).to.have.length(1);
      }
      expect(decoded(NucleusList, await get('/api/v1/nuclei'), 200).items).to.deep.equal([south]);
    });

    it('answers 404 when renaming a nucleus that does not exist', async () => {
      expectEnvelope(
        await send('PATCH', `/api/v1/nuclei/${randomUUID()}`, { name: 'Centro' }),
        404,
        'NOT_FOUND',
      );
    });
  });

  describe('classes', () => {
    it('creates a class in a nucleus (201 with Location), lists classes by name, moves and detaches it', async () => {
      const south = await createNucleus('Zona Sul');
      const north = await createNucleus('Zona Norte');
      const r = await send('POST', '/api/v1/classes', { name: 'Juniores', nucleusId: south.nucleusId });
      const juniors = decoded(ClassC, r, 201);
      expect(r.headers.get('location')).to.equal(`/api/v1/classes/${juniors.classId}`);
      expect(juniors).to.deep.include({ name: 'Juniores', nucleusId: south.nucleusId });
      const babies = await createClass('Berçário');
      expect(babies.nucleusId).to.equal(null);
      expect(decoded(ClassList, await get('/api/v1/classes'), 200).items).to.deep.equal([babies, juniors]);

      const moved = decoded(
        ClassC,
        await send('PATCH', `/api/v1/classes/${juniors.classId}`, { nucleusId: north.nucleusId }),
        200,
      );
      expect(moved).to.deep.include({ name: 'Juniores', nucleusId: north.nucleusId });
      const detached = decoded(
        ClassC,
        await send('PATCH', `/api/v1/classes/${juniors.classId}`, { nucleusId: null, name: 'Juvenis' }),
        200,
      );
      expect(detached).to.deep.include({ name: 'Juvenis', nucleusId: null, createdAt: juniors.createdAt });
    });

    it('refuses an unknown nucleusId with 400 naming body.nucleusId, on create and on change', async () => {
      const created = expectEnvelope(
        await send('POST', '/api/v1/classes', { name: 'Juniores', nucleusId: randomUUID() }),
        400,
        'VALIDATION_FAILED',
      );
      expect(issuePaths(created)).to.deep.equal(['body.nucleusId']);
      expect(decoded(ClassList, await get('/api/v1/classes'), 200).items).to.deep.equal([]);

      const juniors = await createClass('Juniores');
      const changed = expectEnvelope(
        await send('PATCH', `/api/v1/classes/${juniors.classId}`, { nucleusId: randomUUID() }),
        400,
        'VALIDATION_FAILED',
      );
      expect(issuePaths(changed)).to.deep.equal(['body.nucleusId']);
      expect(decoded(ClassList, await get('/api/v1/classes'), 200).items).to.deep.equal([juniors]);
    });

    it('refuses writes to classId, createdAt and updatedAt, changing nothing', async () => {
      const juniors = await createClass('Juniores');
      for (const body of [
        { classId: randomUUID() },
        { createdAt: '2020-01-01T00:00:00Z' },
        { updatedAt: '2020-01-01T00:00:00Z' },
      ]) {
        const e = expectEnvelope(
          await send('PATCH', `/api/v1/classes/${juniors.classId}`, { name: 'Outro', ...body }),
          400,
          'VALIDATION_FAILED',
        );
        expect(issuePaths(e)).to.deep.equal([`body.${Object.keys(body)[0]}`]);
      }
      expectEnvelope(
        await send('POST', '/api/v1/classes', { name: 'Outra', classId: randomUUID() }),
        400,
        'VALIDATION_FAILED',
      );
      expect(decoded(ClassList, await get('/api/v1/classes'), 200).items).to.deep.equal([juniors]);
    });

    it('answers 404 when changing a class that does not exist', async () => {
      expectEnvelope(await send('PATCH', `/api/v1/classes/${randomUUID()}`, { name: 'X' }), 404, 'NOT_FOUND');
    });

    it('two concurrent changes to one class both land (compare-and-swap with retry)', async () => {
      const south = await createNucleus('Zona Sul');
      const juniors = await createClass('Juniores');
      const [a, b] = await Promise.all([
        send('PATCH', `/api/v1/classes/${juniors.classId}`, { name: 'Juvenis' }),
        send('PATCH', `/api/v1/classes/${juniors.classId}`, { nucleusId: south.nucleusId }),
      ]);
      expect([a?.status, b?.status]).to.deep.equal([200, 200]);
      const [stored] = decoded(ClassList, await get('/api/v1/classes'), 200).items;
      expect(stored).to.deep.include({ name: 'Juvenis', nucleusId: south.nucleusId });
    });

    it('a retried create with the same Idempotency-Key makes one class', async () => {
      const headers = mutationHeaders(ADMIN);
      const body = JSON.stringify({ name: 'Juniores' });
      const first = await call(`${h.url}/api/v1/classes`, { method: 'POST', headers, body });
      const again = await call(`${h.url}/api/v1/classes`, { method: 'POST', headers, body });
      expect(again.text).to.equal(first.text);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(decoded(ClassList, await get('/api/v1/classes'), 200).items).to.have.length(1);
    });
  });

  describe('class sessions', () => {
    it('schedules a session (201 with Location) whose nucleusId is copied from its class', async () => {
      const south = await createNucleus('Zona Sul');
      const juniors = await createClass('Juniores', south.nucleusId);
      const r = await send('POST', '/api/v1/sessions', {
        classId: juniors.classId,
        date: '2026-03-01',
        title: 'Culto infantil',
        startsAt: '2026-03-01T12:00:00Z',
        endsAt: '2026-03-01T13:30:00Z',
      });
      const session = decoded(ClassSession, r, 201);
      expect(r.headers.get('location')).to.equal(`/api/v1/sessions/${session.sessionId}`);
      expect(session).to.deep.include({
        classId: juniors.classId,
        nucleusId: south.nucleusId,
        date: '2026-03-01',
        title: 'Culto infantil',
        startsAt: '2026-03-01T12:00:00Z',
        endsAt: '2026-03-01T13:30:00Z',
      });
      const bare = await createSession({ classId: juniors.classId, date: '2026-03-08' });
      expect(bare).to.deep.include({ title: null, startsAt: null, endsAt: null });
    });

    it("a session's nucleusId follows its class: null without one, the new class's after a move, refreshed on the next write", async () => {
      const south = await createNucleus('Zona Sul');
      const north = await createNucleus('Zona Norte');
      const loose = await createClass('Berçário');
      const juniors = await createClass('Juniores', south.nucleusId);
      const session = await createSession({ classId: loose.classId, date: '2026-03-01' });
      expect(session.nucleusId).to.equal(null);

      const moved = decoded(
        ClassSession,
        await send('PATCH', `/api/v1/sessions/${session.sessionId}`, { classId: juniors.classId }),
        200,
      );
      expect(moved).to.deep.include({ classId: juniors.classId, nucleusId: south.nucleusId });

      await send('PATCH', `/api/v1/classes/${juniors.classId}`, { nucleusId: north.nucleusId });
      const [untouched] = await listSessions();
      expect(untouched?.nucleusId).to.equal(south.nucleusId);
      const retitled = decoded(
        ClassSession,
        await send('PATCH', `/api/v1/sessions/${session.sessionId}`, { title: 'Culto' }),
        200,
      );
      expect(retitled.nucleusId).to.equal(north.nucleusId);
    });

    it('refuses an unknown classId with 400 naming body.classId, on create and on change', async () => {
      const created = expectEnvelope(
        await send('POST', '/api/v1/sessions', { classId: randomUUID(), date: '2026-03-01' }),
        400,
        'VALIDATION_FAILED',
      );
      expect(issuePaths(created)).to.deep.equal(['body.classId']);
      const juniors = await createClass('Juniores');
      const session = await createSession({ classId: juniors.classId, date: '2026-03-01' });
      const changed = expectEnvelope(
        await send('PATCH', `/api/v1/sessions/${session.sessionId}`, { classId: randomUUID() }),
        400,
        'VALIDATION_FAILED',
      );
      expect(issuePaths(changed)).to.deep.equal(['body.classId']);
      expect(await listSessions()).to.deep.equal([session]);
    });

    it('refuses an endsAt not later than startsAt, also against the stored times on a change', async () => {
      const juniors = await createClass('Juniores');
      for (const endsAt of ['2026-03-01T11:00:00Z', '2026-03-01T12:00:00Z']) {
        const e = expectEnvelope(
          await send('POST', '/api/v1/sessions', {
            classId: juniors.classId,
            date: '2026-03-01',
            startsAt: '2026-03-01T12:00:00Z',
            endsAt,
          }),
          400,
          'VALIDATION_FAILED',
        );
        expect(issuePaths(e)).to.deep.equal(['body.endsAt']);
      }
      const session = await createSession({
        classId: juniors.classId,
        date: '2026-03-01',
        startsAt: '2026-03-01T12:00:00Z',
        endsAt: '2026-03-01T13:00:00Z',
      });
      const e = expectEnvelope(
        await send('PATCH', `/api/v1/sessions/${session.sessionId}`, { startsAt: '2026-03-01T14:00:00Z' }),
        400,
        'VALIDATION_FAILED',
      );
      expect(issuePaths(e)).to.deep.equal(['body.endsAt']);
      expect(await listSessions()).to.deep.equal([session]);
    });

    it('refuses a date that is not on the calendar (2026-02-30) and instants without Z', async () => {
      const juniors = await createClass('Juniores');
      for (const [body, path] of [
        [{ date: '2026-02-30' }, 'body.date'],
        [{ date: '2026-3-1' }, 'body.date'],
        [{ date: '2026-03-01', startsAt: '2026-03-01T12:00:00-03:00' }, 'body.startsAt'],
        [{ date: '2026-03-01', endsAt: '2026-03-01' }, 'body.endsAt'],
      ] as const) {
        const e = expectEnvelope(
          await send('POST', '/api/v1/sessions', { classId: juniors.classId, ...body }),
          400,
          'VALIDATION_FAILED',
        );
        // A nullable field reports once per union member (`body.startsAt.0`, `.1`), under its own path.
        expect(issuePaths(e).every((p) => p === path || p.startsWith(`${path}.`))).to.equal(true);
      }
      const e = expectEnvelope(await get('/api/v1/sessions?date=2026-02-30'), 400, 'VALIDATION_FAILED');
      expect(issuePaths(e)).to.deep.equal(['query.date']);
      expect(await listSessions()).to.deep.equal([]);
    });

    it('lists sessions by date, then start (untimed last), then title, filtered by date and by classId', async () => {
      const juniors = await createClass('Juniores');
      const babies = await createClass('Berçário');
      const untimed = await createSession({ classId: juniors.classId, date: '2026-03-01', title: 'A' });
      const late = await createSession({
        classId: babies.classId,
        date: '2026-03-01',
        startsAt: '2026-03-01T18:00:00Z',
      });
      const early = await createSession({
        classId: juniors.classId,
        date: '2026-03-01',
        startsAt: '2026-03-01T09:00:00.5Z',
      });
      const nextWeek = await createSession({ classId: juniors.classId, date: '2026-03-08' });
      const lastWeek = await createSession({ classId: babies.classId, date: '2026-02-22', title: 'B' });

      expect(await listSessions()).to.deep.equal([lastWeek, early, late, untimed, nextWeek]);
      expect(await listSessions('?date=2026-03-01')).to.deep.equal([early, late, untimed]);
      expect(await listSessions(`?classId=${babies.classId}`)).to.deep.equal([lastWeek, late]);
      expect(await listSessions(`?date=2026-03-01&classId=${juniors.classId}`)).to.deep.equal([
        early,
        untimed,
      ]);
      expect(await listSessions('?date=2026-03-02')).to.deep.equal([]);
      expectEnvelope(await get('/api/v1/sessions?nucleusId=x'), 400, 'VALIDATION_FAILED');
    });

    it('refuses mass assignment of sessionId, nucleusId and createdAt and changes nothing', async () => {
      const south = await createNucleus('Zona Sul');
      const juniors = await createClass('Juniores');
      const session = await createSession({ classId: juniors.classId, date: '2026-03-01' });
      for (const extra of [
        { sessionId: randomUUID() },
        { nucleusId: south.nucleusId },
        { createdAt: '2020-01-01T00:00:00Z' },
        { updatedAt: '2020-01-01T00:00:00Z' },
      ]) {
        const field = Object.keys(extra)[0];
        const patched = expectEnvelope(
          await send('PATCH', `/api/v1/sessions/${session.sessionId}`, { title: 'Novo', ...extra }),
          400,
          'VALIDATION_FAILED',
        );
        expect(issuePaths(patched)).to.deep.equal([`body.${field}`]);
        const created = expectEnvelope(
          await send('POST', '/api/v1/sessions', { classId: juniors.classId, date: '2026-03-08', ...extra }),
          400,
          'VALIDATION_FAILED',
        );
        expect(issuePaths(created)).to.deep.equal([`body.${field}`]);
      }
      expect(await listSessions()).to.deep.equal([session]);
    });

    it('changes the date and clears title and times with null', async () => {
      const juniors = await createClass('Juniores');
      const session = await createSession({
        classId: juniors.classId,
        date: '2026-03-01',
        title: 'Culto',
        startsAt: '2026-03-01T12:00:00Z',
        endsAt: '2026-03-01T13:00:00Z',
      });
      now += 1_000;
      const changed = decoded(
        ClassSession,
        await send('PATCH', `/api/v1/sessions/${session.sessionId}`, {
          date: '2026-03-02',
          title: null,
          startsAt: null,
        }),
        200,
      );
      expect(changed).to.deep.equal({
        ...session,
        date: '2026-03-02',
        title: null,
        startsAt: null,
        updatedAt: '2026-03-01T12:00:01.000Z',
      });
    });

    it('answers 404 when changing a session that does not exist', async () => {
      expectEnvelope(
        await send('PATCH', `/api/v1/sessions/${randomUUID()}`, { title: 'X' }),
        404,
        'NOT_FOUND',
      );
    });
  });

  describe('access', () => {
    it('CHAMADOR and RELATORIOS read every list but get 403 on every write', async () => {
      const south = await createNucleus('Zona Sul');
      const juniors = await createClass('Juniores', south.nucleusId);
      const session = await createSession({ classId: juniors.classId, date: '2026-03-01' });
      for (const token of [CHAMADOR, RELATORIOS]) {
        for (const path of ['/api/v1/nuclei', '/api/v1/classes', '/api/v1/sessions']) {
          const r = await get(path, token);
          expect(r.status, `${path}: ${r.text}`).to.equal(200);
        }
        const writes: ReadonlyArray<[string, string, unknown]> = [
          ['POST', '/api/v1/nuclei', { name: 'N' }],
          ['PATCH', `/api/v1/nuclei/${south.nucleusId}`, { name: 'N' }],
          ['POST', '/api/v1/classes', { name: 'C' }],
          ['PATCH', `/api/v1/classes/${juniors.classId}`, { name: 'C' }],
          ['POST', '/api/v1/sessions', { classId: juniors.classId, date: '2026-03-02' }],
          ['PATCH', `/api/v1/sessions/${session.sessionId}`, { title: 'S' }],
        ];
        for (const [method, path, body] of writes) {
          expectEnvelope(await send(method, path, body, token), 403, 'FORBIDDEN_ROLE');
        }
      }
      expect(decoded(NucleusList, await get('/api/v1/nuclei'), 200).items).to.deep.equal([south]);
      expect(decoded(ClassList, await get('/api/v1/classes'), 200).items).to.deep.equal([juniors]);
      expect(await listSessions()).to.deep.equal([session]);
    });

    it('CADASTRO creates and changes nuclei, classes and sessions', async () => {
      const south = decoded(Nucleus, await send('POST', '/api/v1/nuclei', { name: 'Sul' }, CADASTRO), 201);
      decoded(
        Nucleus,
        await send('PATCH', `/api/v1/nuclei/${south.nucleusId}`, { name: 'S' }, CADASTRO),
        200,
      );
      const juniors = decoded(
        ClassC,
        await send('POST', '/api/v1/classes', { name: 'J', nucleusId: south.nucleusId }, CADASTRO),
        201,
      );
      decoded(
        ClassC,
        await send('PATCH', `/api/v1/classes/${juniors.classId}`, { name: 'K' }, CADASTRO),
        200,
      );
      const session = decoded(
        ClassSession,
        await send('POST', '/api/v1/sessions', { classId: juniors.classId, date: '2026-03-01' }, CADASTRO),
        201,
      );
      decoded(
        ClassSession,
        await send('PATCH', `/api/v1/sessions/${session.sessionId}`, { title: 'T' }, CADASTRO),
        200,
      );
    });

    it('anonymous callers get 401 on reads and writes', async () => {
      for (const path of ['/api/v1/nuclei', '/api/v1/classes', '/api/v1/sessions']) {
        expectEnvelope(await call(`${h.url}${path}`), 401, 'UNAUTHORIZED');
        expectEnvelope(
          await call(`${h.url}${path}`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() },
            body: JSON.stringify({ name: 'X' }),
          }),
          401,
          'UNAUTHORIZED',
        );
      }
    });
  });
});
