// The corridors area (D16, D23, D24): the ways money can be sent, read by clients, managed by operators,
// seeded in the sandbox; `quotableCorridor` for quotes and the currencies in use for GET /fx/currencies.
import type { Area } from '../platform/area.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { registerCorridorAdminRoutes, registerCorridorRoutes } from './routes.ts';
import { activeCorridorCurrencies, seedSandboxCorridors } from './service.ts';

export const corridorsArea: Area = {
  name: 'corridors',
  scopes: [PAYMENT_SCOPES.referenceRead],
  routes: registerCorridorRoutes,
  adminRoutes: registerCorridorAdminRoutes,
  seedSandbox: seedSandboxCorridors,
  // Corridors are the same for every organisation.
  currenciesInUse: (db) => activeCorridorCurrencies(db),
};
