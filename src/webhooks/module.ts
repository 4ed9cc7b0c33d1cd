// The webhook area (contract sections 2-4 and 6, D8-D11): subscriptions, events, delivery attempts, and
// the sandbox's test events. The delivery worker itself runs in the worker role (src/main.ts).
import type { Area } from '../platform/area.ts';
import { PAYMENT_EVENT_TYPES } from './event-types.ts';
import { registerWebhookRoutes } from './routes.ts';
import { registerWebhookSandboxRoutes } from './sandbox/routes.ts';
import { WEBHOOK_SCOPES } from './scopes.ts';

export const webhooksArea: Area = {
  name: 'webhooks',
  scopes: [WEBHOOK_SCOPES.read, WEBHOOK_SCOPES.write],
  eventTypes: PAYMENT_EVENT_TYPES,
  routes: registerWebhookRoutes,
  sandboxRoutes: registerWebhookSandboxRoutes,
};
