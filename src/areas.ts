// The list of areas: adding an area is one line here (and its folder). Everything that spans areas
// (routes, operator API and CLI, scopes, event catalogue, sandbox seeding, timers) reads this list;
// migrations are found in each area's `migrations/` folder by the runner.
import { balancesArea } from './balances/module.ts';
import { cryptoArea } from './crypto/module.ts';
import { buildCatalogue } from './platform/area.ts';
import type { AppDeps } from './platform/deps.ts';
import { webhooksArea } from './webhooks/module.ts';

export const AREAS = [webhooksArea, balancesArea, cryptoArea] as const;

export const CATALOGUE = buildCatalogue(AREAS);

/** AppDeps of one process: its resources plus the areas and what they declare. */
export function createAppDeps(resources: Omit<AppDeps, 'areas' | 'catalogue'>): AppDeps {
  return { ...resources, areas: AREAS, catalogue: CATALOGUE };
}
