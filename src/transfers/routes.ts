// HTTP of quotes (D20) and their sandbox simulation (D24): each route maps to one service call.
import type { App, AppDeps } from '../platform/deps.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { errorResponses } from '../webhooks/api-schemas.ts';
import { CreateQuoteBody, type CreateQuoteInput, Quote, QuoteIdParams } from './quote-schemas.ts';
import * as quotes from './quotes.ts';

const security = [{ bearer: [] }];
const QUOTES = '/api/v1/transfers/quotes';

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
}
