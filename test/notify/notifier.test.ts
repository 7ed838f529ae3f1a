import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import type { DeliveryLog, NotificationDelivery } from '../../src/domain/notifications.js';
import { runWithin, startDeadline } from '../../src/lib/deadline.js';
import { DELIVERY_RESERVE_MS, webhookNotifier } from '../../src/notify/notifier.js';
import type { WebhookRetryPolicy } from '../../src/rules/webhookRetry.js';
import { fakeWebhookReceiver, headerOf, type ReceivedRequest } from '../support/fakeWebhookReceiver.js';

const SECRET_KEY = new Uint8Array(Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64'));
const FAST: WebhookRetryPolicy = {
  attempts: 3,
  attemptTimeoutMs: 1_000,
  firstDelayMs: 20,
  maxDelayMs: 40,
  deadlineMs: 5_000,
};

/** A gateway that answers each request with the next of `statuses` (the last one from then on). */
const gateway = (statuses: number[]) =>
  fakeWebhookReceiver((hits) => statuses[Math.min(hits.length, statuses.length) - 1] ?? 200);

const memoryLog = (): DeliveryLog & { readonly all: NotificationDelivery[] } => {
  const all: NotificationDelivery[] = [];
  return {
    all,
    record: async (d) => {
      all.push(d);
    },
    newest: async (limit) => [...all].reverse().slice(0, limit),
  };
};

const header = (h: ReceivedRequest, name: string): string => {
  const v = headerOf(h, name);
  if (v === undefined) throw new Error(`no ${name} header`);
  return v;
};

/** The signature a receiver computes for itself, with node:crypto rather than the code under test. */
const expectSigned = (h: ReceivedRequest): void => {
  const signed = `${header(h, 'webhook-id')}.${header(h, 'webhook-timestamp')}.${h.body}`;
  expect(header(h, 'webhook-signature')).to.equal(
    `v1,${createHmac('sha256', SECRET_KEY).update(signed).digest('base64')}`,
  );
};

describe('webhook notifier', () => {
  it('POSTs the code as JSON, signed as Standard Webhooks says', async () => {
    const gw = await gateway([200]);
    try {
      const deliveries = memoryLog();
      const notifier = webhookNotifier({ url: gw.url, signingKey: SECRET_KEY, deliveries, retry: FAST });
      await notifier.sendCode('+55 11 5555-2222', '123456', 'pickup-verification');
      const [hit] = gw.hits;
      if (hit === undefined) throw new Error('nothing reached the gateway');
      expect(hit.body).to.equal(
        '{"to":"+55 11 5555-2222","message":"Chamada: seu código é 123456","purpose":"pickup-verification"}',
      );
      expect(hit.headers['content-type']).to.equal('application/json');
      const id = header(hit, 'webhook-id');
      const timestamp = header(hit, 'webhook-timestamp');
      expect(id).to.match(/^msg_[0-9a-f]{32}$/);
      expect(Math.abs(Number(timestamp) - Date.now() / 1000)).to.be.below(5);
      expectSigned(hit);
      expect(deliveries.all).to.have.length(1);
      expect(deliveries.all[0]).to.deep.include({ deliveryId: id, outcome: 'DELIVERED', signed: true });
    } finally {
      await gw.close();
    }
  });

  it('sends no signature without a secret', async () => {
    const gw = await gateway([200]);
    try {
      const deliveries = memoryLog();
      await webhookNotifier({ url: gw.url, deliveries, retry: FAST }).sendMessage(
        '+55',
        'oi',
        'guardian-page',
      );
      expect(gw.hits[0]?.headers['webhook-signature']).to.equal(undefined);
      expect(deliveries.all[0]?.signed).to.equal(false);
    } finally {
      await gw.close();
    }
  });

  it('tries a failed message again under the same webhook-id, each attempt signed anew', async () => {
    const gw = await gateway([500, 503, 200]);
    try {
      const deliveries = memoryLog();
      const notifier = webhookNotifier({ url: gw.url, signingKey: SECRET_KEY, deliveries, retry: FAST });
      await notifier.sendMessage('+55 11 5555-2222', 'Venha.', 'guardian-page');
      expect(gw.hits).to.have.length(3);
      expect(new Set(gw.hits.map((h) => header(h, 'webhook-id'))).size).to.equal(1);
      for (const hit of gw.hits) expectSigned(hit);
      expect(deliveries.all[0]?.outcome).to.equal('DELIVERED');
      expect(deliveries.all[0]?.attempts.map((a) => a.status)).to.deep.equal([500, 503, 200]);
    } finally {
      await gw.close();
    }
  });

  it('gives up after the last attempt: a page rejects, a code does not, and both are logged FAILED', async () => {
    const gw = await gateway([502]);
    try {
      const deliveries = memoryLog();
      const failed: string[] = [];
      const notifier = webhookNotifier({
        url: gw.url,
        deliveries,
        retry: FAST,
        onFailedDelivery: (d) => failed.push(d.deliveryId),
      });
      let rejected = false;
      await notifier.sendMessage('+55', 'Venha.', 'guardian-page').catch(() => {
        rejected = true;
      });
      expect(rejected).to.equal(true);
      await notifier.sendCode('+55', '654321', 'pickup-verification');
      expect(gw.hits).to.have.length(2 * FAST.attempts);
      expect(deliveries.all.map((d) => d.outcome)).to.deep.equal(['FAILED', 'FAILED']);
      expect(failed).to.deep.equal(deliveries.all.map((d) => d.deliveryId));
      expect(JSON.stringify(deliveries.all)).to.not.contain('654321').and.not.contain('Venha');
    } finally {
      await gw.close();
    }
  });

  it('does not try again when the gateway refuses the message itself (400), nor when there is no gateway', async () => {
    const gw = await gateway([400]);
    const deliveries = memoryLog();
    try {
      await webhookNotifier({ url: gw.url, deliveries, retry: FAST })
        .sendMessage('+55', 'x', 'guardian-page')
        .catch(() => undefined);
      expect(gw.hits).to.have.length(1);
    } finally {
      await gw.close();
    }
    // The port is closed now: no answer at all, tried again until the attempts run out.
    await webhookNotifier({ url: gw.url, deliveries, retry: FAST })
      .sendMessage('+55', 'x', 'guardian-page')
      .catch(() => undefined);
    expect(deliveries.all[1]?.attempts.map((a) => [a.status, a.failure])).to.deep.equal([
      [null, 'NETWORK'],
      [null, 'NETWORK'],
      [null, 'NETWORK'],
    ]);
  });

  it('fits a page sent within a request into what is left of its deadline: no retry that could not end before it', async () => {
    const gw = await gateway([503]);
    try {
      const deliveries = memoryLog();
      const notifier = webhookNotifier({ url: gw.url, deliveries, retry: FAST });
      // 300 ms left once the reserve for recording the outcome is kept: one attempt, and no time for another.
      const deadline = startDeadline(6_000, DELIVERY_RESERVE_MS + 300);
      const sent = await runWithin(deadline, () =>
        notifier.sendMessage('+55', 'Venha.', 'guardian-page').then(
          () => 'delivered',
          () => 'not delivered',
        ),
      );
      deadline.end();
      expect(sent).to.equal('not delivered');
      expect(gw.hits, 'one attempt, where the policy alone makes three').to.have.length(1);
      expect(deliveries.all.map((d) => d.outcome)).to.deep.equal(['FAILED']);
    } finally {
      await gw.close();
    }
  });
});
