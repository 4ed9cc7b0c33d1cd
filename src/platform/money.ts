// Amounts, rates and fees are decimal strings, computed in decimal, never floats (D3).
import { Decimal } from 'decimal.js';

const DECIMAL_STRING = /^-?(0|[1-9]\d*)(\.\d+)?$/;

export function isDecimalString(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 64 && DECIMAL_STRING.test(value);
}

export function toDecimal(value: string): Decimal {
  if (!isDecimalString(value)) throw new TypeError(`not a decimal string: ${value}`);
  return new Decimal(value);
}

/** Formats with a fixed number of places, rounding half-even (banker's rounding). */
export function formatDecimal(value: Decimal, places: number): string {
  return value.toDecimalPlaces(places, Decimal.ROUND_HALF_EVEN).toFixed(places);
}
