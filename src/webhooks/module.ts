// The webhook area (contract sections 2-4 and 6, D8-D11): subscriptions, events, delivery attempts, and
// the sandbox's test events. The delivery worker itself runs in the worker role (src/main.ts). The event
// catalogue is each area's own `eventTypes`, gathered in src/areas.ts; `webhook.ping` (the D9 health probe)
// is sent by the platform but is not listed and cannot be subscribed to.
import type { Area } from '../platform/area.ts';
import { registerWebhookRoutes } from './routes.ts';
import { registerWebhookSandboxRoutes } from './sandbox/routes.ts';
import { WEBHOOK_SCOPES } from './scopes.ts';
import { isPlainPayload } from './sealed-payload.ts';

export const webhooksArea: Area = {
  name: 'webhooks',
  scopes: [WEBHOOK_SCOPES.read, WEBHOOK_SCOPES.write],
  routes: registerWebhookRoutes,
  sandboxRoutes: registerWebhookSandboxRoutes,
  sealedColumns: [
    { table: 'webhook_subscriptions', key: ['id'], column: 'signing_secret_sealed' },
    { table: 'webhook_events', key: ['id'], column: 'payload', inClear: isPlainPayload },
  ],
};
