// Quote pricing (D20) as a property: for random corridors, amounts and rates, the prices equal a
// recomputation in integer minor units (BigInt), destination mode gives the smallest sufficient source
// amount, and the platform never pays out more than it was paid at the rate shown.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { currencyOf, Decimal, fromMinorUnits, toMinorUnits } from '../../src/platform/money.ts';
import {
  type PriceTerms,
  priceFromDestination,
  priceFromSource,
  quotedRate,
} from '../../src/transfers/pricing.ts';

const SOURCES = ['USD', 'JPY', 'KWD', 'USDC', 'EUR'] as const;
const DESTINATIONS = ['EUR', 'JPY', 'INR', 'BTC', 'KWD', 'MXN'] as const;

const pow10 = (n: number): bigint => 10n ** BigInt(n);

/** A decimal as mantissa x 10^-scale, exactly. */
function rational(value: Decimal): { mantissa: bigint; scale: number } {
  const scale = Math.max(0, value.decimalPlaces());
  return { mantissa: BigInt(value.times(new Decimal(10).pow(scale)).toFixed(0)), scale };
}

/** floor(a / b) and ceil(a / b) for non-negative BigInts. */
const floorDiv = (a: bigint, b: bigint) => a / b;
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;

interface Case {
  terms: PriceTerms;
  /** fee_fixed in source minor units, fee_percent and markup in basis points of a percent (1/10000). */
  feeFixedMinor: bigint;
  feeBp: bigint;
}

const caseArbitrary = fc
  .record({
    source: fc.constantFrom(...SOURCES),
    destination: fc.constantFrom(...DESTINATIONS),
    rateMantissa: fc.bigInt({ min: 1n, max: 9_999_999_999n }),
    rateExponent: fc.integer({ min: -12, max: 3 }),
    markupBp: fc.bigInt({ min: 0n, max: 500n }),
    feeFixedMinor: fc.bigInt({ min: 0n, max: 5_000n }),
    feeBp: fc.bigInt({ min: 0n, max: 900n }),
  })
  .filter(({ source, destination }) => source !== destination)
  .map(({ source, destination, rateMantissa, rateExponent, markupBp, feeFixedMinor, feeBp }): Case => {
    const midRate = new Decimal(rateMantissa.toString()).times(new Decimal(10).pow(rateExponent));
    return {
      terms: {
        sourceCurrency: source,
        destinationCurrency: destination,
        midRate,
        feeFixed: fromMinorUnits(feeFixedMinor, source),
        feePercent: new Decimal(feeBp.toString()).dividedBy(100),
        fxMarkupPercent: new Decimal(markupBp.toString()).dividedBy(100),
      },
      feeFixedMinor,
      feeBp,
    };
  });

/** Source-mode price in integer minor units: [fee, destination]. */
function minorPrice(c: Case, rate: Decimal, sourceMinor: bigint): { fee: bigint; destination: bigint } {
  const fee = c.feeFixedMinor + ceilDiv(sourceMinor * c.feeBp, 10_000n);
  const net = sourceMinor - fee;
  if (net <= 0n) return { fee, destination: -1n };
  const { mantissa, scale } = rational(rate);
  const ds = currencyOf(c.terms.sourceCurrency).decimals;
  const dd = currencyOf(c.terms.destinationCurrency).decimals;
  // net / 10^ds x mantissa / 10^scale, in destination minor units (x 10^dd), rounded down.
  return { fee, destination: floorDiv(net * mantissa * pow10(dd), pow10(ds + scale)) };
}

describe('quote pricing (D20)', () => {
  it('shows a rate of the mid rate less the markup, rounded down to 10 significant digits', () => {
    fc.assert(
      fc.property(caseArbitrary, (c) => {
        const rate = quotedRate(c.terms);
        const exact = c.terms.midRate.times(new Decimal(1).minus(c.terms.fxMarkupPercent.dividedBy(100)));
        assert.ok(rate.sd() <= 10, `${rate} has more than 10 significant digits`);
        assert.ok(rate.lte(exact), `${rate} > ${exact}`);
        const ulp = new Decimal(10).pow(rate.e - 9);
        assert.ok(rate.plus(ulp).gt(exact), `${rate} is not the largest 10-digit rate at most ${exact}`);
      }),
      { numRuns: 500 },
    );
  });

  it('prices source mode exactly as integer minor units do, and never pays out more than paid', () => {
    fc.assert(
      fc.property(caseArbitrary, fc.bigInt({ min: 1n, max: 10_000_000_000n }), (c, sourceMinor) => {
        const rate = quotedRate(c.terms);
        const sourceAmount = fromMinorUnits(sourceMinor, c.terms.sourceCurrency);
        const price = priceFromSource(c.terms, rate, sourceAmount);
        const expected = minorPrice(c, rate, sourceMinor);
        assert.equal(toMinorUnits(price.feeAmount, c.terms.sourceCurrency), expected.fee);
        if (expected.destination < 0n) {
          // The fee eats the amount: no quote is given (422 on source_amount).
          assert.ok(price.destinationAmount.lte(0));
          return;
        }
        assert.equal(
          toMinorUnits(price.destinationAmount, c.terms.destinationCurrency),
          expected.destination,
        );
        // What is paid out, valued at the rate shown, never exceeds what was paid less the fee.
        assert.ok(price.destinationAmount.lte(price.sourceAmount.minus(price.feeAmount).times(rate)));
      }),
      { numRuns: 2_000 },
    );
  });

  it('gives in destination mode the smallest source amount whose price reaches the destination amount', () => {
    fc.assert(
      fc.property(caseArbitrary, fc.bigInt({ min: 1n, max: 1_000_000_000n }), (c, destinationMinor) => {
        const rate = quotedRate(c.terms);
        const destinationAmount = fromMinorUnits(destinationMinor, c.terms.destinationCurrency);
        const price = priceFromDestination(c.terms, rate, destinationAmount);
        assert.ok(price.destinationAmount.eq(destinationAmount), 'shows the requested amount');
        const sourceMinor = toMinorUnits(price.sourceAmount, c.terms.sourceCurrency);
        assert.ok(minorPrice(c, rate, sourceMinor).destination >= destinationMinor, 'reaches it');
        assert.ok(
          sourceMinor === 1n || minorPrice(c, rate, sourceMinor - 1n).destination < destinationMinor,
          'one minor unit less does not',
        );
        assert.equal(
          toMinorUnits(price.feeAmount, c.terms.sourceCurrency),
          minorPrice(c, rate, sourceMinor).fee,
        );
        assert.ok(price.destinationAmount.lte(price.sourceAmount.minus(price.feeAmount).times(rate)));
      }),
      { numRuns: 1_000 },
    );
  });

  it('prices the sandbox USD -> EUR corridor by hand', () => {
    const terms: PriceTerms = {
      sourceCurrency: 'USD',
      destinationCurrency: 'EUR',
      midRate: new Decimal('0.92'),
      feeFixed: new Decimal('2.00'),
      feePercent: new Decimal('0.50'),
      fxMarkupPercent: new Decimal('0.50'),
    };
    const rate = quotedRate(terms);
    assert.equal(rate.toFixed(), '0.9154');
    const price = priceFromSource(terms, rate, new Decimal('1000.00'));
    assert.equal(price.feeAmount.toFixed(2), '7.00'); // 2.00 + 5.00
    assert.equal(price.destinationAmount.toFixed(2), '908.99'); // 993.00 x 0.9154 = 908.9922, rounded down
    // 999.99 pays a fee of 6.99995, rounded up to 7.00, and buys 992.99 x 0.9154 = 908.98: one cent short.
    const back = priceFromDestination(terms, rate, new Decimal('908.99'));
    assert.equal(back.sourceAmount.toFixed(2), '1000.00');
    assert.equal(back.feeAmount.toFixed(2), '7.00');
  });
});
