// SQL of transfers (D20).

import { pageWithTotal } from '../db/paging.ts';
import type { Queryable } from '../db/pool.ts';
import { prepared } from '../db/prepared.ts';
import { findById, listFilters, lockById, searchOrder, updateById } from '../db/sql.ts';
import type { TransferStatus } from './transfer-schemas.ts';

export interface TransferRow {
  id: string;
  organisation_id: string;
  quote_id: string;
  corridor_id: string;
  beneficiary_id: string;
  external_id: string | null;
  reference: string | null;
  purpose: string | null;
  funding_method: 'balance' | 'bank_transfer' | 'crypto';
  source_currency: string;
  source_amount: string;
  fee_amount: string;
  rate: string;
  destination_currency: string;
  destination_amount: string;
  status: TransferStatus;
  status_reason: string | null;
  funded: boolean;
  network: string | null;
  deposit_id: string | null;
  payout_id: string | null;
  screening_id: string | null;
  expires_at: Date | null;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, organisation_id, quote_id, corridor_id, beneficiary_id, external_id, reference, purpose,
  funding_method, source_currency, source_amount::text AS source_amount, fee_amount::text AS fee_amount,
  rate::text AS rate, destination_currency, destination_amount::text AS destination_amount, status,
  status_reason, funded, network, deposit_id, payout_id, screening_id, expires_at, completed_at, created_at,
  updated_at`;

export type NewTransfer = Omit<
  TransferRow,
  'status_reason' | 'deposit_id' | 'completed_at' | 'created_at' | 'updated_at'
>;

export async function insertTransfer(db: Queryable, transfer: NewTransfer): Promise<TransferRow> {
  const result = await db.query<TransferRow>(
    prepared(
      `INSERT INTO transfers (id, organisation_id, quote_id, corridor_id, beneficiary_id, external_id, reference,
       purpose, funding_method, source_currency, source_amount, fee_amount, rate, destination_currency,
       destination_amount, status, network, expires_at, funded, payout_id, screening_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
     RETURNING ${COLUMNS}`,
      [
        transfer.id,
        transfer.organisation_id,
        transfer.quote_id,
        transfer.corridor_id,
        transfer.beneficiary_id,
        transfer.external_id,
        transfer.reference,
        transfer.purpose,
        transfer.funding_method,
        transfer.source_currency,
        transfer.source_amount,
        transfer.fee_amount,
        transfer.rate,
        transfer.destination_currency,
        transfer.destination_amount,
        transfer.status,
        transfer.network,
        transfer.expires_at,
        transfer.funded,
        transfer.payout_id,
        transfer.screening_id,
      ],
    ),
  );
  return result.rows[0]!;
}

export async function findTransfer(
  db: Queryable,
  organisationId: string,
  id: string,
): Promise<TransferRow | undefined> {
  return findById<TransferRow>(db, 'transfers', COLUMNS, id, organisationId);
}

/** The transfer, locked; `organisationId` null: any organisation's (timers, hooks). */
export async function lockTransfer(
  db: Queryable,
  organisationId: string | null,
  id: string,
): Promise<TransferRow | undefined> {
  return lockById<TransferRow>(db, 'transfers', COLUMNS, id, organisationId);
}

export async function updateTransfer(
  db: Queryable,
  id: string,
  changes: Partial<Omit<TransferRow, 'id' | 'organisation_id' | 'created_at' | 'updated_at'>>,
): Promise<TransferRow> {
  return updateById<TransferRow>(db, 'transfers', COLUMNS, id, changes);
}

export interface TransferFilters {
  status?: string[];
  beneficiary_id?: string[];
  corridor_id?: string[];
  quote_id?: string[];
  funding_method?: string[];
  source_currency?: string[];
  destination_currency?: string[];
  external_id?: string[];
}

export async function searchTransfers(
  db: Queryable,
  organisationId: string,
  filters: TransferFilters,
  search: string | undefined,
  sortBy: string,
  direction: 'asc' | 'desc',
  limit: number,
  offset: number,
): Promise<{ rows: TransferRow[]; total: number }> {
  const values: unknown[] = [organisationId];
  const conditions = ['organisation_id = $1'];
  listFilters(filters, values, conditions);
  if (search !== undefined) {
    // D20: `search` matches the id, the reference or the external id.
    values.push(search, `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    conditions.push(
      `(id = $${values.length - 1} OR reference ILIKE $${values.length} OR external_id ILIKE $${values.length})`,
    );
  }
  values.push(limit, offset);
  return pageWithTotal<TransferRow>(db, {
    columns: COLUMNS,
    from: 'transfers',
    condition: conditions.join(' AND '),
    orderBy: searchOrder(sortBy, direction),
    limit: `$${values.length - 1}`,
    offset: `$${values.length}`,
    values,
  });
}
