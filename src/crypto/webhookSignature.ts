/**
 * Standard Webhooks signatures (decision 0041): HMAC-SHA256 of `${id}.${timestamp}.${body}`, keyed with
 * the base64-decoded part of a `whsec_…` secret, sent as `webhook-signature: v1,<base64>`. The
 * timestamp is whole seconds; each attempt is signed anew with its own timestamp, under the same id.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { isWebhookSecret, WEBHOOK_SECRET_PREFIX } from '../domain/notifications.js';

/** The HMAC key of a `whsec_…` secret; undefined for anything else (the configuration refuses those). */
export const webhookKey = (secret: string): Uint8Array | undefined =>
  isWebhookSecret(secret)
    ? new Uint8Array(Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64'))
    : undefined;

export const signWebhook = (key: Uint8Array, id: string, timestampSeconds: number, body: string): string =>
  `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`, 'utf8').digest('base64')}`;

/** A message id for `webhook-id`: unique per message, the same for each of its attempts. */
export const newWebhookId = (): string => `msg_${randomUUID().replaceAll('-', '')}`;
