// Quotes (D20): a price for a corridor in either amount mode, open for QUOTE_TTL_SECONDS. Quotes publish
// no events (D8 has no quote codes); their expiry is a durable timer and is also applied when a transfer
// tries to accept an expired quote.
import { quotableCorridor } from '../corridors/service.ts';
import { type PoolClient, withOneStatement, withTransaction } from '../db/pool.ts';
import { quotableRate } from '../fx/service.ts';
import type { AppDeps } from '../platform/deps.ts';
import { AppError, invalidState, notFound, validationFailed } from '../platform/errors.ts';
import { isPublicId, newPublicId } from '../platform/ids.ts';
import { checkAmountText, Decimal, formatAmount, formatRate, parseAmount } from '../platform/money.ts';
import { toIso } from '../platform/time.ts';
import { type Price, type PriceTerms, priceFromDestination, priceFromSource, quotedRate } from './pricing.ts';
import * as repo from './quote-repository.ts';
import type { CreateQuoteInput, QuoteView } from './quote-schemas.ts';

export const EXPIRE_QUOTE_KIND = 'transfers.expire_quote';
const expiryKey = (id: string) => `${EXPIRE_QUOTE_KIND}:${id}`;

export function quoteView(row: repo.QuoteRow): QuoteView {
  return {
    id: row.id,
    corridor_id: row.corridor_id,
    source_currency: row.source_currency,
    destination_currency: row.destination_currency,
    amount_mode: row.amount_mode,
    source_amount: formatAmount(row.source_amount, row.source_currency),
    fee_amount: formatAmount(row.fee_amount, row.source_currency),
    rate: formatRate(new Decimal(row.rate)),
    mid_rate: formatRate(new Decimal(row.mid_rate)),
    destination_amount: formatAmount(row.destination_amount, row.destination_currency),
    status: row.status,
    expires_at: toIso(row.expires_at),
    estimated_delivery_at: toIso(row.estimated_delivery_at),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export async function createQuote(
  deps: AppDeps,
  organisationId: string,
  input: CreateQuoteInput,
): Promise<QuoteView> {
  const given =
    (input.source_amount !== undefined ? 1 : 0) + (input.destination_amount !== undefined ? 1 : 0);
  if (given !== 1) {
    throw validationFailed(
      input.source_amount === undefined ? 'source_amount' : 'destination_amount',
      'Give exactly one of source_amount and destination_amount',
    );
  }
  // Written as an amount before the corridor and its rate are looked up (D5); the decimals need the corridor.
  if (input.source_amount !== undefined) checkAmountText(input.source_amount, 'source_amount');
  else checkAmountText(input.destination_amount, 'destination_amount');
  const corridor = await quotableCorridor(deps.pool, input.corridor_id);
  const now = new Date();
  const mid = await quotableRate(
    deps.pool,
    deps,
    corridor.source_currency,
    corridor.destination_currency,
    now,
  );
  const terms: PriceTerms = {
    sourceCurrency: corridor.source_currency,
    destinationCurrency: corridor.destination_currency,
    midRate: mid.rate,
    feeFixed: corridor.fee_fixed,
    feePercent: corridor.fee_percent,
    fxMarkupPercent: corridor.fx_markup_percent,
  };
  // A fee or markup of 100 % pays nothing out, so no price exists. The operator API refuses one, but a
  // corridor row may still hold it.
  if (terms.feePercent.gte(100) || terms.fxMarkupPercent.gte(100)) {
    throw new AppError(
      'CORRIDOR_UNAVAILABLE',
      'The corridor takes all of the amount in fees: it cannot be quoted',
    );
  }
  const rate = quotedRate(terms);
  const limits = `${formatAmount(corridor.min_amount, corridor.source_currency)} to ${formatAmount(corridor.max_amount, corridor.source_currency)} ${corridor.source_currency}`;
  const checkLimits = (field: 'source_amount' | 'destination_amount', sourceAmount: Decimal) => {
    if (sourceAmount.lt(corridor.min_amount) || sourceAmount.gt(corridor.max_amount)) {
      throw validationFailed(
        field,
        `The source amount ${formatAmount(sourceAmount, corridor.source_currency)} is outside the corridor's limits: ${limits}`,
      );
    }
  };
  let price: Price;
  let field: 'source_amount' | 'destination_amount';
  if (input.source_amount !== undefined) {
    field = 'source_amount';
    const sourceAmount = parseAmount(input.source_amount, corridor.source_currency, field);
    // The limits first (D14: the message gives them), then whether anything is left to pay out.
    checkLimits(field, sourceAmount);
    price = priceFromSource(terms, rate, sourceAmount);
    if (price.destinationAmount.lte(0)) {
      throw validationFailed(field, 'source_amount does not cover the fee: nothing would be paid out');
    }
  } else {
    field = 'destination_amount';
    const wanted = parseAmount(input.destination_amount, corridor.destination_currency, field);
    // Far beyond any corridor's limit: refused before the search for its source amount.
    if (wanted.dividedBy(rate).gt(corridor.max_amount.times(2))) {
      throw validationFailed(field, `The source amount must lie within the corridor's limits: ${limits}`);
    }
    price = priceFromDestination(terms, rate, wanted);
    checkLimits(field, price.sourceAmount);
  }
  const id = newPublicId('qte');
  const expiresAt = new Date(now.getTime() + deps.config.quoteTtlSeconds * 1000);
  const row = await withOneStatement(deps.pool, (db) =>
    repo.insertQuote(
      db,
      {
        id,
        organisation_id: organisationId,
        corridor_id: corridor.id,
        source_currency: corridor.source_currency,
        destination_currency: corridor.destination_currency,
        amount_mode: field === 'source_amount' ? 'source' : 'destination',
        source_amount: formatAmount(price.sourceAmount, corridor.source_currency),
        fee_amount: formatAmount(price.feeAmount, corridor.source_currency),
        rate: formatRate(rate),
        mid_rate: formatRate(mid.rate),
        destination_amount: formatAmount(price.destinationAmount, corridor.destination_currency),
        expires_at: expiresAt,
        estimated_delivery_at: new Date(now.getTime() + corridor.estimated_delivery_seconds * 1000),
        // The quote's times are one clock's: its validity is exactly QUOTE_TTL_SECONDS from created_at.
        created_at: now,
      },
      { kind: EXPIRE_QUOTE_KIND, payload: { quote_id: id }, dedupeKey: expiryKey(id) },
    ),
  );
  return quoteView(row);
}

export async function getQuote(deps: AppDeps, organisationId: string, id: string): Promise<QuoteView> {
  const row = isPublicId('qte', id) ? await repo.findQuote(deps.pool, organisationId, id) : undefined;
  if (!row) throw notFound('No quote matches the id');
  // Past expires_at a quote reads expired, whether or not its timer has run yet: the timer runs a moment
  // later, and a client deciding whether to confirm reads the status (D20).
  const due = row.status === 'open' && row.expires_at.getTime() <= Date.now();
  return quoteView(due ? ((await expireIfDue(deps, organisationId, id)) ?? row) : row);
}

/**
 * The quote a transfer accepts, marked accepted in the confirming transaction (which holds its row lock
 * until the commit): it must be open and unexpired (400 QUOTE_EXPIRED; 400 INVALID_STATE when a transfer
 * already accepted it). On QUOTE_EXPIRED the caller runs `expireIfDue` after the rollback, so that the
 * quote shows as expired although the confirm took no effect.
 */
export async function acceptQuote(
  tx: PoolClient,
  organisationId: string,
  id: string,
): Promise<repo.AcceptedQuote> {
  if (!isPublicId('qte', id)) throw notFound('No quote matches the id');
  // An accepted quote's expiry timer has nothing left to do: it goes with the acceptance.
  const accepted = await repo.acceptOpenQuote(tx, organisationId, id, expiryKey(id));
  if (accepted) return accepted;
  const row = await repo.findQuote(tx, organisationId, id);
  if (!row) throw notFound('No quote matches the id');
  if (row.status === 'accepted')
    throw invalidState('The quote is accepted: a transfer was already confirmed from it');
  throw new AppError('QUOTE_EXPIRED', `The quote expired at ${toIso(row.expires_at)}; ask for a new quote`);
}

/**
 * Marks the organisation's quote expired if its time has passed (after a confirm refused it, see
 * acceptQuote; or when it is read). Answers the quote as it now stands, undefined if there is none.
 */
export async function expireIfDue(
  deps: AppDeps,
  organisationId: string,
  id: string,
): Promise<repo.QuoteRow | undefined> {
  if (!isPublicId('qte', id)) return undefined;
  return withTransaction(deps.pool, async (tx) => {
    const row = await repo.lockQuote(tx, organisationId, id);
    if (row?.status === 'open' && row.expires_at.getTime() <= Date.now())
      return repo.setQuoteStatus(tx, id, 'expired');
    return row;
  });
}

async function expireLocked(tx: PoolClient, id: string): Promise<repo.QuoteRow | undefined> {
  const row = await repo.lockQuote(tx, null, id);
  if (row?.status !== 'open') return row;
  return repo.setQuoteStatus(tx, id, 'expired');
}

/** The quote's durable timer: at expires_at an open quote expires. */
export async function expireQuoteJob(tx: PoolClient, id: string): Promise<void> {
  await expireLocked(tx, id);
}

/** Sandbox: expire an open quote now (D24); 400 INVALID_STATE once it is accepted or expired. */
export async function expireQuoteNow(deps: AppDeps, organisationId: string, id: string): Promise<QuoteView> {
  return withTransaction(deps.pool, async (tx) => {
    const row = isPublicId('qte', id) ? await repo.lockQuote(tx, organisationId, id) : undefined;
    if (!row) throw notFound('No quote matches the id');
    if (row.status !== 'open')
      throw invalidState(`The quote is ${row.status}; only an open quote can expire`);
    return quoteView(await repo.expireQuoteNow(tx, id));
  });
}
