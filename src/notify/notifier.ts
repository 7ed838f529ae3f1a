/**
 * Sending one-time codes and pages (decision 0037) to an adult's phone. The development notifier writes
 * them to the log (the phone appears only as its last 4 digits); the webhook notifier POSTs to an SMS
 * gateway of the deployment's choice. Chosen by NOTIFY_WEBHOOK_URL.
 *
 * The webhook (decision 0041) signs each message as Standard Webhooks says when NOTIFY_WEBHOOK_SECRET
 * is set, tries again within a bounded time when the gateway may accept later (`rules/webhookRetry.ts`),
 * and records every message, with its attempts, in the delivery log an ADMIN reads. A delivery made
 * for a request ends within what is left of its deadline (decision 0046), keeping a moment to record
 * the outcome; one made outside a request (a one-time code, sent beside its answer and not awaited)
 * has the whole policy.
 */

import type { Logger } from 'pino';
import { newWebhookId, signWebhook } from '../crypto/webhookSignature.js';
import type {
  DeliveryAttempt,
  DeliveryLog,
  NotificationDelivery,
  NotificationPurpose,
} from '../domain/notifications.js';
import { timeLeftMs } from '../lib/deadline.js';
import {
  type AttemptEnd,
  decideRetry,
  delivered,
  WEBHOOK_RETRY,
  type WebhookRetryPolicy,
  withinBudget,
} from '../rules/webhookRetry.js';

/** What a delivery inside a request leaves of its deadline: the claim's update, the ledger, the audit. */
export const DELIVERY_RESERVE_MS = 1_000;

export interface Notifier {
  /**
   * A one-time code. Never rejects: a code the gateway did not take leaves its entry pending, and the
   * delivery log says so; the request that asked for it is answered all the same.
   */
  sendCode(phone: string, code: string, purpose: NotificationPurpose): Promise<void>;
  /** A text composed by the caller (a page to a guardian); rejects when the gateway did not take it. */
  sendMessage(phone: string, message: string, purpose: NotificationPurpose): Promise<void>;
}

export const devNotifier = (logger: Logger): Notifier => ({
  async sendCode(phone, code, purpose) {
    logger.info(
      { phoneSuffix: phone.replace(/\D/g, '').slice(-4), code, purpose },
      'development notifier: one-time code',
    );
  },
  async sendMessage(phone, message, purpose) {
    logger.info(
      { phoneSuffix: phone.replace(/\D/g, '').slice(-4), message, purpose },
      'development notifier: message',
    );
  },
});

export class WebhookDeliveryFailed extends Error {
  constructor(readonly delivery: NotificationDelivery) {
    super(`the notification webhook did not take message ${delivery.deliveryId}`);
    this.name = 'WebhookDeliveryFailed';
  }
}

export interface WebhookNotifierOptions {
  readonly url: string;
  /** The HMAC key of NOTIFY_WEBHOOK_SECRET; without it the messages go unsigned. */
  readonly signingKey?: Uint8Array;
  readonly deliveries: DeliveryLog;
  readonly retry?: WebhookRetryPolicy;
  /** Told of every message the gateway did not take, after its last attempt. */
  readonly onFailedDelivery?: (delivery: NotificationDelivery) => void;
  /** Told when the delivery log could not be written (the message itself went, or not, all the same). */
  readonly onLogFailure?: (e: unknown) => void;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export const webhookNotifier = (options: WebhookNotifierOptions): Notifier => {
  const policy = options.retry ?? WEBHOOK_RETRY;

  const attempt = async (
    id: string,
    body: string,
    timeoutMs: number,
  ): Promise<{ end: AttemptEnd; record: DeliveryAttempt }> => {
    const started = Date.now();
    // Signed anew for each attempt: the receiver judges the timestamp's age, the id stays the message's.
    const timestamp = Math.floor(started / 1000);
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
    };
    if (options.signingKey !== undefined)
      headers['webhook-signature'] = signWebhook(options.signingKey, id, timestamp, body);
    const at = new Date(started).toISOString();
    try {
      const res = await fetch(options.url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      // The body is drained so the connection is reused; what the gateway says is not needed.
      await res.arrayBuffer().catch(() => undefined);
      return {
        end: { status: res.status },
        record: { at, status: res.status, failure: null, durationMs: Date.now() - started },
      };
    } catch (e) {
      const failure = e instanceof Error && e.name === 'TimeoutError' ? 'TIMEOUT' : 'NETWORK';
      return {
        end: { status: null },
        record: { at, status: null, failure, durationMs: Date.now() - started },
      };
    }
  };

  const deliver = async (
    to: string,
    message: string,
    purpose: NotificationPurpose,
  ): Promise<NotificationDelivery> => {
    const id = newWebhookId();
    const body = JSON.stringify({ to, message, purpose });
    const startedAt = Date.now();
    const bounded = withinBudget(policy, timeLeftMs(), DELIVERY_RESERVE_MS);
    const attempts: DeliveryAttempt[] = [];
    let ok = false;
    for (;;) {
      const { end, record } = await attempt(id, body, bounded.attemptTimeoutMs);
      attempts.push(record);
      ok = delivered(end);
      const next = decideRetry(attempts.length, end, Date.now() - startedAt, Math.random(), bounded);
      if (!next.retry) break;
      await sleep(next.delayMs);
    }
    const delivery: NotificationDelivery = {
      deliveryId: id,
      purpose,
      outcome: ok ? 'DELIVERED' : 'FAILED',
      signed: options.signingKey !== undefined,
      startedAt: new Date(startedAt).toISOString(),
      finishedAt: new Date().toISOString(),
      attempts,
    };
    await options.deliveries.record(delivery).catch((e: unknown) => options.onLogFailure?.(e));
    if (!ok) options.onFailedDelivery?.(delivery);
    return delivery;
  };

  return {
    async sendCode(phone, code, purpose) {
      await deliver(phone, `Chamada: seu código é ${code}`, purpose);
    },
    async sendMessage(phone, message, purpose) {
      const delivery = await deliver(phone, message, purpose);
      if (delivery.outcome !== 'DELIVERED') throw new WebhookDeliveryFailed(delivery);
    },
  };
};
