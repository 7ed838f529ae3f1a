/**
 * Guessing a child's pick-up code (spec: "after N failed attempts 423"; decision 0015: N is the
 * configured `maxCheckoutAttempts`, default 5; each failure a CHECKOUT_ATTEMPT event; locked attempts
 * add none). The guesser here rotates callers, devices and codes, as someone at the desk with two
 * tablets would; the counter belongs to the check-in, so none of that may buy an extra try.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { CODE_ALPHABET } from '../../src/rules/checkin.js';
import { TOKENS, useService } from '../support/harness.js';
import { call, decodeAs, expectEnvelope, type HttpResult } from '../support/http.js';
import { authHeaders, DEVICE_ID, mutate } from '../support/testService.js';
import { figure } from './figures.js';
import {
  addStudent,
  auditOf,
  CheckInView,
  classAndSession,
  errorCodeOf,
  eventsOf,
  since,
  tallyText,
} from './helpers.js';

const Remaining = t.type({ remainingAttempts: t.number });
const Desk = t.type({ checkIn: t.type({ status: t.string, remainingAttempts: t.number }) });

/** `count` distinct 6-character codes from the label alphabet, none equal to `right`. */
const guesses = (right: string, count: number): string[] => {
  const base = CODE_ALPHABET.length;
  const out = new Set<string>();
  // Spread over the code space (base-31 digits of i × a large odd step), as an enumerating guesser would.
  for (let i = 1; out.size < count && i <= count * 2; i += 1) {
    let v = (i * 104_729 * 7_919) % base ** 6;
    let code = '';
    for (let j = 0; j < 6; j += 1) {
      code += CODE_ALPHABET[v % base];
      v = Math.floor(v / base);
    }
    if (code !== right) out.add(code);
  }
  return [...out];
};

describe('reliability: pick-up code brute force', function () {
  this.timeout(60_000);
  const h = useService({}, 'test');
  let checkin: CheckInView;

  const callers = [TOKENS.CHAMADOR, TOKENS.ADMIN];
  /** One guess, from caller `i % 2` on its own tablet, with its own Idempotency-Key. */
  const guess = (i: number, code: string): Promise<HttpResult> =>
    call(`${h.url}/api/v1/check-out`, {
      method: 'POST',
      headers: {
        ...authHeaders(callers[i % callers.length] ?? TOKENS.CHAMADOR),
        'X-Device-Id': i === 0 ? DEVICE_ID : randomUUID(),
        'Content-Type': 'application/json',
        'Idempotency-Key': randomUUID(),
      },
      body: JSON.stringify({ checkInId: checkin.checkInId, code, pickupPerson: 'Desconhecido' }),
    });
  const attempts = async () =>
    (await eventsOf(h.svc, 'CHECKOUT_ATTEMPT')).filter((e) => e.payload.checkInId === checkin.checkInId)
      .length;
  const audited = async () =>
    tallyText(
      (await auditOf(h.svc, 'POST /api/v1/check-out')).map((a) =>
        a.details.errorCode === undefined ? 'ok' : String(a.details.errorCode),
      ),
    );
  const desk = async () => {
    const r = await call(`${h.url}/api/v1/check-in/active?checkInId=${checkin.checkInId}`, {
      headers: authHeaders(TOKENS.CHAMADOR),
    });
    const { status, remainingAttempts } = decodeAs(Desk, r.json).checkIn;
    return { status, remainingAttempts };
  };
  const configure = async (maxCheckoutAttempts: number) => {
    const r = await mutate(
      `${h.url}/api/v1/church/check-in-config`,
      'PUT',
      { pickupMode: 'CODE_ONLY', maxCheckoutAttempts, emergencyCheckoutAdminOnly: false },
      TOKENS.ADMIN,
    );
    expect(r.status, r.text).to.equal(200);
  };

  beforeEach(async () => {
    const { classId, sessionId } = await classAndSession(h.svc);
    const studentId = await addStudent(h.svc, classId, { displayName: 'Alvo do Chute' });
    const r = await mutate(`${h.url}/api/v1/check-in`, 'POST', { studentId, sessionId }, TOKENS.CHAMADOR);
    expect(r.status, r.text).to.equal(201);
    checkin = decodeAs(CheckInView, r.json);
  });

  it('sequential: N = 3 (configured) wrong codes from two callers → 400 ×3, then 423 for every try, the right code included', async () => {
    const n = 3;
    await configure(n);
    const codes = guesses(checkin.code, 8);
    const results: HttpResult[] = [];
    for (const [i, code] of codes.entries()) results.push(await guess(i, code));
    const right = await guess(99, checkin.code);
    const events = await attempts();
    const state = await desk();
    const audit = await audited();
    const statuses = results.map((r) => `${r.status} ${errorCodeOf(r) ?? ''}`.trim());
    figure(
      'pick-up brute force (sequential)',
      `N=${n}: ${tallyText(statuses)}, right code after → ${right.status}; ${events} CHECKOUT_ATTEMPT events; ` +
        `desk: ${state.status}, ${state.remainingAttempts} left; audit ${audit}`,
    );

    const mismatches = results
      .slice(0, n)
      .map((r) => expectEnvelope(r, 400, 'CHECKOUT_CODE_MISMATCH').details);
    expect(mismatches.map((d) => decodeAs(Remaining, d).remainingAttempts)).to.deep.equal([2, 1, 0]);
    for (const r of results.slice(n)) expectEnvelope(r, 423, 'CHECKOUT_LOCKED');
    expectEnvelope(right, 423, 'CHECKOUT_LOCKED');
    expect(events).to.equal(n);
    expect(state).to.deep.equal({ status: 'CHECKED_IN', remainingAttempts: 0 });
    expect(audit).to.equal(`${n}×CHECKOUT_CODE_MISMATCH, ${codes.length - n + 1}×CHECKOUT_LOCKED`);
  });

  it('50 concurrent distinct wrong codes (two callers, 50 devices) → exactly N = 5 counted, 45 × 423', async () => {
    const n = 5;
    const burst = 50;
    const codes = guesses(checkin.code, burst);
    expect(codes).to.have.length(burst);
    const started = process.hrtime.bigint();
    const results = await Promise.all(codes.map((code, i) => guess(i, code)));
    const elapsed = since(started);
    const right = await guess(0, checkin.code);
    const events = await attempts();
    const state = await desk();
    const statuses = results.map((r) => `${r.status} ${errorCodeOf(r) ?? ''}`.trim());
    const remaining = results
      .filter((r) => r.status === 400)
      .map(
        (r) =>
          decodeAs(t.type({ error: t.type({ details: Remaining }) }), r.json).error.details.remainingAttempts,
      )
      .sort();
    figure(
      'pick-up brute force (concurrent)',
      `${burst} concurrent → ${tallyText(statuses)} (remaining ${remaining.join(',')}), right code after → ` +
        `${right.status}; ${events} CHECKOUT_ATTEMPT events; desk ${state.remainingAttempts} left; ${elapsed} ms`,
    );

    expect(tallyText(statuses)).to.equal(`${n}×400 CHECKOUT_CODE_MISMATCH, ${burst - n}×423 CHECKOUT_LOCKED`);
    // Each remaining count answered once: no two guesses were counted as the same failure.
    expect(remaining).to.deep.equal([0, 1, 2, 3, 4]);
    expectEnvelope(right, 423, 'CHECKOUT_LOCKED');
    expect(events).to.equal(n);
    expect(state).to.deep.equal({ status: 'CHECKED_IN', remainingAttempts: 0 });
  });
});
