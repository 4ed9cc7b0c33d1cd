// HTTP of the event endpoints (contract section 4): each route maps to one service call.

import type { App, AppDeps } from '../../platform/deps.ts';
import { absentBodyIsEmpty, errorResponses } from '../api-schemas.ts';
import { WEBHOOK_SCOPES } from '../scopes.ts';
import { Event, EventIdParams, EventPage, EventSearchBody } from './schemas.ts';
import * as service from './service.ts';

const BASE = '/api/v1/webhooks/events';
const security = [{ bearer: [] }];

export function registerEventRoutes(app: App, deps: AppDeps): void {
  app.post(
    `${BASE}/search`,
    {
      config: { scope: WEBHOOK_SCOPES.read },
      preValidation: absentBodyIsEmpty,
      schema: {
        tags: ['webhooks'],
        operationId: 'searchEvents',
        summary: 'Search webhook events',
        description:
          'Filters (each a non-empty list): id, public_id, status, event_type_code, source_object_type, ' +
          'source_object_id, idempotency_key. `search` matches id exactly when numeric, and public_id, ' +
          'idempotency_key, event_type_code by case-insensitive substring. Sort by id, created_at, ' +
          'updated_at. Rows leave out `payload`; read one event for it. Paging past the end is 200 with ' +
          'no items and the true total.',
        security,
        body: EventSearchBody,
        response: { 200: EventPage, ...errorResponses(422) },
      },
    },
    async (request) =>
      service.searchEvents(deps, request.principal!.organisationId, request.body as service.EventSearchInput),
  );

  app.get(
    `${BASE}/:event_id`,
    {
      config: { scope: WEBHOOK_SCOPES.read },
      schema: {
        tags: ['webhooks'],
        operationId: 'getEvent',
        summary: 'Read one webhook event in full, including its payload',
        description: '`payload` is the exact signed envelope, readable even if no delivery arrived.',
        security,
        params: EventIdParams,
        response: { 200: Event, ...errorResponses(404) },
      },
    },
    async (request) => service.getEvent(deps, request.principal!.organisationId, request.params.event_id),
  );

  app.post(
    `${BASE}/:event_id/replay`,
    {
      config: { scope: WEBHOOK_SCOPES.write },
      schema: {
        tags: ['webhooks'],
        operationId: 'replayEvent',
        summary: 'Replay a dead_letter event',
        description:
          'Answers 202 with the event: a new round of deliveries is queued to every active subscription ' +
          'matching the event type, including those that already received it; the event is `failed` until ' +
          'they conclude. Not idempotent: every call queues another round. With no active matching ' +
          'subscription nothing is queued and the event stays `dead_letter`. Only `dead_letter` events ' +
          'can be replayed (else 400). Delivery attempts show the result.',
        security,
        params: EventIdParams,
        response: { 202: Event, ...errorResponses(400, 404) },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(await service.replayEvent(deps, request.principal!.organisationId, request.params.event_id)),
  );
}
