// The sandbox's test events (D11): registered only when APP_ENV=sandbox.
import { Type } from '@sinclair/typebox';
import type { App, AppDeps } from '../../platform/deps.ts';
import { component } from '../../platform/openapi.ts';
import { errorResponses, StoredText } from '../api-schemas.ts';
import { Event } from '../events/schemas.ts';
import { WEBHOOK_SCOPES } from '../scopes.ts';
import * as service from './service.ts';

const TestEventBody = component(
  'SandboxTestEventRequest',
  Type.Object(
    {
      event_type_code: Type.String({
        maxLength: 100,
        description: 'A code published by GET /api/v1/webhooks/event-types.',
      }),
      data: Type.Optional(
        Type.Object({}, { additionalProperties: true, description: 'The envelope `data`. Default {}.' }),
      ),
      source_object_type: Type.Optional(StoredText({ minLength: 1, maxLength: 200 })),
      source_object_id: Type.Optional(StoredText({ minLength: 1, maxLength: 200 })),
      idempotency_key: Type.Optional(
        StoredText({
          minLength: 1,
          maxLength: 200,
          description: 'A repeated key answers 200 with the first event and queues nothing.',
        }),
      ),
    },
    {
      additionalProperties: false,
      examples: [
        {
          event_type_code: 'transfer.completed',
          data: { object: { id: 'tr_test_1', status: 'completed' }, previous_status: 'processing' },
          source_object_type: 'transfer',
          source_object_id: 'tr_test_1',
          idempotency_key: 'tr_test_1:completed',
        },
      ],
    },
  ),
);

export function registerWebhookSandboxRoutes(app: App, deps: AppDeps): void {
  app.post(
    '/api/v1/sandbox/webhooks/events',
    {
      config: { scope: WEBHOOK_SCOPES.write },
      schema: {
        tags: ['sandbox'],
        operationId: 'sandboxPublishTestEvent',
        summary: 'Publish a test webhook event (sandbox only)',
        description:
          'Publishes an event as the platform would and queues one delivery per active subscription of the ' +
          'organisation that holds the event type. 201 with the event as GET returns it; 200 with the first ' +
          'event when idempotency_key was used before (nothing queued); 400 when no active subscription ' +
          'matches (nothing recorded).',
        security: [{ bearer: [] }],
        body: TestEventBody,
        response: { 200: Event, 201: Event, ...errorResponses(400, 422) },
      },
    },
    async (request, reply) => {
      const { created, event } = await service.publishTestEvent(
        deps,
        request.principal!.organisationId,
        request.body as service.TestEventInput,
      );
      return reply.code(created ? 201 : 200).send(event);
    },
  );
}
