// HTTP of quotes (D20) and their sandbox simulation (D24): each route maps to one service call.
import type { App, AppDeps } from '../platform/deps.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { absentBodyIsEmpty, errorResponses } from '../webhooks/api-schemas.ts';
import { CreateQuoteBody, type CreateQuoteInput, Quote, QuoteIdParams } from './quote-schemas.ts';
import * as quotes from './quotes.ts';
import {
  ConfirmBody,
  type ConfirmInput,
  FundBody,
  type FundInput,
  Transfer,
  TransferIdParams,
  TransferPage,
  TransferSearchBody,
  type TransferSearchInput,
} from './transfer-schemas.ts';
import * as transfers from './transfers.ts';

const security = [{ bearer: [] }];
const QUOTES = '/api/v1/transfers/quotes';
const TRANSFERS = '/api/v1/transfers';
const read = { scope: PAYMENT_SCOPES.transfersRead };
const write = { scope: PAYMENT_SCOPES.transfersWrite, idempotent: true };

export function registerTransferRoutes(app: App, deps: AppDeps): void {
  app.post(
    QUOTES,
    {
      config: { scope: PAYMENT_SCOPES.transfersWrite, idempotent: true },
      schema: {
        tags: ['transfers'],
        operationId: 'createQuote',
        summary: 'Get a quote',
        description:
          'Exactly one of source_amount (send this, fee included) and destination_amount (deliver this): 422 ' +
          'otherwise. Every amount is computed from the rate shown (D20). The source amount must lie within ' +
          "the corridor's limits (422 on the amount given). 400 CORRIDOR_UNAVAILABLE for a suspended corridor, " +
          '400 RATE_UNAVAILABLE without a fresh rate. Open for QUOTE_TTL_SECONDS. Honours Idempotency-Key.',
        security,
        body: CreateQuoteBody,
        response: { 201: Quote, ...errorResponses(400, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await quotes.createQuote(deps, request.principal!.organisationId, request.body as CreateQuoteInput),
        ),
  );

  app.get(
    `${QUOTES}/:quote_id`,
    {
      config: { scope: PAYMENT_SCOPES.transfersRead },
      schema: {
        tags: ['transfers'],
        operationId: 'getQuote',
        summary: 'Read a quote',
        security,
        params: QuoteIdParams,
        response: { 200: Quote, ...errorResponses(404) },
      },
    },
    async (request) => quotes.getQuote(deps, request.principal!.organisationId, request.params.quote_id),
  );

  app.post(
    `${QUOTES}/:quote_id/confirm`,
    {
      config: write,
      schema: {
        tags: ['transfers'],
        operationId: 'confirmQuote',
        summary: 'Confirm a quote: create the transfer',
        description:
          'Answers 201 with the transfer. The quote must be open (400 QUOTE_EXPIRED, 400 INVALID_STATE when ' +
          'accepted), the beneficiary known to the organisation (404 naming beneficiary_id), active (400 ' +
          "BENEFICIARY_NOT_ACTIVE) and of the corridor's country, currency and method (422 on beneficiary_id). " +
          '`balance` funding takes the source amount now (400 ' +
          'INSUFFICIENT_FUNDS, nothing created) and goes to processing; `bank_transfer` and `crypto` wait in ' +
          'awaiting_deposit with deposit_instructions. A sanctions hit on the beneficiary holds it in_review. ' +
          'Honours Idempotency-Key: two requests with one key create one transfer.',
        security,
        params: QuoteIdParams,
        body: ConfirmBody,
        response: { 201: Transfer, ...errorResponses(400, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await transfers.confirmQuote(
            deps,
            request.principal!.organisationId,
            request.params.quote_id,
            request.body as ConfirmInput,
          ),
        ),
  );

  app.post(
    `${TRANSFERS}/search`,
    {
      config: read,
      preValidation: absentBodyIsEmpty,
      schema: {
        tags: ['transfers'],
        operationId: 'searchTransfers',
        summary: 'Search transfers',
        description:
          'Filters status, beneficiary_id, corridor_id, quote_id, funding_method, source_currency, ' +
          'destination_currency, external_id; `search` matches the id exactly, the reference or the external id ' +
          '(substring, case-insensitive); sort by id, created_at, updated_at (D4).',
        security,
        body: TransferSearchBody,
        response: { 200: TransferPage, ...errorResponses(422) },
      },
    },
    async (request) =>
      transfers.searchTransfers(deps, request.principal!.organisationId, request.body as TransferSearchInput),
  );

  app.get(
    `${TRANSFERS}/:transfer_id`,
    {
      config: read,
      schema: {
        tags: ['transfers'],
        operationId: 'getTransfer',
        summary: 'Read a transfer, with its deposit and payout legs',
        security,
        params: TransferIdParams,
        response: { 200: Transfer, ...errorResponses(404) },
      },
    },
    async (request) =>
      transfers.getTransfer(deps, request.principal!.organisationId, request.params.transfer_id),
  );

  app.post(
    `${TRANSFERS}/:transfer_id/cancel`,
    {
      config: write,
      schema: {
        tags: ['transfers'],
        operationId: 'cancelTransfer',
        summary: 'Cancel a transfer awaiting its deposit or in review',
        description: 'Money already taken goes back to the balance. 400 INVALID_STATE from any other status.',
        security,
        params: TransferIdParams,
        response: { 200: Transfer, ...errorResponses(400, 404) },
      },
    },
    async (request) =>
      transfers.cancelTransfer(deps, request.principal!.organisationId, request.params.transfer_id),
  );
}

export function registerTransferSandboxRoutes(app: App, deps: AppDeps): void {
  app.post(
    '/api/v1/sandbox/quotes/:quote_id/expire',
    {
      config: { scope: PAYMENT_SCOPES.transfersWrite, idempotent: true },
      schema: {
        tags: ['sandbox'],
        operationId: 'sandboxExpireQuote',
        summary: 'Expire an open quote now (sandbox only)',
        description: 'Answers 200 with the quote; 400 INVALID_STATE when a transfer accepted it.',
        security,
        params: QuoteIdParams,
        response: { 200: Quote, ...errorResponses(400, 404) },
      },
    },
    async (request) =>
      quotes.expireQuoteNow(deps, request.principal!.organisationId, request.params.quote_id),
  );

  app.post(
    '/api/v1/sandbox/transfers/:transfer_id/fund',
    {
      config: write,
      preValidation: absentBodyIsEmpty,
      schema: {
        tags: ['sandbox'],
        operationId: 'sandboxFundTransfer',
        summary: 'Simulate the deposit a transfer waits for (sandbox only)',
        description:
          'A deposit matching the instructions arrives (default amount: the source amount). At least the ' +
          'source amount funds the transfer (an excess stays on the balance); less is credited to the balance ' +
          'and the transfer waits on a new deposit. Answers 200 with the transfer; 400 `INVALID_STATE` when the ' +
          'transfer does not await its deposit, or when a transaction to its crypto address was seen and ' +
          'awaits its confirmations (that transaction funds it).',
        security,
        params: TransferIdParams,
        body: FundBody,
        response: { 200: Transfer, ...errorResponses(400, 404, 422) },
      },
    },
    async (request) =>
      transfers.fundTransfer(
        deps,
        request.principal!.organisationId,
        request.params.transfer_id,
        (request.body as FundInput).amount,
      ),
  );

  app.post(
    '/api/v1/sandbox/transfers/:transfer_id/expire',
    {
      config: write,
      schema: {
        tags: ['sandbox'],
        operationId: 'sandboxExpireTransfer',
        summary: 'Expire a transfer awaiting its deposit now (sandbox only)',
        security,
        params: TransferIdParams,
        response: { 200: Transfer, ...errorResponses(400, 404) },
      },
    },
    async (request) =>
      transfers.expireTransferNow(deps, request.principal!.organisationId, request.params.transfer_id),
  );
}
