// HTTP of the subscription endpoints (contract section 4): each route maps to one service call.

import type { App, AppDeps } from '../../platform/deps.ts';
import { absentBodyIsEmpty, ErrorBody, errorResponses } from '../api-schemas.ts';
import { WEBHOOK_SCOPES } from '../scopes.ts';
import {
  CreateSubscriptionBody,
  Subscription,
  SubscriptionIdParams,
  SubscriptionPage,
  SubscriptionSearchBody,
  type SubscriptionSearchInput,
  SubscriptionWithSecret,
  UpdateSubscriptionBody,
  type UpdateSubscriptionInput,
} from './schemas.ts';
import * as service from './service.ts';

const BASE = '/api/v1/webhooks/subscriptions';
const security = [{ bearer: [] }];
const read = { scope: WEBHOOK_SCOPES.read };
const write = { scope: WEBHOOK_SCOPES.write };

export function registerSubscriptionRoutes(app: App, deps: AppDeps): void {
  app.post(
    BASE,
    {
      config: write,
      schema: {
        tags: ['webhooks'],
        operationId: 'createSubscription',
        summary: 'Create a webhook subscription',
        description:
          'Answers 201 with the subscription in `pending_verification` and its `signing_secret`, which is ' +
          'returned only here and by rotate-secret. Checks in order: 422 validation, 409 endpoint_url already ' +
          'subscribed (normalised), 400 when the organisation already holds 10 subscriptions that are not deleted.',
        security,
        body: CreateSubscriptionBody,
        response: { 201: SubscriptionWithSecret, ...errorResponses(400, 409, 422) },
      },
    },
    async (request, reply) => {
      const created = await service.createSubscription(deps, request.principal!.organisationId, request.body);
      return reply.code(201).header('cache-control', 'no-store').send(created);
    },
  );

  app.post(
    `${BASE}/search`,
    {
      config: read,
      preValidation: absentBodyIsEmpty,
      schema: {
        tags: ['webhooks'],
        operationId: 'searchSubscriptions',
        summary: 'Search webhook subscriptions',
        description:
          'Filters `status`, `event_type_codes` (any of the codes), `endpoint_url` (normalised); `search` ' +
          'matches a substring of endpoint_url; sort by id, created_at or updated_at (D4). Deleted ' +
          'subscriptions never appear.',
        security,
        body: SubscriptionSearchBody,
        response: { 200: SubscriptionPage, ...errorResponses(422) },
      },
    },
    async (request) =>
      service.searchSubscriptions(
        deps,
        request.principal!.organisationId,
        request.body as SubscriptionSearchInput,
      ),
  );

  app.get(
    `${BASE}/:subscription_id`,
    {
      config: read,
      schema: {
        tags: ['webhooks'],
        operationId: 'getSubscription',
        summary: 'Read a webhook subscription (never the secret)',
        description: 'Deleted subscriptions stay readable by id.',
        security,
        params: SubscriptionIdParams,
        response: { 200: Subscription, ...errorResponses(404) },
      },
    },
    async (request) =>
      service.getSubscription(deps, request.principal!.organisationId, request.params.subscription_id),
  );

  app.patch(
    `${BASE}/:subscription_id`,
    {
      config: write,
      schema: {
        tags: ['webhooks'],
        operationId: 'updateSubscription',
        summary: 'Update a webhook subscription',
        description:
          'Any of endpoint_url, event_type_codes (an empty list is ignored), max_retries, status. Status ' +
          'transitions: pending_verification -> active, active -> paused, paused -> active, auto_disabled -> ' +
          'active after a successful signed webhook.ping probe; the same status again is a no-op. Other ' +
          'transitions and any change of a deleted subscription: 400. pending_verification, auto_disabled, ' +
          'deleted: 422.',
        security,
        params: SubscriptionIdParams,
        body: UpdateSubscriptionBody,
        response: { 200: Subscription, ...errorResponses(400, 404, 409, 422) },
      },
    },
    async (request) =>
      service.updateSubscription(
        deps,
        request.principal!.organisationId,
        request.params.subscription_id,
        request.body as UpdateSubscriptionInput,
      ),
  );

  app.post(
    `${BASE}/:subscription_id/rotate-secret`,
    {
      config: write,
      schema: {
        tags: ['webhooks'],
        operationId: 'rotateSubscriptionSecret',
        summary: 'Rotate the signing secret',
        description:
          'Answers 200 with the subscription and the new `signing_secret`. Takes effect immediately: every ' +
          'request sent afterwards, retries of older events included, is signed with the new secret only.',
        security,
        params: SubscriptionIdParams,
        response: { 200: SubscriptionWithSecret, 400: ErrorBody, ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const rotated = await service.rotateSecret(
        deps,
        request.principal!.organisationId,
        request.params.subscription_id,
      );
      return reply.header('cache-control', 'no-store').send(rotated);
    },
  );

  app.delete(
    `${BASE}/:subscription_id`,
    {
      config: write,
      schema: {
        tags: ['webhooks'],
        operationId: 'deleteSubscription',
        summary: 'Delete a webhook subscription',
        description:
          'Answers 200 with the record in status `deleted`; repeatable. Stops deliveries, frees the slot, ' +
          'drops out of search; the subscription stays readable by id.',
        security,
        params: SubscriptionIdParams,
        response: { 200: Subscription, ...errorResponses(404) },
      },
    },
    async (request) =>
      service.deleteSubscription(deps, request.principal!.organisationId, request.params.subscription_id),
  );
}
