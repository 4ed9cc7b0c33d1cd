// Money (D3, D14): amounts and rates are decimal strings, computed in decimal, never in JS numbers.
// Fiat decimals are ISO 4217 minor units from the `currency-codes` package; the crypto assets the
// service handles are listed here with their token decimals (USDC and USDT 6, BTC 8).
import currencyCodes from 'currency-codes';
import { Decimal as BaseDecimal } from 'decimal.js';
import { validationFailed } from './errors.ts';
import { ownEntry } from './lookup.ts';

/**
 * Decimal with room for every product the service computes: an amount of up to 18 significant digits
 * times a rate of 10 stays exact (decimal.js rounds every result to `precision` significant digits; the
 * library default of 20 would silently round such products). Rounding to a currency or to a rate's
 * digits is always explicit.
 */
export const Decimal = BaseDecimal.clone({
  precision: 60,
  rounding: BaseDecimal.ROUND_HALF_EVEN,
  toExpNeg: -60,
  toExpPos: 60,
});
export type Decimal = BaseDecimal;

export interface Currency {
  code: string;
  name: string;
  decimals: number;
  type: 'fiat' | 'crypto';
}

const CRYPTO: Readonly<Record<string, Currency>> = {
  USDC: { code: 'USDC', name: 'USD Coin', decimals: 6, type: 'crypto' },
  USDT: { code: 'USDT', name: 'Tether USD', decimals: 6, type: 'crypto' },
  BTC: { code: 'BTC', name: 'Bitcoin', decimals: 8, type: 'crypto' },
};

/**
 * ISO 4217 codes that are not a currency one pays in: funds, precious metals, testing and "no currency"
 * (digits unspecified in the standard, which the package reports as 0).
 */
const NOT_PAYABLE = new Set([
  'BOV',
  'CHE',
  'CHW',
  'CLF',
  'COU',
  'MXV',
  'USN',
  'UYI',
  'UYW',
  'XAG',
  'XAU',
  'XBA',
  'XBB',
  'XBC',
  'XBD',
  'XDR',
  'XPD',
  'XPT',
  'XSU',
  'XTS',
  'XUA',
  'XXX',
]);

const FIAT: ReadonlyMap<string, Currency> = new Map(
  currencyCodes
    .codes()
    .filter((code) => !NOT_PAYABLE.has(code))
    .map((code) => {
      const entry = currencyCodes.code(code)!;
      return [code, { code, name: entry.currency, decimals: entry.digits, type: 'fiat' as const }];
    }),
);

/** The currency of an upper-case code (ISO 4217, or USDC / USDT / BTC), or undefined. */
export function findCurrency(code: string): Currency | undefined {
  return FIAT.get(code) ?? ownEntry(CRYPTO, code);
}

export function currencyOf(code: string): Currency {
  const currency = findCurrency(code);
  if (!currency) throw new TypeError(`unknown currency ${code}`);
  return currency;
}

export const isCryptoAsset = (code: string): boolean => ownEntry(CRYPTO, code) !== undefined;

/** Every code `findCurrency` knows. */
export const knownCurrencyCodes = (): string[] => [...FIAT.keys(), ...Object.keys(CRYPTO)];

/** A request amount (D14): digits with an optional fraction; no sign, no exponent, no spaces. */
const AMOUNT = /^(0|[1-9]\d{0,17})(\.\d{1,18})?$/;

/**
 * 422 on `field` unless `value` is written as a request amount (D14), before anything is looked up: a
 * route that learns the currency from a stored row checks the text first, as validation comes before the
 * operation (D5); parseAmount then checks the currency's decimals.
 */
export function checkAmountText(value: unknown, field: string): asserts value is string {
  if (typeof value !== 'string' || !AMOUNT.test(value)) {
    throw validationFailed(
      field,
      `${field} must be a decimal string such as "100.00" (no sign, no exponent), got ${JSON.stringify(value)}`,
    );
  }
}

/**
 * Parses an amount of a request (D14): a decimal string with no exponent or sign, no more decimals than
 * the currency has, greater than zero; anything else is 422 on `field`. `allowZero` admits "0" for
 * amounts that may be nothing (a corridor's fixed fee).
 */
export function parseAmount(
  value: unknown,
  currencyCode: string,
  field: string,
  options: { allowZero?: boolean } = {},
): Decimal {
  const currency = currencyOf(currencyCode);
  checkAmountText(value, field);
  const fraction = value.split('.')[1] ?? '';
  if (fraction.length > currency.decimals) {
    throw validationFailed(
      field,
      `${field} has more decimals than ${currency.code} allows (${currency.decimals})`,
    );
  }
  const amount = new Decimal(value);
  if (!options.allowZero && amount.isZero()) {
    throw validationFailed(field, `${field} must be greater than zero`);
  }
  return amount;
}

/**
 * An amount as responses show it (D14): exactly the currency's decimals. The amount must already be
 * rounded to them (computations round explicitly, D20); anything finer is a bug, not a rounding choice.
 */
export function formatAmount(amount: Decimal | string, currencyCode: string): string {
  const { decimals } = currencyOf(currencyCode);
  const value = new Decimal(amount);
  if (value.decimalPlaces() > decimals) {
    throw new RangeError(`${value.toString()} has more than the ${decimals} decimals of ${currencyCode}`);
  }
  return value.toFixed(decimals);
}

/** Integer minor units of an amount (exact: the amount must fit the currency's decimals). */
export function toMinorUnits(amount: Decimal | string, currencyCode: string): bigint {
  const { decimals } = currencyOf(currencyCode);
  const scaled = new Decimal(amount).times(new Decimal(10).pow(decimals));
  if (!scaled.isInteger())
    throw new RangeError(`${amount.toString()} is finer than ${currencyCode} minor units`);
  return BigInt(scaled.toFixed(0));
}

export function fromMinorUnits(minor: bigint, currencyCode: string): Decimal {
  const { decimals } = currencyOf(currencyCode);
  return new Decimal(minor.toString()).dividedBy(new Decimal(10).pow(decimals));
}

/** Rounds up (away from zero for positives) to `places` decimals: fees (D20). */
export const roundUp = (value: Decimal, places: number): Decimal =>
  value.toDecimalPlaces(places, Decimal.ROUND_UP);

/** Rounds down (toward zero) to `places` decimals: amounts paid out (D20). */
export const roundDown = (value: Decimal, places: number): Decimal =>
  value.toDecimalPlaces(places, Decimal.ROUND_DOWN);

/** Rates carry at most 10 significant digits (D14). */
export const RATE_SIGNIFICANT_DIGITS = 10;

export const rateHalfEven = (value: Decimal): Decimal =>
  value.toSignificantDigits(RATE_SIGNIFICANT_DIGITS, Decimal.ROUND_HALF_EVEN);

export const rateDown = (value: Decimal): Decimal =>
  value.toSignificantDigits(RATE_SIGNIFICANT_DIGITS, Decimal.ROUND_DOWN);

/** A rate as a plain decimal string (no exponent): "0.00001", "84", "1.0823". */
export const formatRate = (rate: Decimal): string => rate.toFixed();
