// Balances (D21): the double-entry ledger every movement of money goes through, the organisation's
// balances and balance transactions, and the sandbox's test money (D24).
import type { Area } from '../platform/area.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { balanceCurrencies } from './repository.ts';
import { registerBalanceRoutes, registerBalanceSandboxRoutes } from './routes.ts';
import { SANDBOX_FUNDING, seedOpeningBalances } from './service.ts';

export const balancesArea: Area = {
  name: 'balances',
  scopes: [PAYMENT_SCOPES.paymentsRead, PAYMENT_SCOPES.paymentsWrite],
  routes: registerBalanceRoutes,
  sandboxRoutes: registerBalanceSandboxRoutes,
  seedOrganisation: (tx, organisationId) => seedOpeningBalances(tx, organisationId),
  platformAccounts: () => [SANDBOX_FUNDING],
  currenciesInUse: balanceCurrencies,
};
