// HTTP of the corridor endpoints (D16) and the operator's corridor management (D23): each route maps to
// one service call.
import { operatorTarget, registerOperatorRoutes } from '../admin/operator-log.ts';
import type { App, AppDeps } from '../platform/deps.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { absentBodyIsEmpty, ErrorBody, errorResponses } from '../webhooks/api-schemas.ts';
import {
  Corridor,
  CorridorIdParams,
  CorridorPage,
  CorridorSearchBody,
  type CorridorSearchInput,
  CreateCorridorBody,
  type CreateCorridorInput,
  UpdateCorridorBody,
  type UpdateCorridorInput,
} from './schemas.ts';
import * as service from './service.ts';

const BASE = '/api/v1/corridors';
const security = [{ bearer: [] }];
const read = { scope: PAYMENT_SCOPES.referenceRead };

export function registerCorridorRoutes(app: App, deps: AppDeps): void {
  app.post(
    `${BASE}/search`,
    {
      config: read,
      preValidation: absentBodyIsEmpty,
      schema: {
        tags: ['corridors'],
        operationId: 'searchCorridors',
        summary: 'Search corridors',
        description:
          'Filters (each a non-empty list): source_currency, destination_country, destination_currency, ' +
          'payout_method, status. `search` matches the codes: each word of it must equal the source ' +
          'currency, the destination currency or the destination country, case-insensitively ("usd de", ' +
          '"EUR"). Sort by id, created_at or updated_at (D4). Suspended corridors are listed too; they ' +
          'give no quotes.',
        security,
        body: CorridorSearchBody,
        response: { 200: CorridorPage, ...errorResponses(422) },
      },
    },
    async (request) => service.searchCorridors(deps, request.body as CorridorSearchInput),
  );

  app.get(
    `${BASE}/:corridor_id`,
    {
      config: read,
      schema: {
        tags: ['corridors'],
        operationId: 'getCorridor',
        summary: 'Read a corridor',
        security,
        params: CorridorIdParams,
        response: { 200: Corridor, ...errorResponses(404) },
      },
    },
    async (request) => service.getCorridor(deps, request.params.corridor_id),
  );
}

const ADMIN_BASE = '/corridors';

export function registerCorridorAdminRoutes(admin: App, deps: AppDeps): void {
  registerOperatorRoutes(admin, (scope) => {
    scope.post(
      ADMIN_BASE,
      {
        config: { operatorAction: 'corridor.create' },
        schema: {
          tags: ['operator'],
          operationId: 'adminCreateCorridor',
          summary: 'Create a corridor',
          description:
            'Answers 201 with the corridor (status active unless given). Currencies must be known, the ' +
            "country ISO 3166-1 alpha-2, amounts within the source currency's decimals with min_amount <= " +
            'max_amount, percents 0..100 (422 naming the field). A second corridor with the same ' +
            'source_currency, destination_country, destination_currency and payout_method: 409.',
          body: CreateCorridorBody,
          response: { 201: Corridor, 401: ErrorBody, 409: ErrorBody, 422: ErrorBody },
        },
      },
      async (request, reply) => {
        const body = request.body as CreateCorridorInput;
        operatorTarget(request, {
          route: `${body.source_currency}>${body.destination_currency} ${body.destination_country} ${body.payout_method}`,
        });
        const created = await service.createCorridor(deps, body);
        operatorTarget(request, { corridor_id: created.id, corridor_status: created.status });
        return reply.code(201).send(created);
      },
    );

    scope.patch(
      `${ADMIN_BASE}/:corridor_id`,
      {
        config: { operatorAction: 'corridor.update' },
        schema: {
          tags: ['operator'],
          operationId: 'adminUpdateCorridor',
          summary: "Change a corridor's limits, fees, markup, delivery estimate or status",
          description:
            'Any of min_amount, max_amount, fee_fixed, fee_percent, fx_markup_percent, ' +
            'estimated_delivery_seconds, status. `suspended` refuses new quotes (400 CORRIDOR_UNAVAILABLE); ' +
            'transfers already confirmed go on; `active` resumes. The route itself (currencies, country, ' +
            'method) cannot change: create another corridor.',
          params: CorridorIdParams,
          body: UpdateCorridorBody,
          response: { 200: Corridor, 401: ErrorBody, 404: ErrorBody, 422: ErrorBody },
        },
      },
      async (request) => {
        operatorTarget(request, {
          corridor_id: request.params.corridor_id,
          changes: Object.keys(request.body),
        });
        const updated = await service.updateCorridor(
          deps,
          request.params.corridor_id,
          request.body as UpdateCorridorInput,
        );
        operatorTarget(request, { corridor_status: updated.status });
        return updated;
      },
    );
  });
}
