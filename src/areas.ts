// The list of areas: adding an area is one line here (and its folder). Everything that spans areas
// (routes, operator API and CLI, scopes, event catalogue, sandbox seeding, timers) reads this list;
// migrations are found in each area's `migrations/` folder by the runner.
import { balancesArea } from './balances/module.ts';
import { banksArea } from './banks/module.ts';
import { beneficiariesArea } from './beneficiaries/module.ts';
import { corridorsArea } from './corridors/module.ts';
import { cryptoArea } from './crypto/module.ts';
import { fxArea } from './fx/module.ts';
import { paymentsArea } from './payments/module.ts';
import { buildCatalogue } from './platform/area.ts';
import type { AppDeps } from './platform/deps.ts';
import { sanctionsArea } from './sanctions/module.ts';
import { transfersArea } from './transfers/module.ts';
import { webhooksArea } from './webhooks/module.ts';

export const AREAS = [
  webhooksArea,
  fxArea,
  corridorsArea,
  banksArea,
  sanctionsArea,
  beneficiariesArea,
  balancesArea,
  paymentsArea,
  cryptoArea,
  transfersArea,
] as const;

export const CATALOGUE = buildCatalogue(AREAS);

/** AppDeps of one process: its resources plus the areas and what they declare. */
export function createAppDeps(resources: Omit<AppDeps, 'areas' | 'catalogue'>): AppDeps {
  return { ...resources, areas: AREAS, catalogue: CATALOGUE };
}
