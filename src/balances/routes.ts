// HTTP of balances and balance transactions (D21) and the sandbox top-up (D24).
import type { App, AppDeps } from '../platform/deps.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { absentBodyIsEmpty, errorResponses } from '../webhooks/api-schemas.ts';
import {
  Balance,
  BalanceList,
  BalanceTransactionPage,
  BalanceTransactionSearchBody,
  type BalanceTransactionSearchInput,
  TopUpBody,
} from './schemas.ts';
import * as service from './service.ts';

const security = [{ bearer: [] }];

export function registerBalanceRoutes(app: App, deps: AppDeps): void {
  app.get(
    '/api/v1/balances',
    {
      config: { scope: PAYMENT_SCOPES.paymentsRead },
      schema: {
        tags: ['balances'],
        operationId: 'listBalances',
        summary: 'List the organisation balances',
        description:
          'One entry per currency the organisation has touched, sorted by currency: `available` (spendable) ' +
          'and `held` (set aside for payouts in flight).',
        security,
        response: { 200: BalanceList, ...errorResponses() },
      },
    },
    async (request) => service.listBalances(deps, request.principal!.organisationId),
  );

  app.post(
    '/api/v1/balances/transactions/search',
    {
      config: { scope: PAYMENT_SCOPES.paymentsRead },
      preValidation: absentBodyIsEmpty,
      schema: {
        tags: ['balances'],
        operationId: 'searchBalanceTransactions',
        summary: 'Search balance transactions',
        description:
          'The movements of the available balances (D21), newest first by default. Filters `currency`, `type`, ' +
          '`resource_id`; sort by id, created_at or updated_at (entries never change: updated_at is created_at). ' +
          'No free-text search (422 on `search`).',
        security,
        body: BalanceTransactionSearchBody,
        response: { 200: BalanceTransactionPage, ...errorResponses(422) },
      },
    },
    async (request) =>
      service.searchBalanceTransactions(
        deps,
        request.principal!.organisationId,
        request.body as BalanceTransactionSearchInput,
      ),
  );
}

export function registerBalanceSandboxRoutes(app: App, deps: AppDeps): void {
  app.post(
    '/api/v1/sandbox/balances/top-up',
    {
      config: { scope: PAYMENT_SCOPES.paymentsWrite, idempotent: true },
      schema: {
        tags: ['sandbox'],
        operationId: 'sandboxTopUpBalance',
        summary: 'Add test money to a balance (sandbox only)',
        description:
          'Credits the available balance from the sandbox funding account and answers 200 with the balance. ' +
          'Honours Idempotency-Key.',
        security,
        body: TopUpBody,
        response: { 200: Balance, ...errorResponses(409, 422) },
      },
    },
    async (request) => service.topUp(deps, request.principal!.organisationId, request.body),
  );
}
