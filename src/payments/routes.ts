// HTTP of deposits and payouts (D21), their sandbox simulations (D24) and the operator's manual rail (D21,
// D23): each route maps to one service call.
import { Type } from '@sinclair/typebox';
import { operatorTarget, registerOperatorRoutes } from '../admin/operator-log.ts';
import type { App, AppDeps } from '../platform/deps.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { absentBodyIsEmpty, ErrorBody, errorResponses } from '../webhooks/api-schemas.ts';
import * as deposits from './deposits.ts';
import * as payouts from './payouts.ts';
import {
  CreateDepositBody,
  type CreateDepositInput,
  CreatePayoutBody,
  Deposit,
  DepositIdParams,
  DepositPage,
  DepositReferenceParams,
  DepositSearchBody,
  type DepositSearchInput,
  FailDepositBody,
  FailPayoutBody,
  type FailPayoutInput,
  OperatorFailPayoutBody,
  Payout,
  PayoutDestination,
  PayoutIdParams,
  PayoutPage,
  PayoutSearchBody,
  type PayoutSearchInput,
  ReceiveDepositBody,
  type ReceiveDepositInput,
  SandboxReceiveBody,
  type SandboxReceiveInput,
} from './schemas.ts';

const security = [{ bearer: [] }];
const read = { scope: PAYMENT_SCOPES.paymentsRead };
const write = { scope: PAYMENT_SCOPES.paymentsWrite, idempotent: true };
const DEPOSITS = '/api/v1/payments/deposits';
const PAYOUTS = '/api/v1/payments/payouts';

export function registerPaymentRoutes(app: App, deps: AppDeps): void {
  app.post(
    DEPOSITS,
    {
      config: write,
      schema: {
        tags: ['payments'],
        operationId: 'createDeposit',
        summary: 'Initiate a deposit',
        description:
          'Answers 201 with a pending deposit and its instructions: for a bank transfer the account to pay ' +
          'and a unique `reference` the payer must quote; for crypto an address of its own. It expires after ' +
          'DEPOSIT_TTL_SECONDS unless funds arrive. Honours Idempotency-Key.',
        security,
        body: CreateDepositBody,
        response: { 201: Deposit, ...errorResponses(400, 409, 422) },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await deposits.createDeposit(
            deps,
            request.principal!.organisationId,
            request.body as CreateDepositInput,
          ),
        ),
  );

  app.post(
    `${DEPOSITS}/search`,
    {
      config: read,
      preValidation: absentBodyIsEmpty,
      schema: {
        tags: ['payments'],
        operationId: 'searchDeposits',
        summary: 'Search deposits',
        description:
          'Filters `status`, `method`, `currency`, `transfer_id`, `external_id`; sort by id, created_at, updated_at (D4). No free-text search (422 on `search`).',
        security,
        body: DepositSearchBody,
        response: { 200: DepositPage, ...errorResponses(422) },
      },
    },
    async (request) =>
      deposits.searchDeposits(deps, request.principal!.organisationId, request.body as DepositSearchInput),
  );

  app.get(
    `${DEPOSITS}/:deposit_id`,
    {
      config: read,
      schema: {
        tags: ['payments'],
        operationId: 'getDeposit',
        summary: 'Read a deposit',
        security,
        params: DepositIdParams,
        response: { 200: Deposit, ...errorResponses(404) },
      },
    },
    async (request) =>
      deposits.getDeposit(deps, request.principal!.organisationId, request.params.deposit_id),
  );

  app.post(
    PAYOUTS,
    {
      config: write,
      schema: {
        tags: ['payments'],
        operationId: 'createPayout',
        summary: 'Initiate a payout',
        description:
          'Answers 201 with a pending payout; the amount leaves the available balance at once (400 ' +
          'INSUFFICIENT_FUNDS when short, nothing created). The beneficiary must be active (400 ' +
          'BENEFICIARY_NOT_ACTIVE), known to the organisation (404 naming beneficiary_id) and paid in ' +
          '`currency` (422). Honours Idempotency-Key.',
        security,
        body: CreatePayoutBody,
        response: { 201: Payout, ...errorResponses(400, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await payouts.createPayout(deps, request.principal!.organisationId, request.body)),
  );

  app.post(
    `${PAYOUTS}/search`,
    {
      config: read,
      preValidation: absentBodyIsEmpty,
      schema: {
        tags: ['payments'],
        operationId: 'searchPayouts',
        summary: 'Search payouts',
        description:
          'Filters `status`, `beneficiary_id`, `currency`, `transfer_id`, `external_id`; sort by id, created_at, updated_at (D4). No free-text search (422 on `search`).',
        security,
        body: PayoutSearchBody,
        response: { 200: PayoutPage, ...errorResponses(422) },
      },
    },
    async (request) =>
      payouts.searchPayouts(deps, request.principal!.organisationId, request.body as PayoutSearchInput),
  );

  app.get(
    `${PAYOUTS}/:payout_id`,
    {
      config: read,
      schema: {
        tags: ['payments'],
        operationId: 'getPayout',
        summary: 'Read a payout',
        security,
        params: PayoutIdParams,
        response: { 200: Payout, ...errorResponses(404) },
      },
    },
    async (request) => payouts.getPayout(deps, request.principal!.organisationId, request.params.payout_id),
  );

  app.post(
    `${PAYOUTS}/:payout_id/cancel`,
    {
      config: write,
      schema: {
        tags: ['payments'],
        operationId: 'cancelPayout',
        summary: 'Cancel a pending payout',
        description:
          'Only a pending payout of its own (400 INVALID_STATE otherwise, and for the payout leg of a transfer, ' +
          'which moves with its transfer); the amount returns to the available balance.',
        security,
        params: PayoutIdParams,
        response: { 200: Payout, ...errorResponses(400, 404) },
      },
    },
    async (request) =>
      payouts.cancelPayout(deps, request.principal!.organisationId, request.params.payout_id),
  );
}

export function registerPaymentSandboxRoutes(app: App, deps: AppDeps): void {
  app.post(
    '/api/v1/sandbox/deposits/:deposit_id/receive',
    {
      config: write,
      schema: {
        tags: ['sandbox'],
        operationId: 'sandboxReceiveDeposit',
        summary: 'Simulate the funds of a bank-transfer deposit arriving (sandbox only)',
        description: 'Default amount: the expected amount. Answers 200 with the deposit.',
        security,
        params: DepositIdParams,
        body: SandboxReceiveBody,
        response: { 200: Deposit, ...errorResponses(400, 404, 422) },
      },
      preValidation: absentBodyIsEmpty,
    },
    async (request) =>
      (
        await deposits.receiveDeposit(
          deps,
          request.principal!.organisationId,
          request.params.deposit_id,
          request.body as SandboxReceiveInput,
        )
      ).deposit,
  );

  for (const outcome of ['complete', 'fail', 'return'] as const) {
    app.post(
      `/api/v1/sandbox/payouts/:payout_id/${outcome}`,
      {
        config: write,
        preValidation: absentBodyIsEmpty,
        schema: {
          tags: ['sandbox'],
          operationId: `sandbox${outcome[0]!.toUpperCase()}${outcome.slice(1)}Payout`,
          summary: `Simulate the rail: ${outcome} a payout (sandbox only)`,
          description: {
            complete: 'A processing payout completes. A failure_reason is refused (422).',
            fail: 'A processing payout fails (failure_reason, default rejected_by_bank).',
            return:
              'A completed payout comes back (failure_reason, default returned): the amount returns to the available balance.',
          }[outcome],
          security,
          params: PayoutIdParams,
          body: FailPayoutBody,
          response: { 200: Payout, ...errorResponses(400, 404, 422) },
        },
      },
      async (request) =>
        payouts.settlePayout(
          deps,
          request.principal!.organisationId,
          request.params.payout_id,
          outcome,
          (request.body as FailPayoutInput).failure_reason,
        ),
    );
  }
}

export function registerPaymentAdminRoutes(admin: App, deps: AppDeps): void {
  registerOperatorRoutes(admin, (scope) => {
    scope.post(
      '/deposits/:deposit_id/receive',
      {
        config: { operatorAction: 'deposit.receive' },
        schema: {
          tags: ['operator'],
          operationId: 'adminReceiveDeposit',
          summary: "Record a bank payment quoting a deposit's reference (manual rail)",
          description:
            'A pending deposit: 200 with it, credited with `amount`. A deposit that no longer waits (received, ' +
            'expired, failed, reversed: a payer who split the payment, paid twice or paid late): 201 with a new ' +
            'deposit of the same organisation, currency and transfer, credited with `amount`; it funds that ' +
            'transfer if it still awaits its deposit, as a payment to its current reference would, else it stays ' +
            'on the balance. That needs `bank_transaction_id` (422 without it). A record whose ' +
            '`bank_transaction_id` is already recorded, for this reference and amount: 200 with the deposit ' +
            'that recorded it, nothing credited again; for another payment: 409. A deposit credited without ' +
            '`bank_transaction_id` cannot tell a retry of that record from another payment: a record quoting ' +
            'its reference, sent to it or to any deposit showing that reference, is 409 unless `further_payment` ' +
            'is true. Idempotency-Key is not honoured here: ' +
            '`bank_transaction_id` is what makes a retry safe, so give it on every record.',
          params: DepositIdParams,
          body: ReceiveDepositBody,
          response: {
            200: Deposit,
            201: Deposit,
            400: ErrorBody,
            401: ErrorBody,
            404: ErrorBody,
            409: ErrorBody,
            422: ErrorBody,
          },
        },
      },
      async (request, reply) => {
        const body = request.body as ReceiveDepositInput;
        operatorTarget(request, {
          deposit_id: request.params.deposit_id,
          ...(body.bank_transaction_id !== undefined
            ? { bank_transaction_id: body.bank_transaction_id }
            : {}),
        });
        const { created, deposit } = await deposits.receiveDeposit(
          deps,
          null,
          request.params.deposit_id,
          body,
        );
        if (created) operatorTarget(request, { new_deposit_id: deposit.id });
        return reply.code(created ? 201 : 200).send(deposit);
      },
    );
    scope.get(
      '/deposits/by-reference/:reference',
      {
        schema: {
          tags: ['operator'],
          operationId: 'adminFindDepositByReference',
          summary: 'The deposit a bank payment quotes (its reference; capitals and spaces do not count)',
          params: DepositReferenceParams,
          response: { 200: Deposit, 401: ErrorBody, 404: ErrorBody },
        },
      },
      async (request) => deposits.depositByReference(deps, request.params.reference),
    );
    scope.post(
      '/deposits/:deposit_id/fail',
      {
        config: { operatorAction: 'deposit.fail' },
        preValidation: absentBodyIsEmpty,
        schema: {
          tags: ['operator'],
          operationId: 'adminFailDeposit',
          summary: 'Record that a pending deposit will not arrive',
          params: DepositIdParams,
          body: FailDepositBody,
          response: { 200: Deposit, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 422: ErrorBody },
        },
      },
      async (request) => {
        operatorTarget(request, { deposit_id: request.params.deposit_id });
        return deposits.failDeposit(
          deps,
          request.params.deposit_id,
          (request.body as { failure_reason?: string }).failure_reason,
        );
      },
    );
    scope.post(
      '/deposits/:deposit_id/reverse',
      {
        config: { operatorAction: 'deposit.reverse' },
        schema: {
          tags: ['operator'],
          operationId: 'adminReverseDeposit',
          summary: 'Reverse a received deposit (taken back by the bank): debits it back',
          params: DepositIdParams,
          response: { 200: Deposit, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
        },
      },
      async (request) => {
        operatorTarget(request, { deposit_id: request.params.deposit_id });
        return deposits.reverseDeposit(deps, request.params.deposit_id);
      },
    );
    scope.get(
      '/payouts/waiting',
      {
        schema: {
          tags: ['operator'],
          operationId: 'adminListWaitingPayouts',
          summary: 'Payouts of the manual rail waiting in processing, oldest first (at most 500)',
          response: { 200: Type.Array(Payout), 401: ErrorBody },
        },
      },
      async () => payouts.payoutsWaiting(deps, 500),
    );
    scope.get(
      '/payouts/:payout_id/destination',
      {
        // Opens a beneficiary's sealed account (D13): logged as an operator action, like every change.
        config: { operatorAction: 'payout.destination' },
        schema: {
          tags: ['operator'],
          operationId: 'adminGetPayoutDestination',
          summary: "Where to pay a payout by hand: its amount, reference and beneficiary's account in clear",
          description:
            "The beneficiary's account as GET /api/v1/beneficiaries/{beneficiary_id} answers it to its " +
            'organisation. Any payout, whatever its status; a beneficiary deleted after the payout was made ' +
            'is shown with status `deleted` (its payout is still paid, D19, D20). Each read is logged as the ' +
            'operator action `payout.destination`.',
          params: PayoutIdParams,
          response: { 200: PayoutDestination, 401: ErrorBody, 404: ErrorBody },
        },
      },
      async (request, reply) => {
        operatorTarget(request, { payout_id: request.params.payout_id });
        const destination = await payouts.payoutDestination(deps, request.params.payout_id);
        operatorTarget(request, { beneficiary_id: destination.beneficiary.id });
        return reply.header('cache-control', 'no-store').send(destination);
      },
    );
    for (const outcome of ['complete', 'fail', 'return'] as const) {
      scope.post(
        `/payouts/:payout_id/${outcome}`,
        {
          config: { operatorAction: `payout.${outcome}` },
          preValidation: absentBodyIsEmpty,
          schema: {
            tags: ['operator'],
            operationId: `admin${outcome[0]!.toUpperCase()}${outcome.slice(1)}Payout`,
            summary: {
              complete: 'Record a payout as paid',
              fail: 'Record a payout as failed (failure_reason)',
              return: 'Record a paid payout as returned by the bank (failure_reason, default returned)',
            }[outcome],
            params: PayoutIdParams,
            body: outcome === 'fail' ? OperatorFailPayoutBody : FailPayoutBody,
            response: { 200: Payout, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 422: ErrorBody },
          },
        },
        async (request) => {
          operatorTarget(request, { payout_id: request.params.payout_id });
          return payouts.settlePayout(
            deps,
            null,
            request.params.payout_id,
            outcome,
            (request.body as FailPayoutInput).failure_reason,
          );
        },
      );
    }
  });
}
