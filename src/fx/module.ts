// The FX area (D15, D23, D24): currencies in use, indicative mid-market rates, the operator's rate imports
// (ECB XML through the CLI, or any provider's rates posted as JSON), the sandbox's fixed rates, and
// `quotableRate` for quotes (src/fx/service.ts).
import type { Area } from '../platform/area.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { importFxRatesCommand } from './cli.ts';
import { registerFxAdminRoutes, registerFxRoutes } from './routes.ts';
import { seedSandboxRates } from './service.ts';

export const fxArea: Area = {
  name: 'fx',
  scopes: [PAYMENT_SCOPES.referenceRead],
  routes: registerFxRoutes,
  adminRoutes: registerFxAdminRoutes,
  seedSandbox: seedSandboxRates,
  cliCommands: [importFxRatesCommand],
};
