/** Check-in, check-out and the pickup desk, black-box through the real app. */
import { createHmac, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { asBytes } from '../../src/crypto/bytes.js';
import { CODE_ALPHABET, dailyCode } from '../../src/rules/checkin.js';
import { TOKENS, useService } from '../support/harness.js';
import { call, decodeAs, expectEnvelope, type HttpResult } from '../support/http.js';
import { authHeaders, mutate, mutationHeaders } from '../support/testService.js';

const CheckIn = t.type({
  checkInId: t.string,
  studentId: t.string,
  code: t.string,
  remainingAttempts: t.number,
  status: t.string,
});

describe('check-in and check-out', function () {
  this.timeout(60_000);
  const h = useService({}, 'test');
  let sessionId: string;
  let studentId: string;
  const url = (p: string) => `${h.url}${p}`;
  const send = (method: string, path: string, body?: unknown, token: string = TOKENS.CHAMADOR) =>
    mutate(url(path), method, body, token);
  const checkIn = async (sid = studentId): Promise<t.TypeOf<typeof CheckIn>> => {
    const r = await send('POST', '/api/v1/check-in', { studentId: sid, sessionId });
    expect(r.status, r.text).to.equal(201);
    return decodeAs(CheckIn, r.json);
  };
  const wrongCode = (code: string) => (code.startsWith('2') ? `3${code.slice(1)}` : `2${code.slice(1)}`);
  const attemptEvents = async (checkInId: string) =>
    (await h.svc.store.db.events.find({ selector: { type: 'CHECKOUT_ATTEMPT' }, limit: 1000 })).docs.filter(
      (d) => JSON.stringify(d).includes(checkInId),
    ).length;

  beforeEach(async () => {
    const c = await send('POST', '/api/v1/classes', { name: 'Turma A' }, TOKENS.CADASTRO);
    const classId = decodeAs(t.type({ classId: t.string }), c.json).classId;
    const s = await send('POST', '/api/v1/sessions', { classId, date: '2026-11-25' }, TOKENS.CADASTRO);
    sessionId = decodeAs(t.type({ sessionId: t.string }), s.json).sessionId;
    const st = await send(
      'POST',
      '/api/v1/students',
      {
        displayName: 'João',
        guardianName: 'Cláudia Silva',
        phones: [{ number: '+55 11 5555-0101', qualifier: 'mãe' }],
        classId,
        allergies: 'Amendoim',
      },
      TOKENS.CADASTRO,
    );
    studentId = decodeAs(t.type({ studentId: t.string }), st.json).studentId;
  });

  describe('configuration', () => {
    it('answers the defaults and creates the secret on first read, never sending it', async () => {
      const r = await call(url('/api/v1/church/check-in-config'), {
        headers: authHeaders(TOKENS.CHAMADOR),
      });
      expect(r.json).to.deep.equal({
        pickupMode: 'CODE_ONLY',
        maxCheckoutAttempts: 5,
        emergencyCheckoutAdminOnly: false,
        requiredFields: [],
      });
      const secret = await h.svc.store.db.private.get('checkin-secret');
      expect(JSON.stringify(secret)).to.match(/"secret":"[A-Za-z0-9_-]{43}"/);
      expect(r.text).not.to.contain('secret');
    });

    it('PUT (ADMIN) validates and stores; a body without requiredFields requires none; CHAMADOR → 403', async () => {
      const body = {
        pickupMode: 'CODE_AND_ADULT',
        maxCheckoutAttempts: 3,
        emergencyCheckoutAdminOnly: true,
        requiredFields: ['birthDate', 'allergies'],
      };
      expect((await send('PUT', '/api/v1/church/check-in-config', body, TOKENS.ADMIN)).json).to.deep.equal(
        body,
      );
      expect(
        (
          await call(url('/api/v1/church/check-in-config'), {
            headers: authHeaders(TOKENS.ADMIN),
          })
        ).json,
      ).to.deep.equal(body);
      const { requiredFields: _r, ...older } = body;
      expect((await send('PUT', '/api/v1/church/check-in-config', older, TOKENS.ADMIN)).json).to.deep.equal({
        ...older,
        requiredFields: [],
      });
      for (const requiredFields of [['birthDate', 'birthDate'], ['shoeSize']])
        expectEnvelope(
          await send('PUT', '/api/v1/church/check-in-config', { ...body, requiredFields }, TOKENS.ADMIN),
          400,
          'VALIDATION_FAILED',
        );
      expectEnvelope(
        await send(
          'PUT',
          '/api/v1/church/check-in-config',
          { ...body, maxCheckoutAttempts: 0 },
          TOKENS.ADMIN,
        ),
        400,
        'VALIDATION_FAILED',
      );
      expectEnvelope(await send('PUT', '/api/v1/church/check-in-config', body), 403, 'FORBIDDEN_ROLE');
    });

    it('concurrent PUTs all succeed and one of them is what is stored (the fuzz found 500s here)', async () => {
      const bodies = Array.from({ length: 16 }, (_, i) => ({
        pickupMode: i % 2 === 0 ? 'CODE_ONLY' : 'CODE_AND_ADULT',
        maxCheckoutAttempts: 1 + i,
        emergencyCheckoutAdminOnly: i % 3 === 0,
        requiredFields: i % 4 === 0 ? ['guardianPhone'] : [],
      }));
      const answers = await Promise.all(
        bodies.map((b) => send('PUT', '/api/v1/church/check-in-config', b, TOKENS.ADMIN)),
      );
      expect(answers.map((r) => r.status)).to.deep.equal(bodies.map(() => 200));
      const stored = (
        await call(url('/api/v1/church/check-in-config'), {
          headers: authHeaders(TOKENS.ADMIN),
        })
      ).json;
      expect(bodies).to.deep.include(stored);
    });
  });

  describe('check-in', () => {
    it('answers 201 with a 6-character daily code for the label; a second check-in → 409', async () => {
      const c = await checkIn();
      expect(c.code).to.match(new RegExp(`^[${CODE_ALPHABET}]{6}$`));
      expect(c).to.deep.include({ status: 'CHECKED_IN', remainingAttempts: 5 });
      expectEnvelope(await send('POST', '/api/v1/check-in', { studentId, sessionId }), 409, 'CONFLICT');
    });

    it('unknown student or session → 404; a deleted student → 409; RELATORIOS → 403', async () => {
      expectEnvelope(
        await send('POST', '/api/v1/check-in', { studentId: randomUUID(), sessionId }),
        404,
        'NOT_FOUND',
      );
      expectEnvelope(
        await send('POST', '/api/v1/check-in', { studentId, sessionId: randomUUID() }),
        404,
        'NOT_FOUND',
      );
      await send(
        'POST',
        `/api/v1/students/${studentId}/delete`,
        { justification: 'saiu da igreja' },
        TOKENS.ADMIN,
      );
      expectEnvelope(await send('POST', '/api/v1/check-in', { studentId, sessionId }), 409, 'CONFLICT');
      expectEnvelope(
        await send('POST', '/api/v1/check-in', { studentId, sessionId }, TOKENS.RELATORIOS),
        403,
        'FORBIDDEN_ROLE',
      );
    });

    it("the data-subject export lists the child's check-ins without the pickup code hash of any entry", async () => {
      const c = await checkIn();
      const r = await call(url(`/api/v1/students/${studentId}/export`), {
        headers: authHeaders(TOKENS.ADMIN),
      });
      expect(r.status, r.text).to.equal(200);
      expect(r.json).to.have.nested.property('checkIns[0].checkInId', c.checkInId);
      expect(r.text).not.to.contain('otpHash');
    });

    it('registers a walk-in visitor and checks them in', async () => {
      const r = await send('POST', '/api/v1/check-in', {
        sessionId,
        visitor: { displayName: 'Visitante Zé', guardianName: 'Tia Ana', phone: '+55 11 5555-9999' },
      });
      expect(r.status, r.text).to.equal(201);
      const c = decodeAs(CheckIn, r.json);
      const student = await call(url(`/api/v1/students/${c.studentId}`), {
        headers: authHeaders(TOKENS.ADMIN),
      });
      expect(student.json).to.deep.include({ displayName: 'Visitante Zé', visitor: true });
      expectEnvelope(await send('POST', '/api/v1/check-in', { sessionId }), 400, 'VALIDATION_FAILED');
    });

    it('the pickup desk sees the child, health notes and who may collect, by ids or by check-in', async () => {
      const c = await checkIn();
      for (const q of [`checkInId=${c.checkInId}`, `studentId=${studentId}&sessionId=${sessionId}`]) {
        const r = await call(url(`/api/v1/check-in/active?${q}`), {
          headers: authHeaders(TOKENS.CHAMADOR),
        });
        expect(r.status, r.text).to.equal(200);
        expect(r.json).to.have.nested.property('child.allergies', 'Amendoim');
        expect(r.json).to.have.nested.property('child.photoRef', null);
        expect(r.json).to.have.nested.property('mayCollect[0].name', 'Cláudia Silva');
        expect(r.json).to.have.nested.property('mayCollect[0].phoneSuffix', '0101');
      }
      expectEnvelope(
        await call(url(`/api/v1/check-in/active?checkInId=${randomUUID()}`), {
          headers: authHeaders(TOKENS.CHAMADOR),
        }),
        404,
        'NOT_FOUND',
      );
      expectEnvelope(
        await call(url(`/api/v1/check-in/active?studentId=${studentId}`), {
          headers: authHeaders(TOKENS.CHAMADOR),
        }),
        400,
        'VALIDATION_FAILED',
      );
    });
  });

  describe('check-out', () => {
    const out = (checkInId: string, code: string, extra: Record<string, unknown> = {}) =>
      send('POST', '/api/v1/check-out', { checkInId, code, pickupPerson: 'Cláudia Silva', ...extra });

    it('the right code checks the child out (CHECK_OUT event); a second check-out → 409', async () => {
      const c = await checkIn();
      const r = await out(c.checkInId, c.code.toLowerCase());
      expect(r.status, r.text).to.equal(200);
      expect(r.json).to.deep.include({
        status: 'CHECKED_OUT',
        pickupPerson: 'Cláudia Silva',
        emergency: false,
      });
      expectEnvelope(await out(c.checkInId, c.code), 409, 'CONFLICT');
      expect((await h.svc.store.db.events.find({ selector: { type: 'CHECK_OUT' } })).docs).to.have.length(1);
      // Checked out, the child can be checked in again to the same session.
      await checkIn();
    });

    it('locks at exactly N failures: 400 with remaining attempts N-1..0, then 423 for every attempt, the right code included', async () => {
      const c = await checkIn();
      const results: HttpResult[] = [];
      for (let i = 0; i < 5; i += 1) results.push(await out(c.checkInId, wrongCode(c.code)));
      expect(results.map((r) => expectEnvelope(r, 400, 'CHECKOUT_CODE_MISMATCH').details)).to.deep.equal(
        [0, 1, 2, 3, 4].map((i) => ({ remainingAttempts: 4 - i })),
      );
      expectEnvelope(await out(c.checkInId, wrongCode(c.code)), 423, 'CHECKOUT_LOCKED');
      expectEnvelope(await out(c.checkInId, c.code), 423, 'CHECKOUT_LOCKED');
      expect(await attemptEvents(c.checkInId)).to.equal(5);
      const e = await send('POST', '/api/v1/check-out/emergency', {
        checkInId: c.checkInId,
        justification: 'Mãe sem o código, identidade conferida',
        pickupPerson: 'Cláudia Silva',
      });
      expect(e.status, e.text).to.equal(200);
      expect(e.json).to.deep.include({ status: 'CHECKED_OUT', emergency: true });
      expect(
        (await h.svc.store.db.events.find({ selector: { type: 'EMERGENCY_CHECKOUT' } })).docs,
      ).to.have.length(1);
    });

    it('a code that is not 6 characters of the code alphabet → 400 VALIDATION_FAILED, never counted towards the lock', async () => {
      const c = await checkIn();
      const notCodes = [
        c.code.slice(0, 5), // one character short
        `${c.code}2`, // one too many
        c.code.replace(/./, '0'), // 0, O, 1, I, L are not in the alphabet
        c.code.replace(/./, 'I'),
        ` ${c.code.slice(1)}`,
        '',
      ];
      // More malformed codes than the lock allows attempts: none of them may lock the check-in.
      for (const code of [...notCodes, ...notCodes]) {
        const r = expectEnvelope(await out(c.checkInId, code), 400, 'VALIDATION_FAILED');
        expect(JSON.stringify(r.details), code).to.contain('body.code');
      }
      expect(await attemptEvents(c.checkInId)).to.equal(0);
      // A wrong code of the right form still counts, and the lock is untouched: 4 tries remain.
      expect(
        expectEnvelope(await out(c.checkInId, wrongCode(c.code)), 400, 'CHECKOUT_CODE_MISMATCH').details,
      ).to.deep.equal({
        remainingAttempts: 4,
      });
      expect((await out(c.checkInId, c.code.toLowerCase())).status).to.equal(200);
    });

    it('50 concurrent wrong codes never allow more than the limit', async () => {
      const c = await checkIn();
      const results = await Promise.all(
        Array.from({ length: 50 }, () => out(c.checkInId, wrongCode(c.code))),
      );
      const mismatches = results.filter((r) => r.status === 400).length;
      const locked = results.filter((r) => r.status === 423).length;
      expect([mismatches, locked]).to.deep.equal([5, 45]);
      expect(await attemptEvents(c.checkInId)).to.equal(5);
      process.stdout.write(`      50 concurrent wrong codes: ${mismatches} counted, ${locked} locked\n`);
    });

    it('an unknown check-in → 404 on check-out and emergency; anonymous → 401', async () => {
      expectEnvelope(await out(randomUUID(), '222222'), 404, 'NOT_FOUND');
      expectEnvelope(
        await send('POST', '/api/v1/check-out/emergency', {
          checkInId: randomUUID(),
          justification: 'long enough reason',
          pickupPerson: 'x',
        }),
        404,
        'NOT_FOUND',
      );
      expectEnvelope(
        await call(url('/api/v1/check-out'), { method: 'POST', body: '{}' }),
        401,
        'UNAUTHORIZED',
      );
    });

    it('an emergency check-out of a child already out → 409; RELATORIOS cannot check out (403)', async () => {
      const c = await checkIn();
      expectEnvelope(
        await send(
          'POST',
          '/api/v1/check-out',
          { checkInId: c.checkInId, code: c.code, pickupPerson: 'x' },
          TOKENS.RELATORIOS,
        ),
        403,
        'FORBIDDEN_ROLE',
      );
      expect((await out(c.checkInId, c.code)).status).to.equal(200);
      expectEnvelope(
        await send('POST', '/api/v1/check-out/emergency', {
          checkInId: c.checkInId,
          justification: 'long enough reason',
          pickupPerson: 'x',
        }),
        409,
        'CONFLICT',
      );
    });

    it('two concurrent correct check-outs: one 200, one 409', async () => {
      const c = await checkIn();
      const statuses = (await Promise.all([out(c.checkInId, c.code), out(c.checkInId, c.code)]))
        .map((r) => r.status)
        .sort();
      expect(statuses).to.deep.equal([200, 409]);
    });

    it('a retry with the same Idempotency-Key does not count a second failure', async () => {
      const c = await checkIn();
      const headers = mutationHeaders(TOKENS.CHAMADOR);
      const body = JSON.stringify({ checkInId: c.checkInId, code: wrongCode(c.code), pickupPerson: 'x' });
      await call(url('/api/v1/check-out'), { method: 'POST', headers, body });
      const again = await call(url('/api/v1/check-out'), { method: 'POST', headers, body });
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(await attemptEvents(c.checkInId)).to.equal(1);
    });

    it('CODE_AND_ADULT: the adult must be a guardian with the phone suffix', async () => {
      await send(
        'PUT',
        '/api/v1/church/check-in-config',
        { pickupMode: 'CODE_AND_ADULT', maxCheckoutAttempts: 5, emergencyCheckoutAdminOnly: false },
        TOKENS.ADMIN,
      );
      const c = await checkIn();
      expectEnvelope(
        await out(c.checkInId, c.code, { pickupPerson: 'Estranho', pickupPhoneSuffix: '0101' }),
        403,
        'PICKUP_NOT_AUTHORIZED',
      );
      expectEnvelope(
        await out(c.checkInId, c.code, { pickupPerson: 'claudia silva', pickupPhoneSuffix: '9999' }),
        403,
        'PICKUP_NOT_AUTHORIZED',
      );
      expect(
        (await out(c.checkInId, c.code, { pickupPerson: 'claudia silva', pickupPhoneSuffix: '0101' })).status,
      ).to.equal(200);
    });

    it('emergency check-out follows the policy both ways', async () => {
      const c = await checkIn();
      const body = {
        checkInId: c.checkInId,
        justification: 'Criança passou mal, levada pela tia',
        pickupPerson: 'Tia',
      };
      await send(
        'PUT',
        '/api/v1/church/check-in-config',
        { pickupMode: 'CODE_ONLY', maxCheckoutAttempts: 5, emergencyCheckoutAdminOnly: true },
        TOKENS.ADMIN,
      );
      expectEnvelope(await send('POST', '/api/v1/check-out/emergency', body), 403, 'FORBIDDEN_ROLE');
      expect((await send('POST', '/api/v1/check-out/emergency', body, TOKENS.ADMIN)).status).to.equal(200);
      const d = await checkIn();
      await send(
        'PUT',
        '/api/v1/church/check-in-config',
        { pickupMode: 'CODE_ONLY', maxCheckoutAttempts: 5, emergencyCheckoutAdminOnly: false },
        TOKENS.ADMIN,
      );
      expect(
        (await send('POST', '/api/v1/check-out/emergency', { ...body, checkInId: d.checkInId })).status,
      ).to.equal(200);
      expectEnvelope(
        await send('POST', '/api/v1/check-out/emergency', {
          ...body,
          checkInId: d.checkInId,
          justification: 'short',
        }),
        400,
        'VALIDATION_FAILED',
      );
    });
  });
});

describe('day keys for offline devices', () => {
  const now = Date.parse('2026-11-25T23:30:00.000Z');
  const h = useService({ clock: () => new Date(now) }, 'test');
  it('give today and the next two UTC days; a device computes the label code the server printed', async () => {
    const send = (method: string, path: string, body: unknown, token: string = TOKENS.CADASTRO) =>
      call(`${h.url}${path}`, { method, headers: mutationHeaders(token), body: JSON.stringify(body) });
    const classId = decodeAs(
      t.type({ classId: t.string }),
      (await send('POST', '/api/v1/classes', { name: 'A' })).json,
    ).classId;
    const sessionId = decodeAs(
      t.type({ sessionId: t.string }),
      (await send('POST', '/api/v1/sessions', { classId, date: '2026-11-25' })).json,
    ).sessionId;
    const studentId = decodeAs(
      t.type({ studentId: t.string }),
      (
        await send('POST', '/api/v1/students', {
          displayName: 'Ana',
          guardianName: 'G',
          phones: [],
          classId,
        })
      ).json,
    ).studentId;
    const r = await call(`${h.url}/api/v1/church/check-in-day-keys`, {
      headers: authHeaders(TOKENS.CHAMADOR),
    });
    const keys = decodeAs(t.type({ keys: t.array(t.type({ day: t.string, key: t.string })) }), r.json).keys;
    expect(keys.map((k) => k.day)).to.deep.equal(['2026-11-25', '2026-11-26', '2026-11-27']);
    const secret = decodeAs(
      t.type({ secret: t.string }),
      await h.svc.store.db.private.get('checkin-secret'),
    ).secret;
    expect(r.text).not.to.contain(secret);
    const label = decodeAs(
      CheckIn,
      (await send('POST', '/api/v1/check-in', { studentId, sessionId }, TOKENS.CHAMADOR)).json,
    );
    const key = asBytes(Buffer.from(keys[0]?.key ?? '', 'base64url'));
    const onDevice = dailyCode(
      studentId,
      (m) => new Uint8Array(createHmac('sha256', key).update(m).digest()),
    );
    expect(onDevice).to.equal(label.code);
    expectEnvelope(
      await call(`${h.url}/api/v1/church/check-in-day-keys`, {
        headers: authHeaders(TOKENS.RELATORIOS),
      }),
      403,
      'FORBIDDEN_ROLE',
    );
  });
});
