// The FX area (D15, D23, D24): currencies in use, indicative mid-market rates, the operator's rate imports
// (ECB XML through the CLI, or any provider's rates posted as JSON), the sandbox's fixed rates, and
// `quotableRate` for quotes (src/fx/service.ts).
import type { Area, GaugeGroup } from '../platform/area.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { importFxRatesCommand } from './cli.ts';
import { currentSetAges } from './repository.ts';
import { registerFxAdminRoutes, registerFxRoutes } from './routes.ts';
import { seedSandboxRates } from './service.ts';

/**
 * How old each provider's current rates are, for a worker's /metrics: outside the sandbox a quote refuses a
 * rate older than FX_RATE_MAX_AGE_HOURS, so an import that stops shows here before quotes fail.
 */
const rateGauges: GaugeGroup = {
  gauges: {
    fx_rates_age_seconds:
      "Age of each provider's current rate set per base currency (now - as_of); quotes refuse rates older than FX_RATE_MAX_AGE_HOURS",
  },
  labelNames: ['provider', 'base'],
  async read(db) {
    return (await currentSetAges(db)).map((set) => ({
      labels: { provider: set.provider, base: set.base },
      values: { fx_rates_age_seconds: set.ageSeconds },
    }));
  },
};

export const fxArea: Area = {
  name: 'fx',
  scopes: [PAYMENT_SCOPES.referenceRead],
  routes: registerFxRoutes,
  adminRoutes: registerFxAdminRoutes,
  seedSandbox: seedSandboxRates,
  cliCommands: [importFxRatesCommand],
  gauges: [rateGauges],
};
