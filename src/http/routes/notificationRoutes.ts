/** The notification delivery log (ADMIN, decision 0041): each message sent to the webhook and its attempts. */
import * as E from 'fp-ts/lib/Either.js';
import {
  DEFAULT_DELIVERIES_LISTED,
  NotificationDeliveryList,
  NotificationDeliveryQuery,
} from '../../domain/notifications.js';
import { defineRoute } from '../route.js';

export const listDeliveriesRoute = defineRoute({
  operationId: 'listNotificationDeliveries',
  method: 'get',
  path: '/api/v1/notifications/deliveries',
  auth: 'admin',
  summary: 'Messages sent to the notification webhook, newest first',
  description:
    'Each one-time code and page sent to NOTIFY_WEBHOOK_URL: its `webhook-id`, purpose, whether it was signed, the ' +
    "outcome, and every attempt (when, the gateway's status or why there was none, how long it took); never the " +
    `phone or the text. Kept 30 days; \`limit\` ${DEFAULT_DELIVERIES_LISTED} by default. Empty while the ` +
    'development notifier (no webhook) is in use.',
  tags: ['notifications'],
  query: NotificationDeliveryQuery,
  response: { status: 200, description: 'The newest deliveries.', codec: NotificationDeliveryList },
  handler: async ({ query, deps }) => {
    const limit = query.limit === undefined ? DEFAULT_DELIVERIES_LISTED : Number(query.limit);
    return E.right({ body: { items: await deps.notifications.deliveries.newest(limit) } });
  },
});

export const notificationRoutes = [listDeliveriesRoute];
