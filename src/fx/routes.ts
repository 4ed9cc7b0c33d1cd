// HTTP of the currencies and FX rates endpoints (D15) and the operator's rate posting (D23): each route
// maps to one service call.
import { operatorTarget, registerOperatorRoutes } from '../admin/operator-log.ts';
import type { App, AppDeps } from '../platform/deps.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { ErrorBody, errorResponses } from '../webhooks/api-schemas.ts';
import { FX_RATES_ADMIN_PATH } from './cli.ts';
import { CurrencyList, PostRatesBody, RateList, RateSetResult, RatesQuery } from './schemas.ts';
import * as service from './service.ts';

const security = [{ bearer: [] }];
const read = { scope: PAYMENT_SCOPES.referenceRead };

export function registerFxRoutes(app: App, deps: AppDeps): void {
  app.get(
    '/api/v1/fx/currencies',
    {
      config: read,
      schema: {
        tags: ['fx'],
        operationId: 'listCurrencies',
        summary: 'List the currencies in use',
        description:
          'The currencies of at least one active corridor or of a balance of the organisation, sorted by ' +
          'code, with their decimals: every amount in a currency has exactly that many decimals.',
        security,
        response: { 200: CurrencyList, ...errorResponses() },
      },
    },
    async (request) => service.listCurrencies(deps, request.principal!.organisationId),
  );

  app.get(
    '/api/v1/fx/rates',
    {
      config: read,
      schema: {
        tags: ['fx'],
        operationId: 'listFxRates',
        summary: 'Read indicative mid-market rates',
        description:
          'Indicative mid-market rates, not tradable: a quote (POST /api/v1/transfers/quotes) gives the rate ' +
          'a transfer gets. With destination_currency: that pair (404 when no rate exists). Without it: ' +
          'every currency with a rate from source_currency, sorted by code. A cross rate comes from the ' +
          "freshest rate set holding both currencies (each provider's latest import), rounded half-even to 10 " +
          'significant digits. An ' +
          'unknown or missing source_currency, an unknown destination_currency or any other query ' +
          'parameter is 422 naming it.',
        security,
        querystring: RatesQuery,
        response: { 200: RateList, ...errorResponses(404, 422) },
      },
    },
    async (request) => service.getRates(deps, request.query),
  );
}

export function registerFxAdminRoutes(admin: App, deps: AppDeps): void {
  registerOperatorRoutes(admin, (scope) => {
    scope.post(
      FX_RATES_ADMIN_PATH.replace('/admin/v1', ''),
      {
        config: { operatorAction: 'fx_rates.post' },
        schema: {
          tags: ['operator'],
          operationId: 'adminPostFxRates',
          summary: 'Post a set of FX rates against one base currency',
          description:
            'One import: rates of each currency per one unit of `base`, from `provider`, observed at `as_of`. ' +
            'Answers 201 with the stored set; posting the same provider, base and as_of again replaces that ' +
            "set's rates (200, `replaced` true). `payment-service admin import-fx-rates FILE` posts an ECB " +
            'reference rates file here.',
          body: PostRatesBody,
          response: { 200: RateSetResult, 201: RateSetResult, 401: ErrorBody, 422: ErrorBody },
        },
      },
      async (request, reply) => {
        operatorTarget(request, {
          provider: request.body.provider,
          base: request.body.base,
          as_of: request.body.as_of,
        });
        const saved = await service.postRates(deps, request.body);
        operatorTarget(request, { rates: Object.keys(saved.rates).length, replaced: saved.replaced });
        return reply.code(saved.replaced ? 200 : 201).send(saved);
      },
    );
  });
}
