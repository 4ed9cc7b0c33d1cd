// The one shape every area of the API has (webhooks, fx, corridors, balances, ...). An area is a folder
// that exports one `Area`; `src/areas.ts` lists them, and the app, the operator API and CLI, the scope
// list, the event catalogue, sandbox seeding and the worker's timers all read that list. An area's SQL
// migrations live in its own `migrations/` folder and are found by the migration runner (src/db/migrate.ts).
import type { PoolClient, Queryable } from '../db/pool.ts';
import type { PayoutRow } from '../payments/repository.ts';
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
  /** The name that was screened. */
  name: string;
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
  /**
   * Names of the platform ledger accounts this area posts to (D21). Each is created for every currency at
   * start-up (`ensurePlatformAccounts`), so that no posting creates one: a transaction that creates an
   * account holds its new row until it commits, and one that also debits a balance could deadlock with
   * another that holds that balance and posts to the same new account.
   */
  platformAccounts?(config: AppDeps['config']): readonly string[];
  /** Durable timer handlers by job kind (D21); kinds are `<area>.<action>`. */
  jobs?: Readonly<Record<string, JobHandler>>;
  /** Operator CLI commands. */
  cliCommands?: readonly CliCommand[];
  /**
   * Currency codes this area holds for the organisation (D15): corridors answer the source and
   * destination currencies of active corridors, balances the currencies the organisation has touched.
   * `GET /api/v1/fx/currencies` lists the union over every area, so the fx area reads no other area's
   * tables. Codes are upper-case and known to `findCurrency`; duplicates are allowed.
   */
  currenciesInUse?(db: Queryable, organisationId: string): Promise<string[]>;
  /**
   * Where a payout to one of this area's resources goes (the beneficiaries area): undefined when the id is
   * not one of the organisation's. Payments read it without importing the area. `deps` gives the key that
   * opens the account sealed at rest (D13, D19). A deleted beneficiary's is answered too: a payout made
   * before the delete is still paid (D19, D20).
   */
  payoutDestination?(
    db: Queryable,
    organisationId: string,
    beneficiaryId: string,
    deps: AppDeps,
  ): Promise<PayoutDestination | undefined>;
  /**
   * A deposit address of the organisation's own for a crypto deposit (the crypto area, D22), on `network`
   * or, without one, on the asset's default network; answers the address and the network it is on. Throws
   * when the network or asset is not offered.
   */
  allocateDepositAddress?(
    tx: PoolClient,
    deps: AppDeps,
    organisationId: string,
    network: string | undefined,
    asset: string,
  ): Promise<{ address: string; network: string }>;
  /**
   * The transfer that shows this crypto address in its deposit instructions and still awaits its deposit
   * (the transfers area), when there is one: a further transaction there is a deposit of that transfer
   * (D20, D22). `expectedAmount` is what the instructions ask for.
   */
  depositAwaitedAt?(
    db: Queryable,
    at: { organisationId: string; network: string; address: string; currency: string },
  ): Promise<{ transferId: string; expectedAmount: string | null } | undefined>;
  /**
   * A sanctions review confirmed `name`, screened for a payment to the beneficiary (a transfer's re-screening
   * at confirm, D20), as a match: the area that holds the beneficiary bars it from every payout if that is
   * still its name (the beneficiaries area), in the review's transaction.
   */
  blockPayee?(
    tx: PoolClient,
    payee: { organisationId: string; beneficiaryId: string; name: string },
    deps: AppDeps,
  ): Promise<void>;
  /** Reacts to a payout's move (a transfer's payout leg, D20), in the moving transaction. */
  onPayoutMoved?(tx: PoolClient, payout: MovedPayout, deps: AppDeps): Promise<void>;
  /** Reacts to a deposit that was credited, in the crediting transaction (transfers funded by it, D20). */
  onDepositReceived?(tx: PoolClient, deposit: ReceivedDeposit, deps: AppDeps): Promise<void>;
  /**
   * Called for every area inside the transaction of a screening review (D18), after `screening.resolved`
   * is published: an area moves what waits on the screening (a beneficiary in review, a transfer held).
   * Failing rolls the review back.
   */
  onScreeningReviewed?(tx: PoolClient, screening: ReviewedScreening, deps: AppDeps): Promise<void>;
  /** Backlogs an operator alerts on, read from storage when a worker's /metrics is scraped. */
  gauges?: readonly GaugeGroup[];
  /** Columns this area seals with SECRETS_ENCRYPTION_KEY (D13): a key rotation re-seals them. */
  sealedColumns?: readonly SealedColumn[];
}

/** A column of values sealed by SecretBox.encrypt, and the primary key of its table. */
export interface SealedColumn {
  table: string;
  /** The primary key's columns, in the order rows are visited. */
  key: readonly string[];
  column: string;
  /**
   * For a column whose readers also accept a value in clear: whether a stored value is one. The re-seal
   * seals such a value instead of reporting it unreadable. Without it, every value must be sealed.
   */
  inClear?: (stored: string) => boolean;
}

/**
 * Gauges read together from storage on a scrape (one query for a count and the age of its oldest, say).
 * Every reading names all its labels and has a value for every gauge of the group; a group answers each
 * series it knows of, zeros included, so that an alert on a backlog never sees its series vanish.
 */
export interface GaugeGroup {
  /** Help text by gauge name. */
  gauges: Readonly<Record<string, string>>;
  labelNames: readonly string[];
  read(db: Queryable): Promise<GaugeReading[]>;
}

export interface GaugeReading {
  labels: Record<string, string>;
  values: Record<string, number>;
}

export interface PayoutDestination {
  beneficiaryId: string;
  /** Only an `active` beneficiary takes a new payout (D19); one deleted since still takes those made before. */
  status: string;
  /**
   * A sanctions review confirmed the beneficiary's name as a match (D18): it is never paid, whatever its
   * status (`blocked`, or `deleted` since).
   */
  blocked: boolean;
  /**
   * The beneficiary's current name waits for its sanctions review (`in_review`, or `deleted` while it
   * waited): its payouts are held until the review.
   */
  reviewPending: boolean;
  currency: string;
  country: string;
  payoutMethod: 'bank_account' | 'mobile_wallet';
  /** Who is paid: a transfer screens them again at confirm (D20). */
  name: string;
  entityType: 'individual' | 'business';
  /** An individual's date of birth, or null: screened with the name, as the beneficiary was (D18). */
  dateOfBirth: string | null;
  /** The account identifier the rail needs (IBAN, account number, CLABE, mobile number). */
  accountIdentifier: string;
  /** Where the beneficiary lives, as `GET /api/v1/beneficiaries/{id}` answers it. */
  address: { line1: string; city: string; postal_code: string | null; country: string };
  /**
   * The whole account, opened, exactly as `GET /api/v1/beneficiaries/{id}` answers it (`iban` and `bic`,
   * `account_number`, `routing_number` and `account_type`, ...): what an operator pays by hand on the
   * manual rail (D21), where the identifier alone is not enough.
   */
  account: Readonly<Record<string, string>>;
  /** The bank the directory knows for the account, or null, as `GET /api/v1/beneficiaries/{id}` answers it. */
  bank: { id: string; name: string; bic: string | null } | null;
}

export interface MovedPayout {
  id: string;
  organisationId: string;
  status: string;
  previousStatus: string;
  transferId: string | null;
  failureReason: string | null;
  /** The payout as the moving transaction wrote it: an area that shows it reads it no more. */
  row: PayoutRow;
}

export interface ReceivedDeposit {
  id: string;
  organisationId: string;
  currency: string;
  amount: string;
  transferId: string | null;
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
