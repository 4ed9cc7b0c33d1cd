// The webhook area of the public API (contract section 4): event types, subscriptions, events,
// delivery attempts. Each sub-module registers its own routes.
import { Type } from '@sinclair/typebox';
import type { App, AppDeps } from '../platform/deps.ts';
import { component } from '../platform/openapi.ts';
import { errorResponses } from './api-schemas.ts';
import { registerAttemptRoutes } from './attempts/routes.ts';
import { registerEventRoutes } from './events/routes.ts';
import { WEBHOOK_SCOPES } from './scopes.ts';
import { registerSubscriptionRoutes } from './subscriptions/routes.ts';

const EventType = component('EventType', Type.Object({ code: Type.String(), description: Type.String() }));
const EventTypeList = Type.Array(EventType, {
  description: 'Every event type code a subscription may hold, sorted by code (D8).',
  examples: [
    [{ code: 'beneficiary.activated', description: 'A beneficiary became active and can receive payouts.' }],
  ],
});

export function registerWebhookRoutes(app: App, deps: AppDeps): void {
  app.get(
    '/api/v1/webhooks/event-types',
    {
      config: { scope: WEBHOOK_SCOPES.read },
      schema: {
        tags: ['webhooks'],
        operationId: 'listEventTypes',
        summary: 'List the event types that can be subscribed to',
        description:
          'A JSON array of {code, description}, sorted by code, not paginated. Read it instead of ' +
          'hard-coding the list. `webhook.ping` (the health probe) is sent by the platform but is not listed.',
        security: [{ bearer: [] }],
        response: { 200: EventTypeList, ...errorResponses() },
      },
    },
    async () => [...deps.catalogue.eventTypes],
  );
  registerSubscriptionRoutes(app, deps);
  registerEventRoutes(app, deps);
  registerAttemptRoutes(app, deps);
}
