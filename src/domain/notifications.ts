/**
 * Notifications sent through the webhook (decision 0041): the signing secret's format, and the delivery
 * log an ADMIN reads. A delivery names its purpose and how each attempt ended, never the phone or the
 * text (a one-time code must not be stored in the clear, and the log is not where numbers are read).
 */
import * as t from 'io-ts';
import { boundedArray, boundedInt, IsoInstant, nullable, object, pageLimit, refine } from './codec.js';

/** Standard Webhooks: a `whsec_` prefix, then the key in base64; 24 to 64 bytes of key. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
const MIN_SECRET_BYTES = 24;
const MAX_SECRET_BYTES = 64;

/** Whether `s` is a `whsec_…` secret whose key is 24 to 64 bytes of canonical base64. */
export const isWebhookSecret = (s: string): boolean => {
  if (!s.startsWith(WEBHOOK_SECRET_PREFIX)) return false;
  const key = s.slice(WEBHOOK_SECRET_PREFIX.length);
  if (key.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(key)) return false;
  const bytes = (key.length / 4) * 3 - (key.endsWith('==') ? 2 : key.endsWith('=') ? 1 : 0);
  return bytes >= MIN_SECRET_BYTES && bytes <= MAX_SECRET_BYTES;
};

export const WEBHOOK_SECRET_RULE = `${WEBHOOK_SECRET_PREFIX} followed by ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes in base64`;

/** Attempts of one delivery at the most (the first and its retries). */
export const MAX_DELIVERY_ATTEMPTS = 5;

const DeliveryId = refine(t.string, (s) => /^msg_[0-9a-f]{32}$/.test(s), 'a delivery id msg_…', {
  maxLength: 36,
  description: 'The `webhook-id` header of every attempt of this message.',
  examples: ['msg_2b1f0e4c9d8a4f6b8e3c7a1d5f9b0c2e'],
});

export const DeliveryAttempt = object(
  'NotificationDeliveryAttempt',
  {
    at: IsoInstant,
    status: nullable(
      boundedInt(100, 599, { description: "The gateway's HTTP status; null without an answer." }),
    ),
    failure: nullable(t.keyof({ TIMEOUT: null, NETWORK: null })),
    durationMs: boundedInt(0, 600_000),
  },
  {},
  { description: 'One POST of the message to the gateway.' },
);
export type DeliveryAttempt = t.TypeOf<typeof DeliveryAttempt>;

export const DeliveryOutcome = t.keyof({ DELIVERED: null, FAILED: null });
export type DeliveryOutcome = t.TypeOf<typeof DeliveryOutcome>;

export const NotificationDelivery = object(
  'NotificationDelivery',
  {
    deliveryId: DeliveryId,
    purpose: t.keyof({ 'pickup-verification': null, 'guardian-page': null }),
    outcome: DeliveryOutcome,
    signed: t.boolean,
    startedAt: IsoInstant,
    finishedAt: IsoInstant,
    attempts: boundedArray(DeliveryAttempt, MAX_DELIVERY_ATTEMPTS),
  },
  {},
  {
    description:
      'A message sent to the notification webhook (NOTIFY_WEBHOOK_URL) and every attempt at it; never the phone ' +
      'or the text. `signed`: it carried a Standard Webhooks signature (NOTIFY_WEBHOOK_SECRET).',
  },
);
export type NotificationDelivery = t.TypeOf<typeof NotificationDelivery>;
export type NotificationPurpose = NotificationDelivery['purpose'];

export const MAX_DELIVERIES_LISTED = 500;
export const DEFAULT_DELIVERIES_LISTED = 100;

export const NotificationDeliveryList = object(
  'NotificationDeliveryList',
  { items: boundedArray(NotificationDelivery, MAX_DELIVERIES_LISTED) },
  {},
  { description: 'Newest first.' },
);

export const NotificationDeliveryQuery = object(
  'NotificationDeliveryQuery',
  {},
  { limit: pageLimit(MAX_DELIVERIES_LISTED, DEFAULT_DELIVERIES_LISTED) },
);

/** Where deliveries are kept (a port: the notifier records, the route reads). */
export interface DeliveryLog {
  record(delivery: NotificationDelivery): Promise<void>;
  /** The newest `limit` deliveries, newest first. */
  newest(limit: number): Promise<NotificationDelivery[]>;
}
