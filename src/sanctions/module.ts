// The sanctions area (D18, D23, D24): list imports, the matching engine, screenings and their review.
// Other areas screen their resources with `screen()` (service.ts) in their own transaction, and react to
// a review through their Area's onScreeningReviewed.
import type { Area, EventType } from '../platform/area.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { importSanctionsCommand } from './cli.ts';
import {
  registerSanctionsAdminRoutes,
  registerSanctionsRoutes,
  registerSanctionsSandboxRoutes,
} from './routes.ts';
import { seedSandboxList } from './sandbox.ts';
import { reviewGauges } from './service.ts';

export const SANCTIONS_EVENT_TYPES: readonly EventType[] = [
  { code: 'screening.completed', description: 'A sanctions screening completed.' },
  { code: 'screening.resolved', description: 'A sanctions screening hit was resolved by review.' },
];

export const sanctionsArea: Area = {
  name: 'sanctions',
  scopes: [PAYMENT_SCOPES.sanctionsRead, PAYMENT_SCOPES.sanctionsWrite],
  eventTypes: SANCTIONS_EVENT_TYPES,
  routes: registerSanctionsRoutes,
  adminRoutes: registerSanctionsAdminRoutes,
  sandboxRoutes: registerSanctionsSandboxRoutes,
  seedSandbox: seedSandboxList,
  cliCommands: [importSanctionsCommand],
  gauges: [reviewGauges],
};
