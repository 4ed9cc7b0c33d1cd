// HTTP of the delivery-attempt endpoints (contract section 4): each route maps to one service call.

import type { App, AppDeps } from '../../platform/deps.ts';
import { absentBodyIsEmpty, errorResponses } from '../api-schemas.ts';
import { WEBHOOK_SCOPES } from '../scopes.ts';
import { Attempt, AttemptIdParams, AttemptPage, AttemptSearchBody } from './schemas.ts';
import * as service from './service.ts';

const BASE = '/api/v1/webhooks/delivery-attempts';
const security = [{ bearer: [] }];

export function registerAttemptRoutes(app: App, deps: AppDeps): void {
  app.post(
    `${BASE}/search`,
    {
      config: { scope: WEBHOOK_SCOPES.read },
      preValidation: absentBodyIsEmpty,
      schema: {
        tags: ['webhooks'],
        operationId: 'searchDeliveryAttempts',
        summary: 'Search delivery attempts',
        description:
          'Filters (each a non-empty list): webhook_event_ids, webhook_subscription_ids, status. Sort by id, ' +
          'created_at, updated_at, attempt_number, latency_ms. No free-text search (422 on `search`). Rows ' +
          'leave out request_headers and response_body_snippet; read one attempt for them.',
        security,
        body: AttemptSearchBody,
        response: { 200: AttemptPage, ...errorResponses(422) },
      },
    },
    async (request) =>
      service.searchAttempts(
        deps,
        request.principal!.organisationId,
        request.body as service.AttemptSearchInput,
      ),
  );

  app.get(
    `${BASE}/:attempt_id`,
    {
      config: { scope: WEBHOOK_SCOPES.read },
      schema: {
        tags: ['webhooks'],
        operationId: 'getDeliveryAttempt',
        summary: 'Read one delivery attempt in full, including the headers sent and the body returned',
        security,
        params: AttemptIdParams,
        response: { 200: Attempt, ...errorResponses(404) },
      },
    },
    async (request) => service.getAttempt(deps, request.principal!.organisationId, request.params.attempt_id),
  );
}
