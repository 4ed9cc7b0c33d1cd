// SQL of beneficiaries (D19). The account is stored sealed (`account_sealed`, sealed and opened by the
// service with the D13 key); nothing here reads or writes an account identifier in clear.

import { pageWithTotal } from '../db/paging.ts';
import type { Queryable } from '../db/pool.ts';
import { prepared } from '../db/prepared.ts';
import { listFilters, searchOrder, updateById } from '../db/sql.ts';
import type { BeneficiaryFilters, BeneficiarySortKey, BeneficiaryStatus } from './schemas.ts';

export interface BeneficiaryRow {
  id: string;
  organisation_id: string;
  status: BeneficiaryStatus;
  destination_country: string;
  destination_currency: string;
  payout_method: 'bank_account' | 'mobile_wallet';
  entity_type: 'individual' | 'business';
  name: string;
  address: { line1: string; city: string; postal_code: string | null; country: string };
  email: string | null;
  date_of_birth: string | null;
  account_sealed: string;
  bank_id: string | null;
  bank_name: string | null;
  bank_bic: string | null;
  screening_id: string;
  external_id: string | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  /** When a sanctions review confirmed the current name as a match: never paid again, also once deleted. */
  blocked_at: Date | null;
}

export const EXTERNAL_ID_INDEX = 'beneficiaries_external_id_uniq';

const COLUMNS =
  'id, organisation_id, status, destination_country, destination_currency, payout_method, entity_type, name, ' +
  "address, email, to_char(date_of_birth, 'YYYY-MM-DD') AS date_of_birth, account_sealed, bank_id, bank_name, " +
  'bank_bic, screening_id, external_id, created_at, updated_at, deleted_at, blocked_at';

export type NewBeneficiary = Omit<BeneficiaryRow, 'created_at' | 'updated_at' | 'deleted_at' | 'blocked_at'>;

export async function insertBeneficiary(db: Queryable, row: NewBeneficiary): Promise<BeneficiaryRow> {
  const result = await db.query<BeneficiaryRow>(
    prepared(
      `INSERT INTO beneficiaries (id, organisation_id, status, destination_country, destination_currency,
       payout_method, entity_type, name, address, email, date_of_birth, account_sealed, bank_id, bank_name,
       bank_bic, screening_id, external_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
     RETURNING ${COLUMNS}`,
      [
        row.id,
        row.organisation_id,
        row.status,
        row.destination_country,
        row.destination_currency,
        row.payout_method,
        row.entity_type,
        row.name,
        JSON.stringify(row.address),
        row.email,
        row.date_of_birth,
        row.account_sealed,
        row.bank_id,
        row.bank_name,
        row.bank_bic,
        row.screening_id,
        row.external_id,
      ],
    ),
  );
  return result.rows[0]!;
}

const FIND = {
  name: 'beneficiaries.find',
  text: `SELECT ${COLUMNS} FROM beneficiaries WHERE id = $1 AND organisation_id = $2`,
};
const FIND_FOR_UPDATE = { name: 'beneficiaries.find-for-update', text: `${FIND.text} FOR NO KEY UPDATE` };

export async function findBeneficiary(
  db: Queryable,
  organisationId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<BeneficiaryRow | undefined> {
  const statement = options.forUpdate ? FIND_FOR_UPDATE : FIND;
  return (await db.query<BeneficiaryRow>({ ...statement, values: [id, organisationId] })).rows[0];
}

export async function findByExternalId(
  db: Queryable,
  organisationId: string,
  externalId: string,
): Promise<{ id: string } | undefined> {
  const result = await db.query<{ id: string }>(
    prepared('SELECT id FROM beneficiaries WHERE organisation_id = $1 AND external_id = $2', [
      organisationId,
      externalId,
    ]),
  );
  return result.rows[0];
}

/** What an update writes: every changeable column, as the service computed it. */
export interface BeneficiaryChanges {
  status: BeneficiaryStatus;
  name: string;
  address: BeneficiaryRow['address'];
  email: string | null;
  date_of_birth: string | null;
  account_sealed: string;
  bank_id: string | null;
  bank_name: string | null;
  bank_bic: string | null;
  screening_id: string;
}

export function updateBeneficiary(
  db: Queryable,
  id: string,
  changes: BeneficiaryChanges,
): Promise<BeneficiaryRow> {
  return updateById<BeneficiaryRow>(db, 'beneficiaries', COLUMNS, id, {
    ...changes,
    address: JSON.stringify(changes.address),
  });
}

export interface BeneficiarySearch {
  organisationId: string;
  /** Each a list of values of the column of that name (D4). Without `status`, deleted ones are left out. */
  filters: BeneficiaryFilters;
  /** Case-insensitive substring of the name. */
  search?: string;
  sortBy: BeneficiarySortKey;
  sortDirection: 'asc' | 'desc';
  limit: number;
  offset: number;
}

export async function searchBeneficiaries(
  db: Queryable,
  query: BeneficiarySearch,
): Promise<{ rows: BeneficiaryRow[]; total: number }> {
  const where = ['organisation_id = $1'];
  const values: unknown[] = [query.organisationId];
  listFilters(query.filters, values, where);
  if (!query.filters.status) where.push("status <> 'deleted'");
  if (query.search !== undefined) {
    values.push(query.search);
    where.push(`strpos(lower(name), lower($${values.length})) > 0`);
  }
  values.push(query.limit, query.offset);
  return pageWithTotal<BeneficiaryRow>(db, {
    columns: COLUMNS,
    from: 'beneficiaries',
    condition: where.join(' AND '),
    orderBy: searchOrder(query.sortBy, query.sortDirection),
    limit: `$${values.length - 1}`,
    offset: `$${values.length}`,
    values,
  });
}

/** A new status (review, delete); `deleted` also records deleted_at. */
export async function setStatus(
  db: Queryable,
  id: string,
  status: BeneficiaryStatus,
): Promise<BeneficiaryRow> {
  const result = await db.query<BeneficiaryRow>(
    prepared(
      `UPDATE beneficiaries
        SET status = $2, updated_at = now(),
            deleted_at = CASE WHEN $2 = 'deleted' THEN now() ELSE deleted_at END,
            blocked_at = CASE WHEN $2 = 'blocked' THEN now() ELSE blocked_at END
      WHERE id = $1
      RETURNING ${COLUMNS}`,
      [id, status],
    ),
  );
  return result.rows[0]!;
}

/**
 * Records a confirmed match of a beneficiary deleted while its name waited for the review: its status stays
 * `deleted`, and it is never paid (a transfer confirmed before the delete would otherwise go on, D19).
 */
export async function markBlocked(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE beneficiaries SET blocked_at = now() WHERE id = $1 AND blocked_at IS NULL', [id]);
}
