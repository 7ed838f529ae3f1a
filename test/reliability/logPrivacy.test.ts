/**
 * Logs without personal data (decision 0009; 0005 for unexpected errors): an operator ships these
 * lines to third-party tooling, so no value of a child's or an adult's record may appear in them,
 * whatever the request did: succeed, fail validation with the data in the bad input, fail at the
 * pick-up gate, or crash. Every value the sequence sends is checked against the whole captured log:
 * as sent, lower-cased, JSON-escaped, and digits-only for phones and document numbers.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { boundedString, object } from '../../src/domain/codec.js';
import { defineRoute } from '../../src/http/route.js';
import { call, decodeAs, type HttpResult } from '../support/http.js';
import { boomRoute, probeRoutes } from '../support/probeRoutes.js';
import {
  authHeaders,
  DEV_TOKENS,
  DEVICE_ID,
  mutate,
  mutationHeaders,
  startTestService,
  type TestService,
} from '../support/testService.js';
import { figure } from './figures.js';
import { CheckInView, classAndSession, createId, tallyText, wrongCode } from './helpers.js';

/** Personal data of the sequence: distinctive, so a hit in the log cannot be a coincidence. */
const PII = {
  child: 'Heloísa Quintanilha Barreto',
  childRenamed: 'Heloísa Q. Barreto-Azevedo',
  guardian: 'Rosângela Quintanilha',
  guardianAlt: 'Anselmo Barreto Filho',
  birthDate: '2019-03-14',
  phone1: '+55 (11) 98765-4321',
  phone2: '+55 21 3456-7890',
  street: 'Rua Desembargador Otávio Lobo',
  houseNumber: '1487-B',
  complement: 'Bloco Jacarandá apto 32',
  neighborhood: 'Vila Mariana Alta',
  city: 'Santo Antônio de Posse',
  postalCode: '13833-512',
  allergies: 'Alergia grave a amendoim e camarão',
  specialNeeds: 'TEA nível 1, usa abafador auricular',
  photoRef: 'photos/heloisa-quintanilha-2026.jpg',
  cpf: '123.456.789-09',
  rg: 'RG 45.678.912-3 SSP/SP',
  consentBy: 'Rosângela Q. Barreto (CPF 123.456.789-09)',
  sibling: 'Davi Quintanilha Barreto',
  n2Name: 'Marlene Aparecida Quintanilha',
  n2Phone: '+55 11 91234-5566',
  n3Name: 'Tio Genésio Barreto',
  n3Phone: '+55 11 95555-1212',
  visitor: 'Lorena Visitante Cavalcanti',
  visitorGuardian: 'Joana Cavalcanti Prado',
  visitorPhone: '+55 11 97777-3434',
  pickupPerson: 'Rosângela Quintanilha',
  stranger: 'Desconhecido Severino Matos',
  emergency: 'Avó Benedita Quintanilha levou, mãe hospitalizada',
  deletion: 'Família Quintanilha mudou para Recife',
  userName: 'Cristiane Monteiro Valadares',
  userEmail: 'cristiane.valadares@igreja.example',
  userPassword: 'senha-da-cristiane-2026',
  typo: 'Heloísa Quintanilha Barretoooooo',
  crash: 'Benedito Crash Quintanilha',
} as const;

/** A handler that fails the way a store error quoting document content would. */
const leakyRoute = defineRoute({
  operationId: 'reliability_leaky',
  method: 'post',
  path: '/api/v1/_reliability/leaky',
  auth: 'bearer',
  summary: 'throws an error whose message quotes the input',
  tags: ['probe'],
  body: object('ReliabilityLeakyBody', { displayName: boundedString(1, 200) }),
  response: { status: 200, description: 'never', codec: t.null },
  handler: async ({ body }) => {
    throw new Error(`Document update conflict: {"displayName":"${body.displayName}"}`);
  },
});

/** The forms a value could take in a JSON log line. */
const formsOf = (value: string): string[] => {
  const forms = new Set([value, value.toLowerCase(), JSON.stringify(value).slice(1, -1)]);
  const digits = value.replace(/\D/g, '');
  if (digits.length >= 8) forms.add(digits);
  return [...forms];
};

const leaksIn = (log: string, values: ReadonlyArray<string>): string[] => {
  const lower = log.toLowerCase();
  return values.filter((v) => formsOf(v).some((f) => lower.includes(f.toLowerCase())));
};

describe('reliability: logs carry no personal data', function () {
  this.timeout(60_000);
  let svc: TestService;
  const url = (p: string) => `${svc.url}${p}`;
  const statuses: number[] = [];
  const track = async (r: Promise<HttpResult>): Promise<HttpResult> => {
    const res = await r;
    statuses.push(res.status);
    return res;
  };
  const send = (method: string, path: string, body: unknown, token: string = DEV_TOKENS.DEV_ADMIN_TOKEN) =>
    track(mutate(url(path), method, body, token));
  const raw = (path: string, init: RequestInit) => track(call(url(path), init));
  const get = (path: string, token: string = DEV_TOKENS.DEV_ADMIN_TOKEN) =>
    track(call(url(path), { headers: authHeaders(token) }));

  beforeEach(async () => {
    statuses.length = 0;
    svc = await startTestService({ routes: probeRoutes([leakyRoute]) });
  });
  afterEach(() => svc.dispose());

  it('a representative day (records, desk, gate, errors with personal data in the input) leaves none in the log', async () => {
    const { classId, sessionId } = await classAndSession(svc);
    const studentId = await createId(
      svc,
      '/api/v1/students',
      {
        displayName: PII.child,
        guardianName: PII.guardian,
        guardianNameAlt: PII.guardianAlt,
        birthDate: PII.birthDate,
        phones: [
          { number: PII.phone1, qualifier: 'mãe' },
          { number: PII.phone2, qualifier: 'pai' },
        ],
        address: {
          street: PII.street,
          number: PII.houseNumber,
          complement: PII.complement,
          neighborhood: PII.neighborhood,
          city: PII.city,
          state: 'SP',
          postalCode: PII.postalCode,
        },
        allergies: PII.allergies,
        specialNeeds: PII.specialNeeds,
        classId,
      },
      'studentId',
    );
    const siblingId = await createId(
      svc,
      '/api/v1/students',
      {
        displayName: PII.sibling,
        guardianName: PII.guardian,
        phones: [{ number: PII.phone1, qualifier: 'mãe' }],
        classId,
      },
      'studentId',
    );
    // A photo without consent is refused with the reference in the bad input; then consent, then the photo.
    await send('PATCH', `/api/v1/students/${studentId}`, { photoRef: PII.photoRef });
    await send('POST', '/api/v1/image-consents', {
      subject_type: 'STUDENT',
      subject_id: studentId,
      term_version: '2026-01',
      purpose: 'Fotos no mural',
      term_text: `Autorizo, documento ${PII.rg} conferido, CPF ${PII.cpf}`,
      granted_by_name: PII.consentBy,
      relationship: 'mãe',
      verification_method: 'IN_PERSON_DOCUMENT',
    });
    // A reference to no stored photo is refused too (0043), with it in the bad input; the rename stands.
    await send('PATCH', `/api/v1/students/${studentId}`, { photoRef: PII.photoRef });
    await send('PATCH', `/api/v1/students/${studentId}`, { displayName: PII.childRenamed });
    await get(`/api/v1/students?q=${encodeURIComponent(PII.childRenamed)}`);
    await get(`/api/v1/students/${studentId}`);
    await get(`/api/v1/students/${studentId}/export`);

    // Pickup list: an N2 adult (a one-time code goes through the development notifier, i.e. the log).
    const n2 = await send('POST', `/api/v1/students/${studentId}/pickup-list`, {
      name: PII.n2Name,
      relationship: 'tia',
      phone: PII.n2Phone,
    });
    const n2Id = decodeAs(t.type({ pickupId: t.string }), n2.json).pickupId;
    await send('POST', `/api/v1/students/${studentId}/pickup-list/${n2Id}/verify`, { code: '000000' });
    const list = decodeAs(
      t.type({ items: t.array(t.type({ pickupId: t.string, level: t.string })) }),
      (await get(`/api/v1/students/${studentId}/pickup-list`)).json,
    ).items;
    const n1 = list.find((e) => e.level === 'N1')?.pickupId ?? '';
    await send(
      'POST',
      `/api/v1/students/${studentId}/pickup-authorizations`,
      { authorized_by_pickup_id: n1, adultName: PII.n3Name, relationship: 'tio', phone: PII.n3Phone },
      DEV_TOKENS.DEV_CALLER_TOKEN,
    );

    // The gate: check-ins (one a walk-in visitor), a failed pick-up, a wrong adult, check-out, emergency.
    await send('PUT', '/api/v1/church/check-in-config', {
      pickupMode: 'CODE_AND_ADULT',
      maxCheckoutAttempts: 5,
      emergencyCheckoutAdminOnly: false,
    });
    const caller = DEV_TOKENS.DEV_CALLER_TOKEN;
    const c1 = decodeAs(
      CheckInView,
      (await send('POST', '/api/v1/check-in', { studentId, sessionId }, caller)).json,
    );
    const c2 = decodeAs(
      CheckInView,
      (await send('POST', '/api/v1/check-in', { studentId: siblingId, sessionId }, caller)).json,
    );
    await send(
      'POST',
      '/api/v1/check-in',
      {
        sessionId,
        visitor: { displayName: PII.visitor, guardianName: PII.visitorGuardian, phone: PII.visitorPhone },
      },
      caller,
    );
    await get(`/api/v1/check-in/active?checkInId=${c1.checkInId}`, caller);
    const suffix = PII.phone1.replace(/\D/g, '').slice(-4);
    const out = { checkInId: c1.checkInId, pickupPerson: PII.pickupPerson, pickupPhoneSuffix: suffix };
    await send('POST', '/api/v1/check-out', { ...out, code: wrongCode(c1.code) }, caller);
    await send('POST', '/api/v1/check-out', { ...out, code: c1.code, pickupPerson: PII.stranger }, caller);
    await send('POST', '/api/v1/check-out', { ...out, code: c1.code }, caller);
    await send(
      'POST',
      '/api/v1/check-out/emergency',
      { checkInId: c2.checkInId, justification: PII.emergency, pickupPerson: PII.n3Name },
      caller,
    );
    await send('POST', `/api/v1/students/${siblingId}/delete`, { justification: PII.deletion });

    // A user with personal data, and logins that fail with it.
    await send('POST', '/api/v1/users', {
      email: PII.userEmail,
      displayName: PII.userName,
      roles: ['CHAMADOR'],
      password: PII.userPassword,
    });
    const login = (body: unknown) =>
      raw('/api/v1/auth/login', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    await login({ email: PII.userEmail, password: `${PII.userPassword}-errada` });
    await login({ email: PII.userEmail, password: PII.userPassword });

    // Errors whose bad input is personal data: body, malformed JSON, path, query and headers.
    const base = { guardianName: PII.guardian, phones: [], classId };
    await send('POST', '/api/v1/students', { ...base, displayName: `${PII.typo} ${'x'.repeat(120)}` });
    await send('POST', '/api/v1/students', { ...base, displayName: PII.typo, birthDate: '14/03/2019' });
    await send('POST', '/api/v1/students', {
      ...base,
      displayName: PII.typo,
      phones: [{ number: `${PII.phone1} ramal ${PII.phone2} ${'9'.repeat(30)}`, qualifier: 'mãe' }],
    });
    await send('POST', '/api/v1/students', { ...base, displayName: PII.typo, cpf: PII.cpf, rg: PII.rg });
    await raw('/api/v1/students', {
      method: 'POST',
      headers: mutationHeaders(DEV_TOKENS.DEV_ADMIN_TOKEN),
      body: `{"displayName": "${PII.typo}", "guardianName": "${PII.guardian}"`,
    });
    await get(`/api/v1/students/${encodeURIComponent(PII.typo)}`);
    await get(`/api/v1/students?q=${encodeURIComponent(PII.typo)}&limit=muitos`);
    await get(`/api/v1/${encodeURIComponent(PII.guardianAlt)}/${encodeURIComponent(PII.cpf)}`);
    await raw('/api/v1/students', {
      headers: { Authorization: `Bearer ${DEV_TOKENS.DEV_ADMIN_TOKEN}`, 'X-Device-Id': PII.typo },
    });
    await raw('/api/v1/students', {
      headers: { Authorization: `Bearer ${PII.userEmail}`, 'X-Device-Id': DEVICE_ID },
    });
    await raw('/api/v1/classes', {
      method: 'POST',
      headers: { ...mutationHeaders(DEV_TOKENS.DEV_ADMIN_TOKEN), 'Idempotency-Key': PII.cpf },
      body: JSON.stringify({ name: PII.typo }),
    });
    await send(
      'POST',
      '/api/v1/sync/events',
      {
        events: [
          { eventId: randomUUID(), type: 'RENAME_CHILD', studentId, displayName: PII.typo },
          {
            eventId: randomUUID(),
            type: 'MARK_PRESENT',
            studentId: PII.typo,
            sessionId,
            clientTimestamp: 'ontem',
          },
        ],
      },
      caller,
    );

    const values = Object.entries(PII)
      .filter(([k]) => k !== 'crash')
      .map(([, v]) => v);
    const log = svc.rawLog();
    const lines = svc.logLines().length;
    const leaked = leaksIn(log, values);
    figure(
      'logs without personal data',
      `${statuses.length} requests (${tallyText(statuses)}) → ${lines} log lines scanned for ${values.length} ` +
        `values (${values.reduce((n, v) => n + formsOf(v).length, 0)} forms): ${leaked.length} found` +
        `${leaked.length === 0 ? '' : ` (${leaked.join(' | ')})`}`,
    );
    // The sequence must have reached the places that could leak: successes, 4xx of every kind, the notifier.
    expect(statuses.filter((s) => s < 300).length).to.be.greaterThan(15);
    expect(statuses.filter((s) => s >= 400 && s < 500).length).to.be.greaterThan(10);
    expect(log).to.contain('development notifier: one-time code');
    expect(leaked).to.deep.equal([]);
  });

  it('an unexpected error whose message quotes personal data leaves neither message nor data in the log', async () => {
    const leaky = await track(
      call(url('/api/v1/_reliability/leaky'), {
        method: 'POST',
        headers: mutationHeaders(DEV_TOKENS.DEV_ADMIN_TOKEN),
        body: JSON.stringify({ displayName: PII.crash }),
      }),
    );
    const boom = await track(call(url(boomRoute.path)));
    const errorLines = svc.logLines().filter((l) => l.msg === 'unhandled error');
    // What the probe's message holds (test/support/probeRoutes.ts) and what the leaky route quotes.
    const values = [
      PII.crash,
      'internal detail: /secret/path and João',
      '/secret/path',
      'Document update conflict',
    ];
    const leaked = leaksIn(svc.rawLog(), values);
    figure(
      'logs without personal data (500s)',
      `${leaky.status}, ${boom.status} → ${errorLines.length} 'unhandled error' lines; ${leaked.length} of ` +
        `${values.length} message values found${leaked.length === 0 ? '' : ` (${leaked.join(' | ')})`}`,
    );
    expect([leaky.status, boom.status]).to.deep.equal([500, 500]);
    expect(errorLines).to.have.length(2);
    expect(leaked).to.deep.equal([]);
  });
});
