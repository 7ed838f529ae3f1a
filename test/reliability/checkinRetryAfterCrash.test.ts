/**
 * A check-in whose process died after its event was stored and before it answered: the embedded
 * store's idempotency ledger holds claims in memory (decision 0019), so after the restart the client's
 * retry runs again at once instead of waiting out a stored claim's lease. It must still never make a
 * second check-in: the first decision after a start waits for the pipeline to project what was stored
 * before it, so the retry sees the check-in and is told 409, and no second CHECK_IN event is stored.
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import * as t from 'io-ts';
import { checkinAspect } from '../../src/domain/eventTypes.js';
import { createLogger } from '../../src/log/logger.js';
import { type RunningService, startService } from '../../src/service.js';
import { eventStore } from '../../src/store/events.js';
import { openStore } from '../../src/store/store.js';
import { call, decodeAs, expectEnvelope } from '../support/http.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';
import {
  authHeaders,
  DEV_TOKENS,
  mutationHeaders,
  type TestService,
  testConfig,
} from '../support/testService.js';
import { addStudent, classAndSession, eventsOf } from './helpers.js';

/** Record-keeping events the pipeline skims: a backlog it is still reading when the retry comes. */
const BACKLOG = 3_000;

describe('reliability: a check-in retried after a crash between its event and its answer', function () {
  this.timeout(120_000);
  let dir: string;
  let running: RunningService | undefined;

  const start = async (): Promise<TestService> => {
    const config = testConfig({ DATA_DIR: dir, AUTH_MODE: 'dev', ...DEV_TOKENS });
    const sink = new Writable({ write: (_c, _e, done) => done() });
    const svc = await startService(config, { logger: createLogger('info', sink) });
    running = svc;
    return { ...svc, logLines: () => [], rawLog: () => '', dispose: () => svc.stop(1000) };
  };

  beforeEach(async () => {
    dir = await makeTempDir('crash-retry');
  });
  afterEach(async () => {
    await running?.stop(1000);
    running = undefined;
    await removeDir(dir);
  });

  it('the retry is told 409 ALREADY_CHECKED_IN, and one CHECK_IN event is stored', async () => {
    const first = await start();
    const roster = await classAndSession(first);
    const studentId = await addStudent(first, roster.classId, { displayName: 'Queda Antes da Resposta' });
    await first.stop(1000);
    running = undefined;

    // What the crashed request left: its CHECK_IN event, stored behind a backlog, never projected.
    const store = await openStore({ kind: 'embedded', dataDir: dir, prefix: 'chamada_' });
    const at = new Date().toISOString();
    const actor = { userId: 'dev-caller', role: 'CHAMADOR' };
    const common = { deviceId: null, clientTimestamp: at, serverTimestamp: at, actor };
    await eventStore(store.db.events).appendMany(
      Array.from({ length: BACKLOG }, () => ({
        ...common,
        eventId: randomUUID(),
        type: 'CHECKOUT_ATTEMPT',
        subjectType: 'CHECK_IN',
        subjectId: studentId,
        payload: { checkInId: randomUUID(), sessionId: roster.sessionId, failedAttempts: 1 },
      })),
    );
    const crashedCheckInId = randomUUID();
    await eventStore(store.db.events).append({
      ...common,
      eventId: randomUUID(),
      type: 'CHECK_IN',
      subjectType: 'CHECK_IN',
      subjectId: studentId,
      aspect: checkinAspect(roster.sessionId, studentId),
      baseVersion: null,
      payload: { checkInId: crashedCheckInId, sessionId: roster.sessionId, visitor: false },
    });
    await store.close();

    const svc = await start();
    const retry = await call(`${svc.url}/api/v1/check-in`, {
      method: 'POST',
      headers: mutationHeaders(DEV_TOKENS.DEV_CALLER_TOKEN),
      body: JSON.stringify({ studentId, sessionId: roster.sessionId }),
    });
    expectEnvelope(retry, 409, 'CONFLICT');
    expect(retry.json).to.have.nested.property('error.details.reason', 'ALREADY_CHECKED_IN');
    const checkIns = (await eventsOf(svc, 'CHECK_IN')).filter((e) => e.subjectId === studentId);
    expect(checkIns).to.have.length(1);
    const desk = await call(
      `${svc.url}/api/v1/check-in/active?studentId=${studentId}&sessionId=${roster.sessionId}`,
      { headers: authHeaders(DEV_TOKENS.DEV_CALLER_TOKEN) },
    );
    expect(desk.status, desk.text).to.equal(200);
    expect(
      decodeAs(t.type({ checkIn: t.type({ checkInId: t.string }) }), desk.json).checkIn.checkInId,
    ).to.equal(crashedCheckInId);
  });
});
