// The banks area (D17, D24): the bank and branch directory, its search, code validation with directory
// look-up, the operator's imports, and the sandbox's directory of real public identifiers.
import type { Area } from '../platform/area.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { registerBankAdminRoutes } from './admin-routes.ts';
import { importBanksCommand } from './cli.ts';
import { registerBankRoutes } from './routes.ts';
import { seedSandboxDirectory } from './sandbox.ts';

export const banksArea: Area = {
  name: 'banks',
  scopes: [PAYMENT_SCOPES.referenceRead],
  routes: registerBankRoutes,
  adminRoutes: registerBankAdminRoutes,
  seedSandbox: seedSandboxDirectory,
  cliCommands: [importBanksCommand],
};
