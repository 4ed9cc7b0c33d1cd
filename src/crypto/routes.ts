// HTTP of crypto networks and deposit addresses (D22), and the operator's view of the account keys.
import type { Static } from '@sinclair/typebox';
import type { App, AppDeps } from '../platform/deps.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { absentBodyIsEmpty, ErrorBody, errorResponses } from '../webhooks/api-schemas.ts';
import {
  AccountKeyList,
  AccountKeysQuery,
  CreateDepositAddressBody,
  type CreateDepositAddressInput,
  CryptoNetworkList,
  DepositAddress,
  DepositAddressIdParams,
  DepositAddressPage,
  DepositAddressSearchBody,
  type DepositAddressSearchInput,
} from './schemas.ts';
import * as service from './service.ts';

const BASE = '/api/v1/crypto/deposit-addresses';
const security = [{ bearer: [] }];
const tags = ['crypto'];

export function registerCryptoRoutes(app: App, deps: AppDeps): void {
  app.get(
    '/api/v1/crypto/networks',
    {
      config: { scope: PAYMENT_SCOPES.cryptoRead },
      schema: {
        tags,
        operationId: 'listCryptoNetworks',
        summary: 'List the crypto networks deposit addresses are offered on',
        description:
          'Sorted by code. `ethereum` and `polygon` share one EVM key (an address works on both chains), ' +
          '`tron`, `bitcoin`. A network whose key the operator has not configured is absent.',
        security,
        response: { 200: CryptoNetworkList, ...errorResponses() },
      },
    },
    async () => service.listNetworks(deps),
  );

  app.post(
    BASE,
    {
      config: { scope: PAYMENT_SCOPES.cryptoWrite, idempotent: true },
      schema: {
        tags,
        operationId: 'createDepositAddress',
        summary: 'Create a crypto deposit address',
        description:
          'Answers 201 with a new address, derived at the next unused index of the network’s key (never ' +
          'reused). 422 for an unknown network or an asset the network does not offer; 400 ' +
          'CORRIDOR_UNAVAILABLE for a network that is not offered; 409 for an external_id already used. ' +
          'Honours Idempotency-Key.',
        security,
        body: CreateDepositAddressBody,
        response: { 201: DepositAddress, ...errorResponses(400, 409, 422) },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await service.createDepositAddress(
            deps,
            request.principal!.organisationId,
            request.body as CreateDepositAddressInput,
          ),
        ),
  );

  app.post(
    `${BASE}/search`,
    {
      config: { scope: PAYMENT_SCOPES.cryptoRead },
      preValidation: absentBodyIsEmpty,
      schema: {
        tags,
        operationId: 'searchDepositAddresses',
        summary: 'Search deposit addresses',
        description:
          'Filters `network`, `asset`, `status`, `external_id`; `search` matches a substring of the address ' +
          '(any case) or the label; sort by id, created_at or updated_at (D4).',
        security,
        body: DepositAddressSearchBody,
        response: { 200: DepositAddressPage, ...errorResponses(422) },
      },
    },
    async (request) =>
      service.searchDepositAddresses(
        deps,
        request.principal!.organisationId,
        request.body as DepositAddressSearchInput,
      ),
  );

  app.get(
    `${BASE}/:deposit_address_id`,
    {
      config: { scope: PAYMENT_SCOPES.cryptoRead },
      schema: {
        tags,
        operationId: 'getDepositAddress',
        summary: 'Read a deposit address',
        security,
        params: DepositAddressIdParams,
        response: { 200: DepositAddress, ...errorResponses(404) },
      },
    },
    async (request) =>
      service.getDepositAddress(deps, request.principal!.organisationId, request.params.deposit_address_id),
  );

  app.post(
    `${BASE}/:deposit_address_id/disable`,
    {
      config: { scope: PAYMENT_SCOPES.cryptoWrite, idempotent: true },
      schema: {
        tags,
        operationId: 'disableDepositAddress',
        summary: 'Disable a deposit address',
        description:
          'Answers 200 with the address in status `disabled`; repeatable (the event ' +
          '`deposit_address.disabled` is published once). Stop showing the address to payers: funds that ' +
          'still arrive on it are recorded and credited. Honours Idempotency-Key.',
        security,
        params: DepositAddressIdParams,
        response: { 200: DepositAddress, ...errorResponses(404) },
      },
    },
    async (request) =>
      service.disableDepositAddress(
        deps,
        request.principal!.organisationId,
        request.params.deposit_address_id,
      ),
  );
}

export function registerCryptoAdminRoutes(admin: App, deps: AppDeps): void {
  admin.get(
    '/crypto/account-keys',
    {
      schema: {
        tags: ['operator'],
        operationId: 'adminListCryptoAccountKeys',
        summary: 'The configured account keys and their first addresses',
        description:
          'Per key family: the environment variable, the key as configured, its account path, the index the ' +
          'next address takes, and the addresses at indexes 0..count-1 (default 5), to compare with the ' +
          'wallet that holds the seed before going live. Derives without taking any index.',
        querystring: AccountKeysQuery,
        response: { 200: AccountKeyList, 422: ErrorBody },
      },
    },
    async (request) =>
      service.describeAccountKeys(
        deps,
        Number((request.query as Static<typeof AccountKeysQuery>).count ?? 5),
      ),
  );
}
