// Corridor rules (D16, D23, D24). Corridors are reference data shared by every organisation: clients read
// and search them, operators create and change them. Checks run in this order: each field (422 naming it),
// then min <= max (422), then the route's uniqueness (409). Suspending refuses new quotes
// (quotableCorridor: 400 CORRIDOR_UNAVAILABLE); transfers already confirmed go on.
import {
  PG_UNIQUE_VIOLATION,
  pgConstraint,
  pgErrorCode,
  type Queryable,
  withTransaction,
} from '../db/pool.ts';
import { isCountryCode } from '../platform/countries.ts';
import type { AppDeps } from '../platform/deps.ts';
import { AppError, conflict, notFound, validationFailed } from '../platform/errors.ts';
import { isPublicId, newPublicId } from '../platform/ids.ts';
import { Decimal, findCurrency, formatAmount, parseAmount } from '../platform/money.ts';
import { type Page, toPage, toSearchQuery } from '../platform/search.ts';
import { toIso } from '../platform/time.ts';
import * as repo from './repository.ts';
import type {
  CorridorFilters,
  CorridorSearchInput,
  CorridorSortKey,
  CorridorStatus,
  CorridorView,
  CreateCorridorInput,
  PayoutMethod,
  UpdateCorridorInput,
} from './schemas.ts';

export const CORRIDOR_ID_PREFIX = 'cor';

/** Percents show at least 2 decimals ("0.50", "1.00") and every decimal they were given ("0.355"). */
function formatPercent(value: string): string {
  const percent = new Decimal(value);
  return percent.toFixed(Math.max(2, percent.decimalPlaces()));
}

export function corridorView(row: repo.CorridorRow): CorridorView {
  const source = row.source_currency;
  return {
    id: row.id,
    source_currency: source,
    destination_country: row.destination_country,
    destination_currency: row.destination_currency,
    payout_method: row.payout_method,
    min_amount: formatAmount(row.min_amount, source),
    max_amount: formatAmount(row.max_amount, source),
    fee_fixed: formatAmount(row.fee_fixed, source),
    fee_percent: formatPercent(row.fee_percent),
    fx_markup_percent: formatPercent(row.fx_markup_percent),
    estimated_delivery_seconds: row.estimated_delivery_seconds,
    status: row.status,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/** A corridor as quotes compute with it (D20): its terms as decimals, and its view. */
export interface CorridorTerms {
  id: string;
  source_currency: string;
  destination_country: string;
  destination_currency: string;
  payout_method: PayoutMethod;
  min_amount: Decimal;
  max_amount: Decimal;
  fee_fixed: Decimal;
  fee_percent: Decimal;
  fx_markup_percent: Decimal;
  estimated_delivery_seconds: number;
  status: CorridorStatus;
  view: CorridorView;
}

function corridorTerms(row: repo.CorridorRow): CorridorTerms {
  return {
    id: row.id,
    source_currency: row.source_currency,
    destination_country: row.destination_country,
    destination_currency: row.destination_currency,
    payout_method: row.payout_method,
    min_amount: new Decimal(row.min_amount),
    max_amount: new Decimal(row.max_amount),
    fee_fixed: new Decimal(row.fee_fixed),
    fee_percent: new Decimal(row.fee_percent),
    fx_markup_percent: new Decimal(row.fx_markup_percent),
    estimated_delivery_seconds: row.estimated_delivery_seconds,
    status: row.status,
    view: corridorView(row),
  };
}

/** 404 for a corridor id in the path, or naming `field` for one in a request body. */
const corridorNotFound = (field?: string): AppError =>
  field === undefined
    ? notFound('No corridor matches the id')
    : new AppError('NOT_FOUND', `No corridor matches ${field}`, { field });

async function findOrThrow(db: Queryable, id: string, field?: string): Promise<repo.CorridorRow> {
  if (!isPublicId(CORRIDOR_ID_PREFIX, id)) throw corridorNotFound(field);
  const row = await repo.findCorridor(db, id);
  if (!row) throw corridorNotFound(field);
  return row;
}

export async function getCorridor(deps: AppDeps, id: string): Promise<CorridorView> {
  return corridorView(await findOrThrow(deps.pool, id));
}

/**
 * The corridor a new quote may use (D16, D20): 404 NOT_FOUND naming corridor_id when no corridor has the
 * id, 400 CORRIDOR_UNAVAILABLE when it is suspended. Corridors are the same for every organisation.
 */
export async function quotableCorridor(db: Queryable, corridorId: string): Promise<CorridorTerms> {
  const row = await findOrThrow(db, corridorId, 'corridor_id');
  if (row.status !== 'active') {
    throw new AppError(
      'CORRIDOR_UNAVAILABLE',
      `Corridor ${row.id} (${row.source_currency} to ${row.destination_currency}, ${row.destination_country}) ` +
        'is suspended and gives no new quotes',
    );
  }
  return corridorTerms(row);
}

function checkCurrency(value: string, field: string): string {
  if (!findCurrency(value)) {
    throw validationFailed(
      field,
      `${field} must be an upper-case ISO 4217 code or USDC, USDT, BTC; ${JSON.stringify(value)} is not a known currency`,
    );
  }
  return value;
}

function checkCountry(value: string, field: string): string {
  if (!isCountryCode(value)) {
    throw validationFailed(
      field,
      `${field} must be an upper-case ISO 3166-1 alpha-2 country code; ${JSON.stringify(value)} is not one`,
    );
  }
  return value;
}

/**
 * A percent (D16): a decimal string from 0 to below 100 with at most 4 decimals, no sign or exponent. A fee
 * or markup of 100 % would leave nothing to pay out.
 */
const PERCENT = /^(0|[1-9]\d?)(\.\d{1,4})?$/;

function checkPercent(value: string, field: string): string {
  if (!PERCENT.test(value)) {
    throw validationFailed(
      field,
      `${field} must be a percent from 0 to below 100 as a decimal string with at most 4 decimals, such as "0.50"; got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** min <= max (D16); `field` is the limit the request changed. */
function checkLimits(min: Decimal, max: Decimal, field: 'min_amount' | 'max_amount', currency: string): void {
  if (min.gt(max)) {
    throw validationFailed(
      field,
      `min_amount (${formatAmount(min, currency)}) must not exceed max_amount (${formatAmount(max, currency)})`,
    );
  }
}

const duplicateRoute = (): AppError =>
  conflict(
    'A corridor with this source_currency, destination_country, destination_currency and payout_method exists',
  );

function mapStorageError(error: unknown): unknown {
  if (pgErrorCode(error) === PG_UNIQUE_VIOLATION && pgConstraint(error) === repo.ROUTE_UNIQUE_CONSTRAINT) {
    return duplicateRoute();
  }
  return error;
}

/** Checks a create body (D16) into the row to insert. */
export function checkNewCorridor(input: CreateCorridorInput, id: string): repo.NewCorridor {
  const source = checkCurrency(input.source_currency, 'source_currency');
  const country = checkCountry(input.destination_country, 'destination_country');
  const destination = checkCurrency(input.destination_currency, 'destination_currency');
  const min = parseAmount(input.min_amount, source, 'min_amount');
  const max = parseAmount(input.max_amount, source, 'max_amount');
  parseAmount(input.fee_fixed, source, 'fee_fixed', { allowZero: true });
  checkPercent(input.fee_percent, 'fee_percent');
  checkPercent(input.fx_markup_percent, 'fx_markup_percent');
  checkLimits(min, max, 'min_amount', source);
  return {
    id,
    source_currency: source,
    destination_country: country,
    destination_currency: destination,
    payout_method: input.payout_method,
    min_amount: input.min_amount,
    max_amount: input.max_amount,
    fee_fixed: input.fee_fixed,
    fee_percent: input.fee_percent,
    fx_markup_percent: input.fx_markup_percent,
    estimated_delivery_seconds: input.estimated_delivery_seconds,
    status: input.status ?? 'active',
  };
}

export async function createCorridor(deps: AppDeps, input: CreateCorridorInput): Promise<CorridorView> {
  const row = checkNewCorridor(input, newPublicId(CORRIDOR_ID_PREFIX));
  const created = await repo.insertCorridor(deps.pool, row).catch((error: unknown) => {
    throw mapStorageError(error);
  });
  return corridorView(created);
}

/**
 * Changes a corridor's limits, fees, markup, delivery estimate or status (D16). The amounts are checked
 * against the corridor's source currency, and min <= max against the values after the change. A request
 * that changes nothing answers the corridor as it is.
 */
export async function updateCorridor(
  deps: AppDeps,
  id: string,
  input: UpdateCorridorInput,
): Promise<CorridorView> {
  if (!isPublicId(CORRIDOR_ID_PREFIX, id)) throw corridorNotFound();
  const row = await withTransaction(deps.pool, async (tx) => {
    const current = await repo.findCorridor(tx, id, { forUpdate: true });
    if (!current) throw corridorNotFound();
    const source = current.source_currency;
    const changes: repo.CorridorChanges = {};
    if (input.min_amount !== undefined) {
      parseAmount(input.min_amount, source, 'min_amount');
      changes.min_amount = input.min_amount;
    }
    if (input.max_amount !== undefined) {
      parseAmount(input.max_amount, source, 'max_amount');
      changes.max_amount = input.max_amount;
    }
    if (input.fee_fixed !== undefined) {
      parseAmount(input.fee_fixed, source, 'fee_fixed', { allowZero: true });
      changes.fee_fixed = input.fee_fixed;
    }
    if (input.fee_percent !== undefined) changes.fee_percent = checkPercent(input.fee_percent, 'fee_percent');
    if (input.fx_markup_percent !== undefined) {
      changes.fx_markup_percent = checkPercent(input.fx_markup_percent, 'fx_markup_percent');
    }
    if (input.estimated_delivery_seconds !== undefined) {
      changes.estimated_delivery_seconds = input.estimated_delivery_seconds;
    }
    if (input.status !== undefined) changes.status = input.status;
    checkLimits(
      new Decimal(changes.min_amount ?? current.min_amount),
      new Decimal(changes.max_amount ?? current.max_amount),
      changes.min_amount !== undefined ? 'min_amount' : 'max_amount',
      source,
    );
    if (Object.keys(changes).length === 0) return current;
    return repo.updateCorridor(tx, id, changes);
  });
  return corridorView(row);
}

/** `search` (D16) matches the codes: every word must equal the source or destination currency or country. */
function searchCodes(search: string): string[] {
  return [
    ...new Set(
      search
        .toUpperCase()
        .split(/[^A-Z0-9]+/)
        .filter(Boolean),
    ),
  ].slice(0, 8);
}

export async function searchCorridors(
  deps: AppDeps,
  body: CorridorSearchInput | undefined,
): Promise<Page<CorridorView>> {
  const query = toSearchQuery<CorridorFilters, CorridorSortKey>(body);
  const filters = query.filters;
  const codes = query.search !== undefined ? searchCodes(query.search) : [];
  const { rows, total } = await repo.searchCorridors(deps.pool, {
    ...(filters.source_currency ? { sourceCurrencies: filters.source_currency } : {}),
    ...(filters.destination_country ? { destinationCountries: filters.destination_country } : {}),
    ...(filters.destination_currency ? { destinationCurrencies: filters.destination_currency } : {}),
    ...(filters.payout_method ? { payoutMethods: filters.payout_method } : {}),
    ...(filters.status ? { statuses: filters.status } : {}),
    ...(codes.length > 0 ? { codes } : {}),
    sortBy: query.sortBy,
    sortDirection: query.sortDirection,
    limit: query.pageSize,
    offset: query.offset,
  });
  return toPage(query, rows.map(corridorView), total);
}

/** Currencies in use (D15): the source and destination currencies of active corridors. */
export const activeCorridorCurrencies = (db: Queryable): Promise<string[]> => repo.activeCurrencies(db);

/** The destination currencies and payout methods of the active corridors to `country` (D19). */
export const activeRoutesTo = (
  db: Queryable,
  country: string,
): Promise<{ destination_currency: string; payout_method: PayoutMethod }[]> =>
  repo.activeRoutesTo(db, country);

/** Sandbox corridors (D24), with fixed ids so that documentation and tests can name them. */
export interface SandboxCorridor {
  id: string;
  source_currency: string;
  destination_country: string;
  destination_currency: string;
  payout_method: PayoutMethod;
  fee_fixed: string;
  fee_percent: string;
  fx_markup_percent: string;
  min_amount: string;
  max_amount: string;
  estimated_delivery_seconds: number;
}

const HOUR = 3600;
const sandboxId = (n: number): string => `cor_0000SANDBX${String(n).padStart(16, '0')}`;

const fiat = (
  n: number,
  source: string,
  country: string,
  destination: string,
  fee: string,
  markup: string,
  seconds: number,
  method: PayoutMethod = 'bank_account',
): SandboxCorridor => ({
  id: sandboxId(n),
  source_currency: source,
  destination_country: country,
  destination_currency: destination,
  payout_method: method,
  fee_fixed: fee,
  fee_percent: '0.50',
  fx_markup_percent: markup,
  min_amount: source === 'USDC' || source === 'USDT' ? '1.000000' : '1.00',
  max_amount: source === 'USDC' || source === 'USDT' ? '50000.000000' : '50000.00',
  estimated_delivery_seconds: seconds,
});

/**
 * D24's corridors. Fees and markups rise with the cost of the route; the delivery estimate is the rail's
 * usual time (SEPA and US ACH a business day, UK Faster Payments, India IMPS, Mexico SPEI, Nigeria NIP,
 * Philippines InstaPay and Kenya M-Pesa within minutes to an hour).
 */
export const SANDBOX_CORRIDORS: readonly SandboxCorridor[] = [
  fiat(1, 'USD', 'DE', 'EUR', '1.00', '0.35', 24 * HOUR),
  fiat(2, 'USD', 'FR', 'EUR', '1.00', '0.35', 24 * HOUR),
  fiat(3, 'USD', 'ES', 'EUR', '1.00', '0.35', 24 * HOUR),
  fiat(4, 'USD', 'GB', 'GBP', '1.00', '0.35', 2 * HOUR),
  fiat(5, 'USD', 'IN', 'INR', '2.00', '0.50', 1 * HOUR),
  fiat(6, 'USD', 'MX', 'MXN', '2.00', '0.50', 1 * HOUR),
  fiat(7, 'USD', 'NG', 'NGN', '3.00', '1.00', 2 * HOUR),
  fiat(8, 'USD', 'PH', 'PHP', '2.00', '0.75', 1 * HOUR),
  fiat(9, 'USD', 'KE', 'KES', '1.50', '0.75', HOUR / 4, 'mobile_wallet'),
  fiat(10, 'EUR', 'US', 'USD', '3.00', '0.35', 24 * HOUR),
  fiat(11, 'GBP', 'DE', 'EUR', '1.00', '0.35', 2 * HOUR),
  fiat(12, 'USDC', 'MX', 'MXN', '1.000000', '0.50', 1 * HOUR),
  fiat(13, 'USDT', 'PH', 'PHP', '1.000000', '0.75', 1 * HOUR),
];

/** Idempotent (D24): a corridor whose id or route exists is left as it is, operator changes included. */
export async function seedSandboxCorridors(deps: AppDeps): Promise<void> {
  await withTransaction(deps.pool, async (tx) => {
    for (const corridor of SANDBOX_CORRIDORS) {
      await repo.insertCorridorIfAbsent(tx, { ...corridor, status: 'active' });
    }
  });
}
