// SQL of quotes (D20).
import type { Queryable } from '../db/pool.ts';
import { prepared } from '../db/prepared.ts';
import { findById, lockById } from '../db/sql.ts';
import { deleteJobOfKey, insertJobsFrom, type NewJob } from '../platform/jobs/repository.ts';

export interface QuoteRow {
  id: string;
  organisation_id: string;
  corridor_id: string;
  source_currency: string;
  destination_currency: string;
  amount_mode: 'source' | 'destination';
  source_amount: string;
  fee_amount: string;
  rate: string;
  mid_rate: string;
  destination_amount: string;
  status: 'open' | 'accepted' | 'expired';
  expires_at: Date;
  estimated_delivery_at: Date;
  created_at: Date;
  updated_at: Date;
}

/** The columns of a QuoteRow, of the table named `t` (with its dot) or of the only table. */
const columnsOf = (t = '') => `${t}id, ${t}organisation_id, ${t}corridor_id, ${t}source_currency,
  ${t}destination_currency, ${t}amount_mode, ${t}source_amount::text AS source_amount,
  ${t}fee_amount::text AS fee_amount, ${t}rate::text AS rate, ${t}mid_rate::text AS mid_rate,
  ${t}destination_amount::text AS destination_amount, ${t}status, ${t}expires_at, ${t}estimated_delivery_at,
  ${t}created_at, ${t}updated_at`;
const COLUMNS = columnsOf();

/**
 * Inserts the quote and schedules its expiry timer in one statement (atomic without a transaction). The
 * timer wakes no runner: quotes are open at least 10 s (QUOTE_TTL_SECONDS), beyond a runner's longest sleep.
 */
export async function insertQuote(
  db: Queryable,
  quote: Omit<QuoteRow, 'status' | 'updated_at'>,
  expiry: Omit<NewJob, 'runAt'>,
): Promise<QuoteRow> {
  const result = await db.query<QuoteRow>(
    prepared(
      `WITH quote AS (
         INSERT INTO quotes (id, organisation_id, corridor_id, source_currency, destination_currency,
           amount_mode, source_amount, fee_amount, rate, mid_rate, destination_amount, status, expires_at,
           estimated_delivery_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'open', $12, $13, $14, $14)
         RETURNING ${COLUMNS}
       ), timer AS (
         ${insertJobsFrom('SELECT $15, $16::jsonb, expires_at, $17 FROM quote')}
       )
       SELECT * FROM quote`,
      [
        quote.id,
        quote.organisation_id,
        quote.corridor_id,
        quote.source_currency,
        quote.destination_currency,
        quote.amount_mode,
        quote.source_amount,
        quote.fee_amount,
        quote.rate,
        quote.mid_rate,
        quote.destination_amount,
        quote.expires_at,
        quote.estimated_delivery_at,
        quote.created_at,
        expiry.kind,
        expiry.payload,
        expiry.dedupeKey ?? null,
      ],
    ),
  );
  return result.rows[0]!;
}

export async function findQuote(
  db: Queryable,
  organisationId: string,
  id: string,
): Promise<QuoteRow | undefined> {
  return findById<QuoteRow>(db, 'quotes', COLUMNS, id, organisationId);
}

/** `organisationId` null: any organisation's (the worker's expiry timer). */
export async function lockQuote(
  db: Queryable,
  organisationId: string | null,
  id: string,
): Promise<QuoteRow | undefined> {
  return lockById<QuoteRow>(db, 'quotes', COLUMNS, id, organisationId);
}

/** A quote accepted by a confirm, with where its corridor pays (what the beneficiary must match). */
export interface AcceptedQuote extends QuoteRow {
  destination_country: string;
  payout_method: string;
}

/**
 * Marks the organisation's quote accepted if it is open and unexpired, in one statement that also reads
 * its corridor's destination and cancels its expiry timer (`expiryKey`, the timer's dedupe key); undefined
 * otherwise (the caller tells why from a plain look-up, and rolls back: the timer then stays).
 */
export async function acceptOpenQuote(
  db: Queryable,
  organisationId: string,
  id: string,
  expiryKey: string,
): Promise<AcceptedQuote | undefined> {
  const result = await db.query<AcceptedQuote>(
    prepared(
      `WITH timer AS (${deleteJobOfKey('$3')})
       UPDATE quotes q SET status = 'accepted', updated_at = now()
       FROM corridors c
       WHERE q.id = $1 AND q.organisation_id = $2 AND q.status = 'open' AND q.expires_at > now()
         AND c.id = q.corridor_id
       RETURNING ${columnsOf('q.')}, c.destination_country, c.payout_method`,
      [id, organisationId, expiryKey],
    ),
  );
  return result.rows[0];
}

/** The sandbox's expiry of an open quote (D24): it expires now, and expires_at says so. */
export async function expireQuoteNow(db: Queryable, id: string): Promise<QuoteRow> {
  const result = await db.query<QuoteRow>(
    `UPDATE quotes SET status = 'expired', expires_at = LEAST(expires_at, now()), updated_at = now()
     WHERE id = $1 RETURNING ${COLUMNS}`,
    [id],
  );
  return result.rows[0]!;
}

export async function setQuoteStatus(
  db: Queryable,
  id: string,
  status: QuoteRow['status'],
): Promise<QuoteRow> {
  const result = await db.query<QuoteRow>(
    prepared(`UPDATE quotes SET status = $2, updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`, [
      id,
      status,
    ]),
  );
  return result.rows[0]!;
}
