// Quote pricing (D20): every amount a quote shows is computed from the rate as shown, so a client can
// recompute it exactly.
//   rate        = mid_rate x (1 - fx_markup_percent / 100), rounded down to 10 significant digits
//   fee_amount  = fee_fixed + source_amount x fee_percent / 100, rounded up to the source decimals
//   destination = (source_amount - fee_amount) x rate, rounded down to the destination decimals
// Destination mode finds the smallest source amount, in source minor units, whose source-mode
// computation gives at least the requested destination amount.
import { currencyOf, Decimal, rateDown, roundDown, roundUp } from '../platform/money.ts';

export interface PriceTerms {
  sourceCurrency: string;
  destinationCurrency: string;
  midRate: Decimal;
  feeFixed: Decimal;
  feePercent: Decimal;
  fxMarkupPercent: Decimal;
}

export interface Price {
  rate: Decimal;
  sourceAmount: Decimal;
  feeAmount: Decimal;
  destinationAmount: Decimal;
}

const HUNDRED = new Decimal(100);

/** The rate a quote shows: the mid rate less the corridor's markup, rounded down to 10 significant digits. */
export function quotedRate(terms: Pick<PriceTerms, 'midRate' | 'fxMarkupPercent'>): Decimal {
  return rateDown(terms.midRate.times(new Decimal(1).minus(terms.fxMarkupPercent.dividedBy(HUNDRED))));
}

/** Source mode: what `sourceAmount` buys at `rate`. The destination amount may be zero or less (no quote). */
export function priceFromSource(terms: PriceTerms, rate: Decimal, sourceAmount: Decimal): Price {
  const source = currencyOf(terms.sourceCurrency);
  const destination = currencyOf(terms.destinationCurrency);
  const feeAmount = roundUp(
    terms.feeFixed.plus(sourceAmount.times(terms.feePercent).dividedBy(HUNDRED)),
    source.decimals,
  );
  const destinationAmount = roundDown(sourceAmount.minus(feeAmount).times(rate), destination.decimals);
  return { rate, sourceAmount, feeAmount, destinationAmount };
}

/**
 * Destination mode: the smallest source amount (in source minor units) whose source-mode price gives at
 * least `destinationAmount`; the price shows the requested destination amount. The source-mode
 * destination never falls when the source grows by a minor unit (the fee grows by at most that unit,
 * since fee_percent < 100), so the search walks from an estimate to the boundary.
 */
export function priceFromDestination(terms: PriceTerms, rate: Decimal, destinationAmount: Decimal): Price {
  if (terms.feePercent.gte(HUNDRED)) throw new RangeError('a fee of 100 % or more leaves nothing to pay out');
  const source = currencyOf(terms.sourceCurrency);
  const unit = new Decimal(1).dividedBy(new Decimal(10).pow(source.decimals));
  const reaches = (amount: Decimal) =>
    priceFromSource(terms, rate, amount).destinationAmount.gte(destinationAmount);
  // (s - fixed - s p) x rate = d  =>  s = (d / rate + fixed) / (1 - p)
  const share = new Decimal(1).minus(terms.feePercent.dividedBy(HUNDRED));
  const estimate = Decimal.max(
    unit,
    roundDown(destinationAmount.dividedBy(rate).plus(terms.feeFixed).dividedBy(share), source.decimals),
  );
  // Bracket the answer between `low` (does not reach, or is zero) and `high` (reaches), from the estimate
  // with a doubling step (the estimate is off by a few units: the roundings), then halve the bracket.
  let low: Decimal;
  let high: Decimal;
  let step = unit;
  if (reaches(estimate)) {
    high = estimate;
    low = Decimal.max(new Decimal(0), high.minus(step));
    while (low.gt(0) && reaches(low)) {
      high = low;
      step = step.times(2);
      low = Decimal.max(new Decimal(0), high.minus(step));
    }
  } else {
    low = estimate;
    high = low.plus(step);
    while (!reaches(high)) {
      low = high;
      step = step.times(2);
      high = low.plus(step);
    }
  }
  while (high.minus(low).gt(unit)) {
    const middle = roundDown(low.plus(high).dividedBy(2), source.decimals);
    if (reaches(middle)) high = middle;
    else low = middle;
  }
  const price = priceFromSource(terms, rate, high);
  return { ...price, destinationAmount };
}
