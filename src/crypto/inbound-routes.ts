// HTTP of inbound crypto funds (D22): the chain indexer's operator route and the sandbox simulation (D24).
import { Type } from '@sinclair/typebox';
import { operatorTarget, registerOperatorRoutes } from '../admin/operator-log.ts';
import { Deposit } from '../payments/schemas.ts';
import type { App, AppDeps } from '../platform/deps.ts';
import { component } from '../platform/openapi.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { ErrorBody, errorResponses, StoredText } from '../webhooks/api-schemas.ts';
import { recordChainDeposit, simulateChainDeposit } from './inbound.ts';

const ChainDepositBody = component(
  'ChainDepositRequest',
  Type.Object(
    {
      network: Type.String({ maxLength: 32 }),
      address: StoredText({ minLength: 1, maxLength: 128 }),
      asset: Type.String({ maxLength: 8 }),
      amount: Type.String({ maxLength: 40 }),
      tx_hash: StoredText({ minLength: 1, maxLength: 128 }),
      log_index: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
      confirmations: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
    },
    { additionalProperties: false },
  ),
);
type ChainDepositInput = typeof ChainDepositBody.static;

const SandboxDepositBody = component(
  'SandboxCryptoDepositRequest',
  Type.Object(
    {
      address: StoredText({ minLength: 1, maxLength: 128 }),
      asset: Type.String({ maxLength: 8 }),
      amount: Type.String({ maxLength: 40 }),
      network: Type.Optional(Type.String({ maxLength: 32 })),
      confirmations: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
    },
    { additionalProperties: false },
  ),
);
type SandboxDepositInput = typeof SandboxDepositBody.static;

export function registerInboundAdminRoutes(admin: App, deps: AppDeps): void {
  registerOperatorRoutes(admin, (scope) => {
    scope.post(
      '/crypto/deposits',
      {
        config: { operatorAction: 'crypto_deposit.record' },
        schema: {
          tags: ['operator'],
          operationId: 'adminRecordCryptoDeposit',
          summary: 'Record a chain notification of funds arriving on a deposit address',
          description:
            'What a chain indexer posts. Idempotent by network, tx_hash and log_index: 201 with the deposit it ' +
            'created, 200 with the same deposit on a repeat (its confirmations advanced; it is credited once). ' +
            'A hex tx_hash is case-insensitive. A repeat must name the same address, asset and amount (409 ' +
            'otherwise): each output of a transaction that pays several needs its own log_index (on bitcoin, ' +
            "the output index). detected until the network's confirmations (CRYPTO_CONFIRMATIONS), then " +
            'received. 404 when no deposit address matches.',
          body: ChainDepositBody,
          response: {
            200: Deposit,
            201: Deposit,
            401: ErrorBody,
            404: ErrorBody,
            409: ErrorBody,
            422: ErrorBody,
          },
        },
      },
      async (request, reply) => {
        const input = request.body as ChainDepositInput;
        operatorTarget(request, { network: input.network, tx_hash: input.tx_hash });
        const { created, deposit } = await recordChainDeposit(deps, input);
        return reply.code(created ? 201 : 200).send(deposit);
      },
    );
  });
}

export function registerInboundSandboxRoutes(app: App, deps: AppDeps): void {
  app.post(
    '/api/v1/sandbox/crypto/deposits',
    {
      config: { scope: PAYMENT_SCOPES.cryptoWrite, idempotent: true },
      schema: {
        tags: ['sandbox'],
        operationId: 'sandboxCryptoDeposit',
        summary: 'Simulate funds arriving on one of your deposit addresses (sandbox only)',
        description:
          'Answers 201 with the deposit it created: detected with 1 confirmation (or those given), then ' +
          "received after SANDBOX_STEP_DELAY_MS when the network's confirmations arrive. A transfer waiting on " +
          'the address is funded by it.',
        security: [{ bearer: [] }],
        body: SandboxDepositBody,
        response: { 201: Deposit, ...errorResponses(404, 422) },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await simulateChainDeposit(
            deps,
            request.principal!.organisationId,
            request.body as SandboxDepositInput,
          ),
        ),
  );
}
