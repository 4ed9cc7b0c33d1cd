// SQL of corridors (D16). Route uniqueness (corridors_route_uniq) and min <= max are also enforced by the
// database, so concurrent operator requests cannot get past them. Numeric columns come back as text.

import { pageWithTotal } from '../db/paging.ts';
import type { Queryable } from '../db/pool.ts';
import type { CorridorSortKey, CorridorStatus, PayoutMethod } from './schemas.ts';

export interface CorridorRow {
  id: string;
  source_currency: string;
  destination_country: string;
  destination_currency: string;
  payout_method: PayoutMethod;
  min_amount: string;
  max_amount: string;
  fee_fixed: string;
  fee_percent: string;
  fx_markup_percent: string;
  estimated_delivery_seconds: number;
  status: CorridorStatus;
  created_at: Date;
  updated_at: Date;
}

export const ROUTE_UNIQUE_CONSTRAINT = 'corridors_route_uniq';

const COLUMNS =
  'id, source_currency, destination_country, destination_currency, payout_method, min_amount, max_amount, ' +
  'fee_fixed, fee_percent, fx_markup_percent, estimated_delivery_seconds, status, created_at, updated_at';

export type NewCorridor = Omit<CorridorRow, 'created_at' | 'updated_at'>;

const INSERT = `INSERT INTO corridors (${COLUMNS.replace(', created_at, updated_at', '')})
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`;

const insertValues = (row: NewCorridor): unknown[] => [
  row.id,
  row.source_currency,
  row.destination_country,
  row.destination_currency,
  row.payout_method,
  row.min_amount,
  row.max_amount,
  row.fee_fixed,
  row.fee_percent,
  row.fx_markup_percent,
  row.estimated_delivery_seconds,
  row.status,
];

export async function insertCorridor(db: Queryable, row: NewCorridor): Promise<CorridorRow> {
  const result = await db.query<CorridorRow>(`${INSERT} RETURNING ${COLUMNS}`, insertValues(row));
  return result.rows[0]!;
}

/** Inserts unless the id or the route exists (sandbox seeding): true when inserted. */
export async function insertCorridorIfAbsent(db: Queryable, row: NewCorridor): Promise<boolean> {
  const result = await db.query(`${INSERT} ON CONFLICT DO NOTHING`, insertValues(row));
  return result.rowCount === 1;
}

const FIND = { name: 'corridors.find', text: `SELECT ${COLUMNS} FROM corridors WHERE id = $1` };
const FIND_FOR_UPDATE = { name: 'corridors.find-for-update', text: `${FIND.text} FOR NO KEY UPDATE` };

export async function findCorridor(
  db: Queryable,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<CorridorRow | undefined> {
  const statement = options.forUpdate ? FIND_FOR_UPDATE : FIND;
  const result = await db.query<CorridorRow>({ ...statement, values: [id] });
  return result.rows[0];
}

export interface CorridorChanges {
  min_amount?: string;
  max_amount?: string;
  fee_fixed?: string;
  fee_percent?: string;
  fx_markup_percent?: string;
  estimated_delivery_seconds?: number;
  status?: CorridorStatus;
}

const CHANGEABLE: readonly (keyof CorridorChanges)[] = [
  'min_amount',
  'max_amount',
  'fee_fixed',
  'fee_percent',
  'fx_markup_percent',
  'estimated_delivery_seconds',
  'status',
];

/** Applies `changes` (column names from a fixed list) and bumps updated_at. */
export async function updateCorridor(
  db: Queryable,
  id: string,
  changes: CorridorChanges,
): Promise<CorridorRow> {
  const assignments: string[] = ['updated_at = now()'];
  const values: unknown[] = [id];
  for (const column of CHANGEABLE) {
    if (changes[column] === undefined) continue;
    values.push(changes[column]);
    assignments.push(`${column} = $${values.length}`);
  }
  const result = await db.query<CorridorRow>(
    `UPDATE corridors SET ${assignments.join(', ')} WHERE id = $1 RETURNING ${COLUMNS}`,
    values,
  );
  return result.rows[0]!;
}

export interface CorridorSearch {
  sourceCurrencies?: string[];
  destinationCountries?: string[];
  destinationCurrencies?: string[];
  payoutMethods?: string[];
  statuses?: string[];
  /** Upper-case codes; each must equal the source currency, destination country or destination currency. */
  codes?: string[];
  sortBy: CorridorSortKey;
  sortDirection: 'asc' | 'desc';
  limit: number;
  offset: number;
}

const SORT_COLUMNS: Record<CorridorSortKey, string> = {
  id: 'id',
  created_at: 'created_at',
  updated_at: 'updated_at',
};

export async function searchCorridors(
  db: Queryable,
  query: CorridorSearch,
): Promise<{ rows: CorridorRow[]; total: number }> {
  const where: string[] = ['true'];
  const values: unknown[] = [];
  const add = (condition: (placeholder: string) => string, value: unknown) => {
    values.push(value);
    where.push(condition(`$${values.length}`));
  };
  if (query.sourceCurrencies) add((p) => `source_currency = ANY(${p}::text[])`, query.sourceCurrencies);
  if (query.destinationCountries) {
    add((p) => `destination_country = ANY(${p}::text[])`, query.destinationCountries);
  }
  if (query.destinationCurrencies) {
    add((p) => `destination_currency = ANY(${p}::text[])`, query.destinationCurrencies);
  }
  if (query.payoutMethods) add((p) => `payout_method = ANY(${p}::text[])`, query.payoutMethods);
  if (query.statuses) add((p) => `status = ANY(${p}::text[])`, query.statuses);
  for (const code of query.codes ?? []) {
    add((p) => `${p} IN (source_currency, destination_country, destination_currency)`, code);
  }
  const direction = query.sortDirection === 'asc' ? 'ASC' : 'DESC';
  const sort = SORT_COLUMNS[query.sortBy];
  values.push(query.limit, query.offset);
  return pageWithTotal<CorridorRow>(db, {
    columns: COLUMNS,
    from: 'corridors',
    condition: where.join(' AND '),
    orderBy: sort === 'id' ? `id ${direction}` : `${sort} ${direction}, id ${direction}`,
    limit: `$${values.length - 1}`,
    offset: `$${values.length}`,
    values,
  });
}

/** The source and destination currencies of active corridors (D15 currencies in use). */
export async function activeCurrencies(db: Queryable): Promise<string[]> {
  const result = await db.query<{ code: string }>({
    name: 'corridors.active-currencies',
    text: `SELECT source_currency AS code FROM corridors WHERE status = 'active'
           UNION
           SELECT destination_currency FROM corridors WHERE status = 'active'`,
  });
  return result.rows.map((row) => row.code);
}

/** The currencies and payout methods active corridors pay to one country (beneficiary requirements, D19). */
export async function activeRoutesTo(
  db: Queryable,
  country: string,
): Promise<{ destination_currency: string; payout_method: PayoutMethod }[]> {
  const result = await db.query<{ destination_currency: string; payout_method: PayoutMethod }>({
    name: 'corridors.active-routes-to',
    text: `SELECT DISTINCT destination_currency, payout_method FROM corridors
           WHERE destination_country = $1 AND status = 'active'
           ORDER BY destination_currency, payout_method`,
    values: [country],
  });
  return result.rows;
}
