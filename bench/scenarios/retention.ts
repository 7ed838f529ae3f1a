/**
 * The retention job (decision 0045) on a ministry's worth of records: 5,000 children (2,000 with
 * the check-in and check-out of one session each, taken by a tablet's sync) of whom 200 are deleted.
 * Three rows: the daily run when nothing is due (what every night and every start costs), the run
 * that deletes the 2,000 check-ins with their events and projections once past their period, and the
 * run that anonymises the 200 deleted children once past theirs, each per record ended. The preview,
 * which reads what the run reads and writes nothing, is the daily run's baseline. Printed, never
 * asserted.
 */
import { randomUUID } from 'node:crypto';
import { mutationHeaders, startTestService, type TestService } from '../../test/support/testService.js';
import { median, spread } from '../stats.js';
import type { ScenarioResult } from './types.js';

const ADMIN = 'dev-admin-token-0123456789';
const DAY_MS = 86_400_000;

const post = async (svc: TestService, path: string, body: unknown, method = 'POST'): Promise<unknown> => {
  const r = await fetch(`${svc.url}${path}`, {
    method,
    headers: {
      ...mutationHeaders(ADMIN, randomUUID()),
      ...(typeof body === 'string' ? { 'Content-Type': 'text/csv' } : {}),
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`${path} answered ${r.status}: ${text.slice(0, 200)}`);
  return JSON.parse(text);
};

const field = (body: unknown, key: string): string => {
  const v: unknown = typeof body === 'object' && body !== null ? Reflect.get(body, key) : undefined;
  if (typeof v !== 'string') throw new Error(`no ${key}`);
  return v;
};

const csvOf = (rows: number): string =>
  [
    'Código;Nome;Responsável;Telefone;Turma',
    ...Array.from(
      { length: rows },
      (_, i) =>
        `R-${i};Criança ${i} Retida;Responsável ${i};(11) 9${String(10_000_000 + i).slice(-8)};Maternal`,
    ),
  ].join('\r\n');

const seconds = async (work: () => Promise<unknown>): Promise<number> => {
  const started = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - started) / 1e9;
};

/** A service holding the records, its clock movable. */
const seeded = async (quick: boolean) => {
  const scale = quick ? 5 : 1;
  const students = 5_000 / scale;
  const checkedIn = 2_000 / scale;
  const deleted = 200 / scale;
  let offset = 0;
  const svc = await startTestService({
    clock: () => new Date(Date.now() + offset),
    env: { RATE_LIMIT_REQUESTS: '0' },
  });
  const classId = field(await post(svc, '/api/v1/classes', { name: 'Maternal' }), 'classId');
  const today = new Date().toISOString().slice(0, 10);
  const sessionId = field(await post(svc, '/api/v1/sessions', { classId, date: today }), 'sessionId');
  await post(svc, '/api/v1/imports/students?dryRun=false', csvOf(students));
  const ids: string[] = [];
  for (let cursor: string | null = null; ; ) {
    const r = await fetch(
      `${svc.url}/api/v1/students?limit=200${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
      { headers: mutationHeaders(ADMIN) },
    );
    const page: unknown = await r.json();
    const items: unknown = Reflect.get(Object(page), 'items');
    if (Array.isArray(items)) for (const i of items) ids.push(field(i, 'studentId'));
    const next: unknown = Reflect.get(Object(page), 'nextCursor');
    if (typeof next !== 'string') break;
    cursor = next;
  }
  const events = ids.slice(0, checkedIn).flatMap((studentId) => {
    const checkInId = randomUUID();
    const checkIn = randomUUID();
    const at = new Date().toISOString();
    return [
      { eventId: checkIn, type: 'CHECK_IN', studentId, sessionId, checkInId, clientTimestamp: at },
      {
        eventId: randomUUID(),
        type: 'CHECK_OUT',
        studentId,
        sessionId,
        checkInId,
        pickupPerson: 'Responsável da criança',
        baseVersion: checkIn,
        clientTimestamp: at,
      },
    ];
  });
  for (let i = 0; i < events.length; i += 500)
    await post(svc, '/api/v1/sync/events', { events: events.slice(i, i + 500) });
  for (const studentId of ids.slice(ids.length - deleted))
    await post(svc, `/api/v1/students/${studentId}/delete`, {
      justification: 'Pedido da família, por escrito',
    });
  await post(
    svc,
    '/api/v1/church/retention',
    { deletedStudentDays: 60, attendanceDays: 30, pageDays: 30, auditDays: 365 },
    'PUT',
  );
  await svc.deps.sync.pipeline.catchUp();
  return {
    svc,
    deleted,
    checkedIn,
    forward: (days: number) => {
      offset += days * DAY_MS;
    },
  };
};

export const retention = async (quick: boolean): Promise<ScenarioResult[]> => {
  const runs = quick ? 3 : 5;
  const { svc, deleted, checkedIn, forward } = await seeded(quick);
  try {
    const retention = svc.deps.registration.retention;
    // The start-up run, and anything it found, out of the way first.
    await retention.run();
    const daily: number[] = [];
    const previews: number[] = [];
    for (let i = 0; i < runs; i += 1) {
      previews.push(await seconds(() => retention.preview()));
      daily.push(await seconds(() => retention.run()));
    }
    // Past the attendance period first (the check-ins), then past the deleted children's.
    forward(40);
    const checkins = await retention.preview();
    if (checkins.checkInsDeleted.count !== checkedIn || checkins.studentsAnonymised.count !== 0)
      throw new Error(`expected ${checkedIn} check-ins due, the preview lists ${JSON.stringify(checkins)}`);
    const endingCheckins = await seconds(() => retention.run());
    forward(30);
    const students = await retention.preview();
    if (students.studentsAnonymised.count !== deleted)
      throw new Error(`expected ${deleted} children due, the preview lists ${JSON.stringify(students)}`);
    const anonymising = await seconds(() => retention.run());
    const ms = (s: number) => s * 1000;
    return [
      {
        scenario: `retention: a daily run with nothing due (${quick ? 1_000 : 5_000} children, 2 events each of ${quick ? 400 : 2_000})`,
        unit: 'ms',
        median: ms(median(daily)),
        spread: { min: ms(spread(daily).min), max: ms(spread(daily).max) },
        p99Ms: undefined,
        baseline: {
          name: 'preview',
          median: ms(median(previews)),
          spread: { min: ms(spread(previews).min), max: ms(spread(previews).max) },
        },
        ratio: median(daily) / median(previews),
        target: undefined,
        runs,
      },
      {
        scenario: `retention: the run that deletes ${checkedIn} check-ins past their period (records, events, projections)`,
        unit: 'ms per check-in',
        median: ms(endingCheckins) / checkedIn,
        spread: { min: ms(endingCheckins) / checkedIn, max: ms(endingCheckins) / checkedIn },
        p99Ms: undefined,
        baseline: undefined,
        ratio: undefined,
        target: undefined,
        runs: 1,
      },
      {
        scenario: `retention: the run that anonymises ${deleted} deleted children`,
        unit: 'ms per child',
        median: ms(anonymising) / deleted,
        spread: { min: ms(anonymising) / deleted, max: ms(anonymising) / deleted },
        p99Ms: undefined,
        baseline: undefined,
        ratio: undefined,
        target: undefined,
        runs: 1,
      },
    ];
  } finally {
    await svc.dispose();
  }
};
