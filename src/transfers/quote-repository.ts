// SQL of quotes (D20).
import type { Queryable } from '../db/pool.ts';
import { prepared } from '../db/prepared.ts';
import { findById, lockById } from '../db/sql.ts';

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

const COLUMNS = `id, organisation_id, corridor_id, source_currency, destination_currency, amount_mode,
  source_amount::text AS source_amount, fee_amount::text AS fee_amount, rate::text AS rate,
  mid_rate::text AS mid_rate, destination_amount::text AS destination_amount, status, expires_at,
  estimated_delivery_at, created_at, updated_at`;

export async function insertQuote(
  db: Queryable,
  quote: Omit<QuoteRow, 'status' | 'updated_at'>,
): Promise<QuoteRow> {
  const result = await db.query<QuoteRow>(
    prepared(
      `INSERT INTO quotes (id, organisation_id, corridor_id, source_currency, destination_currency, amount_mode,
       source_amount, fee_amount, rate, mid_rate, destination_amount, status, expires_at, estimated_delivery_at,
       created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'open', $12, $13, $14, $14)
     RETURNING ${COLUMNS}`,
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
