/** The pickup list (N1, N2 with a one-time code) and temporary grants (N3), used at the gate. */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { TOKENS, useService } from '../support/harness.js';
import { decodeAs, expectEnvelope } from '../support/http.js';

const Entry = t.type({ pickupId: t.string, level: t.string, name: t.string, status: t.string });

describe('pickup list and temporary grants', function () {
  this.timeout(60_000);
  let now: number;
  let sessionId: string;
  let studentId: string;
  const sent: Array<{ phone: string; code: string }> = [];
  const h = useService(() => {
    now = Date.parse('2026-11-25T10:00:00.000Z');
    sent.length = 0;
    return {
      clock: () => new Date(now),
      notifier: {
        async sendCode(phone, code) {
          sent.push({ phone, code });
        },
        async sendMessage() {
          throw new Error('these tests send no page');
        },
      },
    };
  }, 'test');
  const { send } = h.as(TOKENS.CADASTRO);
  const list = async () =>
    decodeAs(
      t.type({ items: t.array(Entry) }),
      (await h.get(`/api/v1/students/${studentId}/pickup-list`, TOKENS.CHAMADOR)).json,
    ).items;

  beforeEach(async () => {
    const c = await send('POST', '/api/v1/classes', { name: 'Turma A' });
    const classId = decodeAs(t.type({ classId: t.string }), c.json).classId;
    sessionId = decodeAs(
      t.type({ sessionId: t.string }),
      (await send('POST', '/api/v1/sessions', { classId, date: '2026-11-25' })).json,
    ).sessionId;
    studentId = decodeAs(
      t.type({ studentId: t.string }),
      (
        await send('POST', '/api/v1/students', {
          displayName: 'Bia',
          guardianName: 'Cláudia',
          guardianNameAlt: 'Marcos',
          phones: [{ number: '+55 11 5555-0101', qualifier: 'mãe' }],
          classId,
        })
      ).json,
    ).studentId;
    await send(
      'PUT',
      '/api/v1/church/check-in-config',
      { pickupMode: 'CODE_AND_ADULT', maxCheckoutAttempts: 5, emergencyCheckoutAdminOnly: false },
      TOKENS.ADMIN,
    );
  });

  it('lists the guardians on the record as N1 entries with stable ids', async () => {
    const first = await list();
    expect(first.map((e) => `${e.level} ${e.name} ${e.status}`)).to.deep.equal([
      'N1 Cláudia ACTIVE',
      'N1 Marcos ACTIVE',
    ]);
    expect((await list()).map((e) => e.pickupId)).to.deep.equal(first.map((e) => e.pickupId));
  });

  it('adds an N2 adult, sends a one-time code, and activates the entry only with the right code', async () => {
    const r = await send('POST', `/api/v1/students/${studentId}/pickup-list`, {
      name: 'Vovó Lia',
      relationship: 'avó',
      phone: '+55 11 5555-2222',
    });
    expect(r.status, r.text).to.equal(201);
    const entry = decodeAs(Entry, r.json);
    expect(entry).to.deep.include({ level: 'N2', status: 'PENDING_VERIFICATION' });
    expect(sent).to.have.length(1);
    expect(r.text).not.to.contain(sent[0]?.code ?? 'none');
    const wrong = sent[0]?.code === '000000' ? '111111' : '000000';
    expectEnvelope(
      await send('POST', `/api/v1/students/${studentId}/pickup-list/${entry.pickupId}/verify`, {
        code: wrong,
      }),
      400,
      'VALIDATION_FAILED',
    );
    const ok = await send('POST', `/api/v1/students/${studentId}/pickup-list/${entry.pickupId}/verify`, {
      code: sent[0]?.code,
    });
    expect(ok.status, ok.text).to.equal(200);
    expect(ok.json).to.deep.include({ status: 'ACTIVE' });
    expectEnvelope(
      await send('POST', `/api/v1/students/${studentId}/pickup-list/${entry.pickupId}/verify`, {
        code: sent[0]?.code,
      }),
      409,
      'CONFLICT',
    );
  });

  it('an unverified N2 adult cannot collect; a verified one can', async () => {
    const entry = decodeAs(
      Entry,
      (
        await send('POST', `/api/v1/students/${studentId}/pickup-list`, {
          name: 'Vovó Lia',
          relationship: 'avó',
          phone: '+55 11 5555-2222',
        })
      ).json,
    );
    const c = decodeAs(
      t.type({ checkInId: t.string, code: t.string }),
      (await send('POST', '/api/v1/check-in', { studentId, sessionId }, TOKENS.CHAMADOR)).json,
    );
    const out = () =>
      send(
        'POST',
        '/api/v1/check-out',
        { checkInId: c.checkInId, code: c.code, pickupPerson: 'vovó lia', pickupPhoneSuffix: '2222' },
        TOKENS.CHAMADOR,
      );
    expectEnvelope(await out(), 403, 'PICKUP_NOT_AUTHORIZED');
    await send('POST', `/api/v1/students/${studentId}/pickup-list/${entry.pickupId}/verify`, {
      code: sent[0]?.code,
    });
    expect((await out()).status).to.equal(200);
  });

  it('an N3 grant opens the gate inside its window and is inert after it', async () => {
    const [guardian] = await list();
    const g = await send(
      'POST',
      `/api/v1/students/${studentId}/pickup-authorizations`,
      { authorized_by_pickup_id: guardian?.pickupId, adultName: 'Tio Beto', relationship: 'tio' },
      TOKENS.CHAMADOR,
    );
    expect(g.status, g.text).to.equal(201);
    expect(g.json).to.deep.include({
      valid_until: '2026-11-25T23:59:59.999Z',
      active: true,
      authorized_by: 'Cláudia',
    });
    const events = await h.svc.store.db.events.find({ selector: { type: 'AUTHORIZED_PICKUP' } });
    expect(events.docs).to.have.length(1);
    const checkInOut = async () => {
      const c = decodeAs(
        t.type({ checkInId: t.string, code: t.string }),
        (await send('POST', '/api/v1/check-in', { studentId, sessionId }, TOKENS.CHAMADOR)).json,
      );
      return send(
        'POST',
        '/api/v1/check-out',
        { checkInId: c.checkInId, code: c.code, pickupPerson: 'Tio Beto' },
        TOKENS.CHAMADOR,
      );
    };
    expect((await checkInOut()).status).to.equal(200);
    now = Date.parse('2026-11-26T00:00:00.000Z');
    expectEnvelope(await checkInOut(), 403, 'PICKUP_NOT_AUTHORIZED');
    const grants = await h.get(`/api/v1/students/${studentId}/pickup-authorizations`, TOKENS.CHAMADOR);
    expect(grants.json).to.have.nested.property('items[0].active', false);
  });

  it('refuses a window over 7 days, an authoriser outside the list, and a second revoke', async () => {
    const [guardian] = await list();
    const base = { authorized_by_pickup_id: guardian?.pickupId, adultName: 'Tio Beto', relationship: 'tio' };
    const path = `/api/v1/students/${studentId}/pickup-authorizations`;
    expectEnvelope(
      await send(
        'POST',
        path,
        { ...base, valid_from: '2026-11-25T10:00:00.000Z', valid_until: '2026-12-02T10:00:00.001Z' },
        TOKENS.CHAMADOR,
      ),
      400,
      'VALIDATION_FAILED',
    );
    expect(
      (
        await send(
          'POST',
          path,
          { ...base, valid_from: '2026-11-25T10:00:00.000Z', valid_until: '2026-12-02T10:00:00.000Z' },
          TOKENS.CHAMADOR,
        )
      ).status,
    ).to.equal(201);
    expectEnvelope(
      await send('POST', path, { ...base, authorized_by_pickup_id: randomUUID() }, TOKENS.CHAMADOR),
      400,
      'VALIDATION_FAILED',
    );
    const g = decodeAs(
      t.type({ authorizationId: t.string }),
      (await send('POST', path, base, TOKENS.CHAMADOR)).json,
    );
    const revoke = (j: string) =>
      send(
        'POST',
        `/api/v1/pickup-authorizations/${g.authorizationId}/revoke`,
        { justification: j },
        TOKENS.CHAMADOR,
      );
    expectEnvelope(await revoke('short'), 400, 'VALIDATION_FAILED');
    const r = await revoke('A mãe ligou e cancelou');
    expect(r.status, r.text).to.equal(200);
    expect(r.json).to.deep.include({ active: false });
    expectEnvelope(await revoke('A mãe ligou de novo'), 409, 'CONFLICT');
  });
});
