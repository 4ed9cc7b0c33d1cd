// The one shape every area of the API has (webhooks, fx, corridors, balances, ...). An area is a folder
// that exports one `Area`; `src/areas.ts` lists them, and the app, the operator API and CLI, the scope
// list, the event catalogue, sandbox seeding and the worker's timers all read that list. An area's SQL
// migrations live in its own `migrations/` folder and are found by the migration runner (src/db/migrate.ts).
import type { PoolClient } from '../db/pool.ts';
import type { App, AppDeps } from './deps.ts';

/** One code of the event catalogue (D8). */
export interface EventType {
  code: string;
  description: string;
}

/** A durable timer handler (D21): runs in the worker, inside the transaction that completes the job. */
export type JobHandler = (tx: PoolClient, payload: Record<string, unknown>, deps: AppDeps) => Promise<void>;

/** One request the operator CLI sends to the operator API. */
export interface CliRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
  /** Default application/json; a file import may send its file as it is (text/csv). */
  contentType?: string;
}

/** `payment-service admin <name> ...`: turns the command line into operator API requests. */
export interface CliCommand {
  name: string;
  usage: string;
  /** Options the command reads (`--format`), as node:util parseArgs takes them. */
  options?: Record<string, { type: 'string' | 'boolean' }>;
  requests(
    positionals: string[],
    values: Record<string, string | boolean | undefined>,
  ): Promise<CliRequest[]>;
}

/**
 * A screening the operator has just reviewed (D18), as every area's `onScreeningReviewed` receives it: the
 * screening as its GET returns it, plus the organisation it belongs to.
 */
export interface ReviewedScreening {
  id: string;
  organisation_id: string;
  match_status: 'confirmed_match' | 'cleared';
  /** The resource that asked for the screening (`beneficiary`, `transfer`); null for a direct screening. */
  source_object_type: string | null;
  source_object_id: string | null;
  review_note: string | null;
  reviewed_at: string | null;
}

export interface Area {
  /** Short name: logs, OpenAPI tags, docs. */
  name: string;
  /** Scopes its routes require (D6, D14). New clients and the sandbox client get every scope. */
  scopes?: readonly string[];
  /** Event types it publishes (D8). */
  eventTypes?: readonly EventType[];
  /** Public routes under /api/v1 (each declares its scope). */
  routes?(app: App, deps: AppDeps): void;
  /** Operator routes, registered under /admin/v1 behind ADMIN_API_KEY (D7, D23). */
  adminRoutes?(admin: App, deps: AppDeps): void;
  /** Sandbox-only routes (D11, D24): absent (404) in production. */
  sandboxRoutes?(app: App, deps: AppDeps): void;
  /** Sandbox reference data, run on every sandbox start: idempotent (D1, D24). */
  seedSandbox?(deps: AppDeps): Promise<void>;
  /** Sandbox data every organisation gets when it is created (D24), in the creating transaction. */
  seedOrganisation?(tx: PoolClient, organisationId: string, deps: AppDeps): Promise<void>;
  /** Durable timer handlers by job kind (D21); kinds are `<area>.<action>`. */
  jobs?: Readonly<Record<string, JobHandler>>;
  /** Operator CLI commands. */
  cliCommands?: readonly CliCommand[];
  /**
   * Called for every area inside the transaction of a screening review (D18), after `screening.resolved`
   * is published: an area moves what waits on the screening (a beneficiary in review, a transfer held).
   * Failing rolls the review back.
   */
  onScreeningReviewed?(tx: PoolClient, screening: ReviewedScreening, deps: AppDeps): Promise<void>;
}

/** What the areas declare, gathered once: scopes and the event catalogue (D8). */
export interface Catalogue {
  readonly scopes: readonly string[];
  /** Sorted by code (D8). */
  readonly eventTypes: readonly EventType[];
  /** True for a code a subscription may hold and the sandbox may publish (never `webhook.ping`). */
  isPublishedEventType(code: string): boolean;
  readonly jobs: Readonly<Record<string, JobHandler>>;
}

export function buildCatalogue(areas: readonly Area[]): Catalogue {
  // Areas may share a scope (reference:read); each is listed once.
  const scopes = [...new Set(areas.flatMap((area) => area.scopes ?? []))];
  const eventTypes = [...areas.flatMap((area) => area.eventTypes ?? [])].sort((a, b) =>
    a.code < b.code ? -1 : a.code > b.code ? 1 : 0,
  );
  unique(
    eventTypes.map((type) => type.code),
    'event type',
  );
  const published = new Set(eventTypes.map((type) => type.code));
  const jobs: Record<string, JobHandler> = {};
  for (const area of areas) {
    for (const [kind, handler] of Object.entries(area.jobs ?? {})) {
      if (jobs[kind]) throw new Error(`job kind ${kind} is declared by two areas`);
      jobs[kind] = handler;
    }
  }
  return {
    scopes,
    eventTypes,
    isPublishedEventType: (code) => published.has(code),
    jobs,
  };
}

function unique(values: string[], what: string): string[] {
  const seen = new Set<string>();
  for (const value of values) {
    if (seen.has(value)) throw new Error(`${what} ${value} is declared twice`);
    seen.add(value);
  }
  return values;
}
