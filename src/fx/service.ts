// Currencies and FX rates (D15). Rates are stored per import against one base currency; each provider's
// latest import per base is its current set. A pair's rate comes from the freshest current set holding
// both currencies (latest as_of, then the latest import), as rate(base->destination) / rate(base->source),
// rounded half-even to 10 significant digits (D14).
// A currency pegged by FX_PEGS takes its anchor's rates, and the two convert at 1 (`par`).
import type { Queryable } from '../db/pool.ts';
import { withTransaction } from '../db/pool.ts';
import type { AppDeps } from '../platform/deps.ts';
import { AppError, notFound, validationFailed } from '../platform/errors.ts';
import { ownEntry } from '../platform/lookup.ts';
import {
  type Currency,
  Decimal,
  findCurrency,
  formatRate,
  RATE_SIGNIFICANT_DIGITS,
  rateHalfEven,
} from '../platform/money.ts';
import { toIso } from '../platform/time.ts';
import * as repo from './repository.ts';
import type { CurrencyView, PostRatesInput, RateSetView, RateView } from './schemas.ts';

/** The provider shown for two currencies that are one by a peg (or the same currency). */
export const PAR_PROVIDER = 'par';

/** A rate as the service computes it: `rate` has at most 10 significant digits. */
export interface Rate {
  source_currency: string;
  destination_currency: string;
  rate: Decimal;
  provider: string;
  as_of: Date;
}

type Pegs = Readonly<Record<string, string>>;

const anchorOf = (pegs: Pegs, code: string): string => ownEntry(pegs, code) ?? code;

const currencyView = (currency: Currency): CurrencyView => ({
  code: currency.code,
  name: currency.name,
  decimals: currency.decimals,
  type: currency.type,
});

/** The currencies the organisation can use (D15): every area's `currenciesInUse`, sorted by code. */
export async function listCurrencies(deps: AppDeps, organisationId: string): Promise<CurrencyView[]> {
  const lists = await Promise.all(
    deps.areas.map((area) => area.currenciesInUse?.(deps.pool, organisationId) ?? Promise.resolve([])),
  );
  const codes = [...new Set(lists.flat())].sort();
  return codes.flatMap((code) => {
    const currency = findCurrency(code);
    return currency ? [currencyView(currency)] : [];
  });
}

/** A query or body currency code: known (ISO 4217 or USDC, USDT, BTC), else 422 naming the field. */
export function knownCurrency(value: string, field: string): string {
  if (!findCurrency(value)) {
    throw validationFailed(
      field,
      `${field} must be an upper-case ISO 4217 code or USDC, USDT, BTC; ${JSON.stringify(value)} is not a known currency`,
    );
  }
  return value;
}

/** The rate of one pair, or undefined when no set holds both currencies. */
export async function findRate(
  db: Queryable,
  pegs: Pegs,
  source: string,
  destination: string,
  now: Date,
): Promise<Rate | undefined> {
  const from = anchorOf(pegs, source);
  const to = anchorOf(pegs, destination);
  if (from === to) {
    return {
      source_currency: source,
      destination_currency: destination,
      rate: new Decimal(1),
      provider: PAR_PROVIDER,
      as_of: now,
    };
  }
  const row = await repo.findPairRate(db, from, to);
  if (!row) return undefined;
  return {
    source_currency: source,
    destination_currency: destination,
    rate: crossRate(row),
    provider: row.provider,
    as_of: row.as_of,
  };
}

/** rate(base->destination) / rate(base->source), rounded half-even to 10 significant digits. */
const crossRate = (row: repo.PairRow): Decimal =>
  rateHalfEven(new Decimal(row.destination_rate).dividedBy(row.source_rate));

/** Every currency with a rate from `source`, sorted by code; the source itself is not listed. */
export async function findRatesFrom(db: Queryable, pegs: Pegs, source: string, now: Date): Promise<Rate[]> {
  const from = anchorOf(pegs, source);
  const found = new Map<string, Omit<Rate, 'destination_currency'>>();
  for (const row of await repo.findRatesFrom(db, from)) {
    found.set(row.destination_currency, {
      source_currency: source,
      rate: crossRate(row),
      provider: row.provider,
      as_of: row.as_of,
    });
  }
  const par = { source_currency: source, rate: new Decimal(1), provider: PAR_PROVIDER, as_of: now };
  // A pegged currency's own stored rates are not used: it follows its anchor.
  for (const pegged of Object.keys(pegs)) found.delete(pegged);
  for (const [pegged, anchor] of Object.entries(pegs)) {
    const anchorRate = anchor === from ? par : found.get(anchor);
    if (anchorRate) found.set(pegged, anchorRate);
  }
  if (from !== source) found.set(from, par);
  found.delete(source);
  return [...found.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([code, rate]) => ({ ...rate, destination_currency: code }));
}

export const rateView = (rate: Rate): RateView => ({
  source_currency: rate.source_currency,
  destination_currency: rate.destination_currency,
  rate: formatRate(rate.rate),
  provider: rate.provider,
  as_of: toIso(rate.as_of),
});

/** GET /api/v1/fx/rates (D15): one pair (404 without a rate) or every currency with a rate. */
export async function getRates(
  deps: AppDeps,
  query: { source_currency: string; destination_currency?: string | undefined },
  now = new Date(),
): Promise<RateView[]> {
  const source = knownCurrency(query.source_currency, 'source_currency');
  const pegs = deps.config.fxPegs;
  if (query.destination_currency === undefined) {
    return (await findRatesFrom(deps.pool, pegs, source, now)).map(rateView);
  }
  const destination = knownCurrency(query.destination_currency, 'destination_currency');
  const rate = await findRate(deps.pool, pegs, source, destination, now);
  if (!rate) throw notFound(`No rate from ${source} to ${destination}`);
  return [rateView(rate)];
}

const HOUR_MS = 3_600_000;

/**
 * The rate a quote may use (D15, D20): the pair's mid rate (10 significant digits) with its provider and
 * as_of. 400 RATE_UNAVAILABLE when no set holds both currencies, or, outside the sandbox, when the rate
 * is older than FX_RATE_MAX_AGE_HOURS at `now`. A pegged pair is never stale.
 */
export async function quotableRate(
  db: Queryable,
  deps: Pick<AppDeps, 'config'>,
  source: string,
  destination: string,
  now: Date,
): Promise<Rate> {
  const rate = await findRate(db, deps.config.fxPegs, source, destination, now);
  if (!rate) {
    throw new AppError('RATE_UNAVAILABLE', `No FX rate from ${source} to ${destination} is available`);
  }
  const maxAgeHours = deps.config.fxRateMaxAgeHours;
  if (deps.config.appEnv !== 'sandbox' && now.getTime() - rate.as_of.getTime() > maxAgeHours * HOUR_MS) {
    throw new AppError(
      'RATE_UNAVAILABLE',
      `The ${source} to ${destination} rate is as of ${toIso(rate.as_of)}, older than ${maxAgeHours} hours ` +
        '(FX_RATE_MAX_AGE_HOURS); no quote can be given until fresher rates are imported',
    );
  }
  return rate;
}

/** A posted rate (D14): a positive decimal string, no sign or exponent, at most 10 significant digits. */
const RATE_TEXT = /^(0|[1-9]\d{0,17})(\.\d{1,30})?$/;

export function parseRate(value: unknown, field: string): string {
  if (typeof value !== 'string' || !RATE_TEXT.test(value)) {
    throw validationFailed(
      field,
      `${field} must be a positive decimal string such as "1.0823" (no sign, no exponent), got ${JSON.stringify(value)}`,
    );
  }
  const rate = new Decimal(value);
  if (rate.isZero()) throw validationFailed(field, `${field} must be greater than zero`);
  if (rate.precision() > RATE_SIGNIFICANT_DIGITS) {
    throw validationFailed(
      field,
      `${field} has more than ${RATE_SIGNIFICANT_DIGITS} significant digits; round it before posting`,
    );
  }
  return value;
}

/** Clocks of the operator's feed may run a little ahead; a rate from further ahead is a mistake. */
const FUTURE_TOLERANCE_MS = 5 * 60_000;

const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|([+-])(\d{2}):(\d{2}))$/;

/** A strict ISO-8601 date-time with Z or an offset: `2024-02-30T...` is refused, not rolled over. */
export function parseIsoDateTime(value: string): Date | undefined {
  const match = ISO_DATE_TIME.exec(value);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const millis = Math.floor(Number(`0${match[7] ?? ''}`) * 1000);
  const local = new Date(Date.UTC(year, month - 1, day, hour, minute, second, millis));
  if (
    local.getUTCFullYear() !== year ||
    local.getUTCMonth() !== month - 1 ||
    local.getUTCDate() !== day ||
    local.getUTCHours() !== hour ||
    local.getUTCMinutes() !== minute ||
    local.getUTCSeconds() !== second
  ) {
    return undefined;
  }
  if (match[8] === 'Z') return local;
  const offsetHours = Number(match[10]);
  const offsetMinutes = Number(match[11]);
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  const sign = match[9] === '-' ? -1 : 1;
  return new Date(local.getTime() - sign * (offsetHours * 60 + offsetMinutes) * 60_000);
}

function parseAsOf(value: string, now: Date): Date {
  const asOf = parseIsoDateTime(value);
  if (!asOf) {
    throw validationFailed(
      'as_of',
      'as_of must be an ISO-8601 date-time with seconds and Z or an offset, e.g. 2024-06-28T12:15:00Z',
    );
  }
  if (asOf.getTime() > now.getTime() + FUTURE_TOLERANCE_MS) {
    throw validationFailed('as_of', `as_of ${value} is in the future`);
  }
  return asOf;
}

export interface CheckedRateSet {
  provider: string;
  base: string;
  asOf: Date;
  rates: Array<[string, string]>;
}

/** The operator's rate set, checked (D15, D23): 422 naming `base`, `as_of`, `rates` or `rates.XYZ`. */
export function checkRateSet(
  deps: Pick<AppDeps, 'config'>,
  input: PostRatesInput,
  now: Date,
): CheckedRateSet {
  const base = knownCurrency(input.base, 'base');
  const pegs = deps.config.fxPegs;
  const anchor = ownEntry(pegs, base);
  if (anchor !== undefined) {
    throw validationFailed(
      'base',
      `${base} is pegged to ${anchor} (FX_PEGS) and takes its rates; post the rates against ${anchor}`,
    );
  }
  const asOf = parseAsOf(input.as_of, now);
  const entries = Object.entries(input.rates);
  if (entries.length === 0) throw validationFailed('rates', 'rates must hold at least one currency');
  const rates = entries.map(([code, value]): [string, string] => {
    const field = `rates.${code}`;
    if (!findCurrency(code)) throw validationFailed(field, `${field}: ${code} is not a known currency`);
    if (code === base) {
      throw validationFailed(field, `${field}: the base currency is 1 by definition; leave it out`);
    }
    // A pegged currency takes its anchor's rate (D15): a rate posted for it would be stored and never used.
    const pegged = ownEntry(pegs, code);
    if (pegged !== undefined) {
      throw validationFailed(
        field,
        `${field}: ${code} is pegged to ${pegged} (FX_PEGS) and takes its rates; leave it out`,
      );
    }
    return [code, parseRate(value, field)];
  });
  return { provider: input.provider, base, asOf, rates };
}

/**
 * Records an operator's rate set (D15): a new set, or the rates of the provider's set of the same base and
 * as_of replaced, in one transaction. The set supersedes the provider's earlier sets for the base: a
 * currency the new set leaves out is no longer read from that provider.
 */
export async function postRates(
  deps: AppDeps,
  input: PostRatesInput,
  now = new Date(),
): Promise<RateSetView> {
  const checked = checkRateSet(deps, input, now);
  const saved = await withTransaction(deps.pool, (tx) => repo.saveRateSet(tx, checked, 'replace'));
  return {
    base: saved.set.base_currency,
    provider: saved.set.provider,
    as_of: toIso(saved.set.as_of),
    rates: saved.rates,
    replaced: !saved.set.created,
    current: saved.set.is_current,
    created_at: toIso(saved.set.created_at),
    updated_at: toIso(saved.set.updated_at),
  };
}

/** D24: fixed mid rates per US dollar, provider `sandbox`. */
export const SANDBOX_RATES: ReadonlyArray<readonly [string, string]> = [
  ['EUR', '0.92'],
  ['GBP', '0.79'],
  ['INR', '84.00'],
  ['MXN', '18.50'],
  ['KES', '129.00'],
  ['PHP', '58.00'],
  ['NGN', '1550.00'],
  ['JPY', '150.00'],
  ['USDC', '1'],
  ['USDT', '1'],
  ['BTC', '0.00001'],
];

/** The sandbox set's fixed moment: seeding it again finds the same set and leaves it as it is. */
export const SANDBOX_RATES_AS_OF = new Date('2026-01-01T00:00:00.000Z');

export async function seedSandboxRates(deps: AppDeps): Promise<void> {
  await withTransaction(deps.pool, (tx) =>
    repo.saveRateSet(
      tx,
      { provider: 'sandbox', base: 'USD', asOf: SANDBOX_RATES_AS_OF, rates: SANDBOX_RATES },
      'keep',
    ),
  );
}
