// SQL of deposits and payouts (D21).

import { pageWithTotal } from '../db/paging.ts';
import type { Queryable } from '../db/pool.ts';
import { prepared } from '../db/prepared.ts';
import { findById, listFilters, lockById, searchOrder, updateById } from '../db/sql.ts';

export interface DepositRow {
  id: string;
  organisation_id: string;
  method: 'bank_transfer' | 'crypto';
  currency: string;
  expected_amount: string | null;
  received_amount: string | null;
  status: 'pending' | 'detected' | 'received' | 'expired' | 'failed' | 'reversed';
  reference: string | null;
  instructions: Record<string, unknown>;
  transfer_id: string | null;
  network: string | null;
  address: string | null;
  tx_hash: string | null;
  log_index: number | null;
  confirmations: number | null;
  /** The bank's id of the payment a bank-transfer deposit recorded (manual rail): unique per currency. */
  bank_transaction_id: string | null;
  failure_reason: string | null;
  external_id: string | null;
  expires_at: Date | null;
  detected_at: Date | null;
  received_at: Date | null;
  failed_at: Date | null;
  reversed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface PayoutRow {
  id: string;
  organisation_id: string;
  beneficiary_id: string;
  currency: string;
  amount: string;
  reference: string | null;
  status: 'pending' | 'processing' | 'completed' | 'failed' | 'cancelled' | 'returned';
  failure_reason: string | null;
  connector: string;
  transfer_id: string | null;
  external_id: string | null;
  processing_at: Date | null;
  completed_at: Date | null;
  failed_at: Date | null;
  cancelled_at: Date | null;
  returned_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const DEPOSIT_COLUMNS = `id, organisation_id, method, currency, expected_amount::text AS expected_amount,
  received_amount::text AS received_amount, status, reference, instructions, transfer_id, network, address,
  tx_hash, log_index, confirmations, bank_transaction_id, failure_reason, external_id, expires_at, detected_at, received_at,
  failed_at, reversed_at, created_at, updated_at`;
const PAYOUT_COLUMNS = `id, organisation_id, beneficiary_id, currency, amount::text AS amount, reference, status,
  failure_reason, connector, transfer_id, external_id, processing_at, completed_at, failed_at, cancelled_at,
  returned_at, created_at, updated_at`;

export type NewDeposit = Pick<
  DepositRow,
  | 'id'
  | 'organisation_id'
  | 'method'
  | 'currency'
  | 'expected_amount'
  | 'reference'
  | 'instructions'
  | 'transfer_id'
  | 'network'
  | 'address'
  | 'external_id'
  | 'expires_at'
>;

export async function insertDeposit(db: Queryable, deposit: NewDeposit): Promise<DepositRow> {
  const result = await db.query<DepositRow>(
    prepared(
      `INSERT INTO deposits (id, organisation_id, method, currency, expected_amount, status, reference, instructions,
       transfer_id, network, address, external_id, expires_at)
     VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8, $9, $10, $11, $12)
     RETURNING ${DEPOSIT_COLUMNS}`,
      [
        deposit.id,
        deposit.organisation_id,
        deposit.method,
        deposit.currency,
        deposit.expected_amount,
        deposit.reference,
        deposit.instructions,
        deposit.transfer_id,
        deposit.network,
        deposit.address,
        deposit.external_id,
        deposit.expires_at,
      ],
    ),
  );
  return result.rows[0]!;
}

/** The deposit, locked for the caller's transaction; `organisationId` null: any organisation's (operators). */
export async function lockDeposit(
  db: Queryable,
  organisationId: string | null,
  id: string,
): Promise<DepositRow | undefined> {
  return lockById<DepositRow>(db, 'deposits', DEPOSIT_COLUMNS, id, organisationId);
}

export async function findDeposit(
  db: Queryable,
  organisationId: string,
  id: string,
): Promise<DepositRow | undefined> {
  return findById<DepositRow>(db, 'deposits', DEPOSIT_COLUMNS, id, organisationId);
}

/** The deposit whose bank reference this is, of any organisation (references are unique). */
export async function findDepositByReference(
  db: Queryable,
  reference: string,
): Promise<DepositRow | undefined> {
  const result = await db.query<DepositRow>(`SELECT ${DEPOSIT_COLUMNS} FROM deposits WHERE reference = $1`, [
    reference,
  ]);
  return result.rows[0];
}

/** The organisation's deposits with these ids, by id. */
export async function findDepositsByIds(
  db: Queryable,
  organisationId: string,
  ids: string[],
): Promise<Map<string, DepositRow>> {
  if (ids.length === 0) return new Map();
  const result = await db.query<DepositRow>(
    prepared(`SELECT ${DEPOSIT_COLUMNS} FROM deposits WHERE id = ANY($1::text[]) AND organisation_id = $2`, [
      ids,
      organisationId,
    ]),
  );
  return new Map(result.rows.map((row) => [row.id, row]));
}

/** Sets the given columns (and updated_at) of a locked deposit; returns the new row. */
export async function updateDeposit(
  db: Queryable,
  id: string,
  changes: Partial<Omit<DepositRow, 'id' | 'organisation_id' | 'created_at' | 'updated_at'>>,
): Promise<DepositRow> {
  return updateById<DepositRow>(db, 'deposits', DEPOSIT_COLUMNS, id, changes);
}

export async function insertPayout(
  db: Queryable,
  payout: Pick<
    PayoutRow,
    | 'id'
    | 'organisation_id'
    | 'beneficiary_id'
    | 'currency'
    | 'amount'
    | 'reference'
    | 'connector'
    | 'transfer_id'
    | 'external_id'
  >,
): Promise<PayoutRow> {
  const result = await db.query<PayoutRow>(
    prepared(
      `INSERT INTO payouts (id, organisation_id, beneficiary_id, currency, amount, reference, status, connector,
       transfer_id, external_id)
     VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8, $9)
     RETURNING ${PAYOUT_COLUMNS}`,
      [
        payout.id,
        payout.organisation_id,
        payout.beneficiary_id,
        payout.currency,
        payout.amount,
        payout.reference,
        payout.connector,
        payout.transfer_id,
        payout.external_id,
      ],
    ),
  );
  return result.rows[0]!;
}

export async function lockPayout(
  db: Queryable,
  organisationId: string | null,
  id: string,
): Promise<PayoutRow | undefined> {
  return lockById<PayoutRow>(db, 'payouts', PAYOUT_COLUMNS, id, organisationId);
}

export async function findPayout(
  db: Queryable,
  organisationId: string,
  id: string,
): Promise<PayoutRow | undefined> {
  return findById<PayoutRow>(db, 'payouts', PAYOUT_COLUMNS, id, organisationId);
}

/** Locks the beneficiary's pending payouts, in id order, and answers their ids (payouts_pending_beneficiary_idx). */
export async function lockPendingPayoutIds(
  db: Queryable,
  organisationId: string,
  beneficiaryId: string,
): Promise<string[]> {
  const result = await db.query<{ id: string }>(
    `SELECT id FROM payouts WHERE beneficiary_id = $1 AND organisation_id = $2 AND status = 'pending'
      ORDER BY id FOR UPDATE`,
    [beneficiaryId, organisationId],
  );
  return result.rows.map((row) => row.id);
}

/** The payout, of any organisation (the operator's reads). */
export async function findPayoutOfAnyOrganisation(db: Queryable, id: string): Promise<PayoutRow | undefined> {
  const result = await db.query<PayoutRow>(
    prepared(`SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE id = $1`, [id]),
  );
  return result.rows[0];
}

/** The organisation's payouts with these ids, by id. */
export async function findPayoutsByIds(
  db: Queryable,
  organisationId: string,
  ids: string[],
): Promise<Map<string, PayoutRow>> {
  if (ids.length === 0) return new Map();
  const result = await db.query<PayoutRow>(
    prepared(`SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE id = ANY($1::text[]) AND organisation_id = $2`, [
      ids,
      organisationId,
    ]),
  );
  return new Map(result.rows.map((row) => [row.id, row]));
}

export async function updatePayout(
  db: Queryable,
  id: string,
  changes: Partial<Omit<PayoutRow, 'id' | 'organisation_id' | 'created_at' | 'updated_at'>>,
): Promise<PayoutRow> {
  return updateById<PayoutRow>(db, 'payouts', PAYOUT_COLUMNS, id, changes);
}

/** Records the payout's hand-off to its connector; false if it was handed off before. */
export async function recordHandOff(db: Queryable, payoutId: string, connector: string): Promise<boolean> {
  const result = await db.query(
    prepared(
      'INSERT INTO payout_hand_offs (payout_id, connector) VALUES ($1, $2) ON CONFLICT (payout_id) DO NOTHING',
      [payoutId, connector],
    ),
  );
  return result.rowCount === 1;
}

/** Payouts waiting for the operator in `processing` with a connector, oldest first. */
export async function payoutsWaiting(db: Queryable, connector: string, limit: number): Promise<PayoutRow[]> {
  const result = await db.query<PayoutRow>(
    prepared(
      `SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE connector = $1 AND status = 'processing' ORDER BY created_at LIMIT $2`,
      [connector, limit],
    ),
  );
  return result.rows;
}

export interface ProcessingBacklog {
  connector: string;
  processing: number;
  oldestSeconds: number;
}

/** Per connector: payouts processing (handed off, outcome awaited) and the age of the oldest hand-off. */
export async function processingBacklog(db: Queryable): Promise<ProcessingBacklog[]> {
  const result = await db.query<ProcessingBacklog>(
    prepared(
      `SELECT connector, count(*)::int AS processing,
              coalesce(EXTRACT(EPOCH FROM now() - min(processing_at)), 0)::float8 AS "oldestSeconds"
       FROM payouts WHERE status = 'processing' GROUP BY connector`,
      [],
    ),
  );
  return result.rows;
}

export interface SearchFilters {
  status?: string[];
  method?: string[];
  currency?: string[];
  transfer_id?: string[];
  external_id?: string[];
  beneficiary_id?: string[];
}

export async function search<Row extends { id: unknown }>(
  db: Queryable,
  table: 'deposits' | 'payouts',
  organisationId: string,
  filters: SearchFilters,
  sortBy: string,
  direction: 'asc' | 'desc',
  limit: number,
  offset: number,
): Promise<{ rows: Row[]; total: number }> {
  const values: unknown[] = [organisationId];
  const conditions = ['organisation_id = $1'];
  listFilters(filters, values, conditions);
  values.push(limit, offset);
  return pageWithTotal<Row>(db, {
    columns: table === 'deposits' ? DEPOSIT_COLUMNS : PAYOUT_COLUMNS,
    from: table,
    condition: conditions.join(' AND '),
    orderBy: searchOrder(sortBy, direction),
    limit: `$${values.length - 1}`,
    offset: `$${values.length}`,
    values,
  });
}

/** The deposit a chain notification recorded before (D22: idempotent by network, tx hash and log index). */
export async function lockDepositByChain(
  db: Queryable,
  network: string,
  txHash: string,
  logIndex: number | null,
): Promise<DepositRow | undefined> {
  const result = await db.query<DepositRow>(
    prepared(
      `SELECT ${DEPOSIT_COLUMNS} FROM deposits
     WHERE network = $1 AND tx_hash = $2 AND coalesce(log_index, -1) = coalesce($3::integer, -1) FOR UPDATE`,
      [network, txHash, logIndex],
    ),
  );
  return result.rows[0];
}

/** The deposit that recorded this bank payment (the bank's id of it, in this currency). */
export async function findDepositByBankTransaction(
  db: Queryable,
  currency: string,
  bankTransactionId: string,
): Promise<DepositRow | undefined> {
  const result = await db.query<DepositRow>(
    prepared(`SELECT ${DEPOSIT_COLUMNS} FROM deposits WHERE currency = $1 AND bank_transaction_id = $2`, [
      currency,
      bankTransactionId,
    ]),
  );
  return result.rows[0];
}

/**
 * The oldest pending deposit waiting on this address for this asset on this network (a transfer's own
 * address, D20). An address issued for one network is an account on every chain of its family: money sent
 * there on another network is not what the deposit asked for.
 */
export async function lockPendingDepositAt(
  db: Queryable,
  network: string,
  address: string,
  currency: string,
): Promise<DepositRow | undefined> {
  const result = await db.query<DepositRow>(
    prepared(
      `SELECT ${DEPOSIT_COLUMNS} FROM deposits
     WHERE address = $1 AND currency = $2 AND network = $3 AND status = 'pending' AND tx_hash IS NULL
     ORDER BY created_at LIMIT 1 FOR UPDATE`,
      [address, currency, network],
    ),
  );
  return result.rows[0];
}

/**
 * The newest deposit of a transfer on this address for this asset on this network: an address is issued
 * for one deposit leg, so every such deposit is of the same transfer.
 */
export async function findTransferDepositAt(
  db: Queryable,
  organisationId: string,
  network: string,
  address: string,
  currency: string,
): Promise<DepositRow | undefined> {
  const result = await db.query<DepositRow>(
    prepared(
      `SELECT ${DEPOSIT_COLUMNS} FROM deposits
     WHERE address = $1 AND currency = $2 AND network = $3 AND organisation_id = $4 AND transfer_id IS NOT NULL
     ORDER BY created_at DESC, id DESC LIMIT 1`,
      [address, currency, network, organisationId],
    ),
  );
  return result.rows[0];
}

/** The transfer's oldest deposit still awaiting its confirmations that brings at least `atLeast`. */
export async function findDetectedDepositOf(
  db: Queryable,
  organisationId: string,
  transferId: string,
  atLeast: string,
): Promise<DepositRow | undefined> {
  const result = await db.query<DepositRow>(
    prepared(
      `SELECT ${DEPOSIT_COLUMNS} FROM deposits
     WHERE transfer_id = $1 AND organisation_id = $2 AND status = 'detected' AND received_amount >= $3::numeric
     ORDER BY created_at, id LIMIT 1`,
      [transferId, organisationId, atLeast],
    ),
  );
  return result.rows[0];
}
