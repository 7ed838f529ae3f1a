/**
 * Paging a checked-in child's guardians, black-box: the service's notifier is the webhook one, pointed
 * at a fake SMS gateway on 127.0.0.1, so the test sees what reaches the gateway and what reaches the
 * tablet, and can make the gateway fail.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { fakeWebhookReceiver, headerOf, type ReceivedRequest } from '../support/fakeWebhookReceiver.js';
import { TOKENS, useService } from '../support/harness.js';
import { call, decodeAs, expectEnvelope, type HttpResult } from '../support/http.js';
import { createdId } from '../support/seed.js';
import { authHeaders, mutate, mutationHeaders } from '../support/testService.js';

interface Received {
  readonly to: string;
  readonly message: string;
  readonly purpose: string;
}
const ReceivedC = t.type({ to: t.string, message: t.string, purpose: t.string });

/**
 * A gateway that records what it is sent and answers `status` (200 unless a test says otherwise), or
 * 500 to the next `failNext` requests.
 */
const fakeGateway = async () => {
  const state = { status: 200, failNext: 0 };
  const receiver = await fakeWebhookReceiver(() => {
    const status = state.failNext > 0 ? 500 : state.status;
    state.failNext = Math.max(0, state.failNext - 1);
    return status;
  });
  return {
    ...receiver,
    /** What the gateway was asked to send, in order. */
    get received(): Received[] {
      return receiver.hits.map((h) => decodeAs(ReceivedC, JSON.parse(h.body)));
    },
    state,
  };
};

const Page = t.type({
  pageId: t.string,
  checkInId: t.string,
  studentId: t.string,
  sessionId: t.string,
  message: t.union([t.string, t.null]),
  status: t.string,
  sentAt: t.string,
  sentBy: t.string,
  deviceId: t.union([t.string, t.null]),
  phonesPaged: t.number,
  phonesFailed: t.number,
});
const PageList = t.type({ items: t.array(Page) });
const DeliveryList = t.type({
  items: t.array(
    t.type({
      deliveryId: t.string,
      purpose: t.string,
      outcome: t.string,
      signed: t.boolean,
      attempts: t.array(t.type({ status: t.union([t.number, t.null]) })),
    }),
  ),
});
const CheckIn = t.type({ checkInId: t.string, code: t.string });
const AuditPage = t.type({
  items: t.array(
    t.type({ endpoint: t.string, subject_id: t.union([t.string, t.null]), details: t.UnknownRecord }),
  ),
});

// The Standard Webhooks specification's example secret; the gateway checks with its own HMAC.
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const signatureOf = (h: ReceivedRequest): string =>
  `v1,${createHmac('sha256', new Uint8Array(Buffer.from(SECRET.slice('whsec_'.length), 'base64')))
    .update(`${headerOf(h, 'webhook-id')}.${headerOf(h, 'webhook-timestamp')}.${h.body}`)
    .digest('base64')}`;

const MOTHER = '+55 11 98765-4321';
const FATHER = '+55 21 5555-2222';

/**
 * No phone, nor any four digits of one, reaches an answer or the audit. Identifiers and
 * instants are taken out first: a random UUID, a delivery id (`msg_` and a UUID's 32 hex digits) or a
 * clock holds '2222' now and then (CI met it, for a UUID and then for a delivery id).
 */
function expectNoPhoneDigits(text: string): void {
  const bare = text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '')
    .replace(/msg_[0-9a-f]{32}/g, '')
    .replace(/\d{4}-\d{2}-\d{2}T[0-9:.]+Z?/g, '');
  for (const digits of ['98765', '4321', '5555', '2222']) expect(bare).to.not.include(digits);
}

describe('paging a guardian from the door', function () {
  this.timeout(60_000);
  let gateway: Awaited<ReturnType<typeof fakeGateway>>;
  let now: number;
  const h = useService(async () => {
    gateway = await fakeGateway();
    now = Date.now();
    return {
      env: { NOTIFY_WEBHOOK_URL: gateway.url, NOTIFY_WEBHOOK_SECRET: SECRET },
      clock: () => new Date(now),
    };
  }, 'test');
  let sessionId: string;
  let classId: string;
  let checkInId: string;
  let studentId: string;

  const pagePath = (id = checkInId) => `/api/v1/check-ins/${id}/page`;
  const page = (body: unknown, token: string = TOKENS.CHAMADOR, key = randomUUID(), id?: string) =>
    call(`${h.url}${pagePath(id)}`, {
      method: 'POST',
      headers: mutationHeaders(token, key),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const sent = (r: HttpResult) => {
    expect(r.status, r.text).to.equal(201);
    return decodeAs(Page, r.json);
  };
  const list = (token: string = TOKENS.ADMIN, id = sessionId) =>
    h.get(`/api/v1/pages?sessionId=${id}`, token);
  const checkIn = async (child: string) => {
    const r = await mutate(
      `${h.url}/api/v1/check-in`,
      'POST',
      { studentId: child, sessionId },
      TOKENS.CHAMADOR,
    );
    expect(r.status, r.text).to.equal(201);
    return decodeAs(CheckIn, r.json);
  };
  const child = (displayName: string, phones: ReadonlyArray<{ number: string; qualifier: string }>) =>
    createdId(h.url, '/api/v1/students', { displayName, guardianName: 'Rosa', phones, classId }, 'studentId');

  beforeEach(async () => {
    classId = await createdId(h.url, '/api/v1/classes', { name: 'Turma' }, 'classId');
    sessionId = await createdId(
      h.url,
      '/api/v1/sessions',
      { classId, date: new Date(now).toISOString().slice(0, 10) },
      'sessionId',
    );
    // The mother's number twice, written two ways: paged once.
    studentId = await child('Ana Souza', [
      { number: MOTHER, qualifier: 'mãe' },
      { number: '+5511987654321', qualifier: 'mãe (celular)' },
      { number: FATHER, qualifier: 'pai' },
    ]);
    checkInId = (await checkIn(studentId)).checkInId;
  });
  afterEach(async () => {
    await gateway.close();
  });

  it("sends the message to each guardian's phone and tells the tablet only how many were paged", async () => {
    const r = await page({ message: '  Ela está com febre, venha à sala 3.  ' });
    const body = sent(r);
    expect(body).to.deep.include({
      checkInId,
      studentId,
      sessionId,
      message: 'Ela está com febre, venha à sala 3.',
      status: 'SENT',
      sentBy: 'dev-caller',
      phonesPaged: 2,
      phonesFailed: 0,
    });
    expect(gateway.received).to.have.deep.members([
      {
        to: MOTHER,
        message: 'Chamada: Ana Souza — Ela está com febre, venha à sala 3.',
        purpose: 'guardian-page',
      },
      {
        to: FATHER,
        message: 'Chamada: Ana Souza — Ela está com febre, venha à sala 3.',
        purpose: 'guardian-page',
      },
    ]);
    expectNoPhoneDigits(r.text);
    const audit = await call(
      `${h.url}/api/v1/audit-logs?endpoint=${encodeURIComponent('POST /api/v1/check-ins/{checkInId}/page')}`,
      { headers: authHeaders(TOKENS.ADMIN) },
    );
    expect(audit.status, audit.text).to.equal(200);
    const entries = decodeAs(AuditPage, audit.json).items;
    expect(entries).to.have.length(1);
    expect(entries[0]?.subject_id).to.equal(studentId);
    expect(entries[0]?.details).to.deep.include({
      pageId: body.pageId,
      phonesPaged: 2,
      phonesFailed: 0,
      status: 201,
    });
    expectNoPhoneDigits(audit.text);
  });

  it('without a message the guardians are asked to come to the room', async () => {
    expect(sent(await page(undefined)).message).to.equal(null);
    expect(gateway.received.map((m) => m.message)).to.deep.equal([
      'Chamada: Ana Souza — por favor, venha até a sala.',
      'Chamada: Ana Souza — por favor, venha até a sala.',
    ]);
  });

  it('a resend with the same Idempotency-Key answers the same page and pages nobody again', async () => {
    const key = randomUUID();
    const first = sent(await page({ message: 'Venha, por favor.' }, TOKENS.CHAMADOR, key));
    const again = await page({ message: 'Venha, por favor.' }, TOKENS.CHAMADOR, key);
    expect(sent(again)).to.deep.equal(first);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(gateway.received).to.have.length(2);
  });

  it('a child is paged once every two minutes and five times an hour; 429 says when to page again', async () => {
    sent(await page(undefined));
    now += 30_000;
    const soon = expectEnvelope(await page(undefined), 429, 'RATE_LIMITED');
    expect(soon.details).to.deep.equal({ reason: 'COOLDOWN', retryAfterSeconds: 90 });
    const refused = await page(undefined);
    expect(refused.headers.get('retry-after')).to.equal('90');
    // Obeying Retry-After is enough: a refusal does not push the wait further.
    now += 90_000;
    sent(await page(undefined));
    for (let i = 0; i < 3; i += 1) {
      now += 2 * 60_000;
      sent(await page(undefined));
    }
    now += 2 * 60_000;
    // Five pages in the last ten minutes: the sixth waits until the first is an hour old.
    const hourly = expectEnvelope(await page(undefined), 429, 'RATE_LIMITED');
    expect(hourly.details).to.deep.equal({ reason: 'TOO_MANY_PAGES', retryAfterSeconds: 50 * 60 });
    expect(gateway.received).to.have.length(5 * 2);
    // Another child is not held back by this one.
    const other = await child('Bia Lima', [{ number: '+55 31 4444-1111', qualifier: 'mãe' }]);
    sent(await page(undefined, TOKENS.CHAMADOR, randomUUID(), (await checkIn(other)).checkInId));
  });

  it('a page refused with 429 is not kept for its key: resent with the same key after Retry-After, it is sent', async () => {
    sent(await page(undefined));
    now += 30_000;
    const key = randomUUID();
    const refused = await page(undefined, TOKENS.CHAMADOR, key);
    expectEnvelope(refused, 429, 'RATE_LIMITED');
    expect(refused.headers.get('retry-after')).to.equal('90');
    now += 90_000;
    const resent = await page(undefined, TOKENS.CHAMADOR, key);
    expect(sent(resent).phonesPaged).to.equal(2);
    expect(resent.headers.get('idempotent-replayed')).to.equal(null);
    expect(gateway.received).to.have.length(2 * 2);
    // The answer that was sent is final: it is the one replayed now.
    const again = await page(undefined, TOKENS.CHAMADOR, key);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(sent(again)).to.deep.equal(sent(resent));
    expect(gateway.received).to.have.length(2 * 2);
  });

  it('an unknown check-in is 404; a child checked out or without a phone is 409', async () => {
    expectEnvelope(await page(undefined, TOKENS.CHAMADOR, randomUUID(), randomUUID()), 404, 'NOT_FOUND');
    const lonely = await child('Caio', []);
    const noPhone = expectEnvelope(
      await page(undefined, TOKENS.CHAMADOR, randomUUID(), (await checkIn(lonely)).checkInId),
      409,
      'CONFLICT',
    );
    expect(noPhone.details).to.deep.equal({ reason: 'NO_GUARDIAN_PHONE' });
    const bia = await child('Bia Lima', [{ number: '+55 31 4444-1111', qualifier: 'mãe' }]);
    const biaIn = await checkIn(bia);
    const out = await mutate(
      `${h.url}/api/v1/check-out`,
      'POST',
      { checkInId: biaIn.checkInId, code: biaIn.code, pickupPerson: 'Rosa' },
      TOKENS.CHAMADOR,
    );
    expect(out.status, out.text).to.equal(200);
    const gone = expectEnvelope(
      await page(undefined, TOKENS.CHAMADOR, randomUUID(), biaIn.checkInId),
      409,
      'CONFLICT',
    );
    expect(gone.details).to.deep.equal({ reason: 'ALREADY_CHECKED_OUT' });
    expect(gateway.received).to.deep.equal([]);
  });

  it('a message is one line of at most 140 characters; the check-in id is a UUID', async () => {
    for (const message of ['', '   ', 'a'.repeat(141), 'linha um\nlinha dois', 42])
      expectEnvelope(await page({ message }), 400, 'VALIDATION_FAILED');
    expectEnvelope(await page({ message: 'ok', phone: MOTHER }), 400, 'VALIDATION_FAILED');
    expectEnvelope(
      await page(undefined, TOKENS.CHAMADOR, randomUUID(), 'not-a-uuid'),
      400,
      'VALIDATION_FAILED',
    );
    sent(await page({ message: 'a'.repeat(140) }));
  });

  it('when the gateway fails the page is not recorded (503), and a resend with the same key tries again', async () => {
    gateway.state.status = 502;
    const key = randomUUID();
    const failed = expectEnvelope(await page(undefined, TOKENS.CHAMADOR, key), 503, 'NOTIFICATION_FAILED');
    expect(failed.details).to.deep.equal({ phonesFailed: 2 });
    expect(decodeAs(PageList, (await list()).json).items).to.deep.equal([]);
    gateway.state.status = 200;
    const retried = await page(undefined, TOKENS.CHAMADOR, key);
    expect(sent(retried).phonesPaged).to.equal(2);
    expect(retried.headers.get('idempotent-replayed')).to.equal(null);
    // Each phone was tried three times by the first request (0041), once by the resend.
    expect(gateway.received).to.have.length(2 * 3 + 2);
  });

  it('each message is signed as Standard Webhooks says; one the gateway failed is sent again under the same webhook-id', async () => {
    gateway.state.failNext = 1;
    const started = Math.floor(Date.now() / 1000);
    expect(sent(await page({ message: 'Venha.' })).phonesPaged).to.equal(2);
    // Two phones, one of them answered 500 the first time: three POSTs, two messages.
    expect(gateway.hits).to.have.length(3);
    const ids = gateway.hits.map((h) => headerOf(h, 'webhook-id'));
    for (const hit of gateway.hits) {
      expect(headerOf(hit, 'webhook-id')).to.match(/^msg_[0-9a-f]{32}$/);
      expect(Number(headerOf(hit, 'webhook-timestamp'))).to.be.within(started - 1, started + 30);
      expect(headerOf(hit, 'webhook-signature')).to.equal(signatureOf(hit));
    }
    const [failed, ...rest] = gateway.hits;
    const failedId = ids[0];
    const retried = rest.filter((h) => headerOf(h, 'webhook-id') === failedId);
    expect(retried).to.have.length(1);
    expect(retried[0]?.body).to.equal(failed?.body);
    expect(new Set(ids).size).to.equal(2);

    // The ADMIN reads both messages in the delivery log, with the failed attempt; never a phone or the text.
    const log = await call(`${h.url}/api/v1/notifications/deliveries`, {
      headers: authHeaders(TOKENS.ADMIN),
    });
    expect(log.status, log.text).to.equal(200);
    const items = decodeAs(DeliveryList, log.json).items;
    expect(items.map((d) => d.deliveryId).sort()).to.deep.equal([...new Set(ids)].sort());
    const again = items.find((d) => d.deliveryId === failedId);
    expect(again).to.deep.include({ purpose: 'guardian-page', outcome: 'DELIVERED', signed: true });
    expect(again?.attempts.map((a) => a.status)).to.deep.equal([500, 200]);
    expectNoPhoneDigits(log.text);
    expect(log.text).to.not.contain('Venha');
    const limited = await call(`${h.url}/api/v1/notifications/deliveries?limit=1`, {
      headers: authHeaders(TOKENS.ADMIN),
    });
    expect(decodeAs(DeliveryList, limited.json).items).to.have.length(1);
    for (const token of [TOKENS.CHAMADOR, TOKENS.RELATORIOS, TOKENS.CADASTRO])
      expectEnvelope(await h.get(`/api/v1/notifications/deliveries`, token), 403, 'FORBIDDEN_ROLE');
    expectEnvelope(
      await call(`${h.url}/api/v1/notifications/deliveries?limit=0`, {
        headers: authHeaders(TOKENS.ADMIN),
      }),
      400,
      'VALIDATION_FAILED',
    );
  });

  it("the admins list a session's pages; the door may page but not list, the reports may list but not page", async () => {
    const first = sent(await page({ message: 'Venha.' }));
    now += 3 * 60_000;
    const second = sent(await page(undefined, TOKENS.ADMIN));
    for (const token of [TOKENS.ADMIN, TOKENS.RELATORIOS]) {
      const r = await list(token);
      expect(r.status, r.text).to.equal(200);
      expect(decodeAs(PageList, r.json).items).to.deep.equal([first, second]);
      expectNoPhoneDigits(r.text);
    }
    expectEnvelope(await list(TOKENS.CHAMADOR), 403, 'FORBIDDEN_ROLE');
    expectEnvelope(await list(TOKENS.ADMIN, randomUUID()), 404, 'NOT_FOUND');
    expectEnvelope(await page(undefined, TOKENS.RELATORIOS), 403, 'FORBIDDEN_ROLE');
    expectEnvelope(await page(undefined, TOKENS.CADASTRO), 403, 'FORBIDDEN_ROLE');
    expectEnvelope(
      await call(`${h.url}${pagePath()}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() },
      }),
      401,
      'UNAUTHORIZED',
    );
    expect(gateway.received).to.have.length(4);
  });
});
