// SQL of crypto deposit addresses and the account keys' index sequences (D22).
import { pageWithTotal } from '../db/paging.ts';
import type { Queryable } from '../db/pool.ts';
import type { DepositAddressStatus } from './schemas.ts';

export const EXTERNAL_ID_UNIQUE_INDEX = 'crypto_deposit_addresses_external_id_uniq';

export interface DepositAddressRow {
  id: string;
  organisation_id: string;
  network: string;
  family: string;
  asset: string;
  address: string;
  derivation_index: number;
  derivation_path: string;
  status: DepositAddressStatus;
  label: string | null;
  external_id: string | null;
  created_at: Date;
  updated_at: Date;
  disabled_at: Date | null;
}

const COLUMNS =
  'id, organisation_id, network, family, asset, address, derivation_index, derivation_path, status, label, ' +
  'external_id, created_at, updated_at, disabled_at';

/**
 * Takes the key's next index: one statement that creates the key's row on first use or increments it.
 * The row stays locked until the caller's transaction ends, so concurrent creates for one key (in any
 * process) each get the next index in turn, and a rollback gives the index back.
 */
export async function takeNextIndex(
  db: Queryable,
  family: string,
  canonicalKey: string,
  accountPath: string,
): Promise<{ keyId: number; index: number }> {
  const result = await db.query<{ id: number; index: number }>({
    name: 'crypto.take_index',
    text: `INSERT INTO crypto_account_keys (family, canonical_key, account_path, next_index)
           VALUES ($1, $2, $3, 1)
           ON CONFLICT (family, canonical_key)
             DO UPDATE SET next_index = crypto_account_keys.next_index + 1, updated_at = now()
           RETURNING id, (next_index - 1)::int AS index`,
    values: [family, canonicalKey, accountPath],
  });
  const row = result.rows[0]!;
  return { keyId: row.id, index: row.index };
}

/** The next index of each key that has handed one out, by canonical key. */
export async function nextIndexes(db: Queryable): Promise<Map<string, number>> {
  const result = await db.query<{ family: string; canonical_key: string; next_index: number }>(
    'SELECT family, canonical_key, next_index FROM crypto_account_keys',
  );
  return new Map(result.rows.map((row) => [`${row.family}:${row.canonical_key}`, row.next_index]));
}

export interface NewDepositAddress {
  id: string;
  organisationId: string;
  network: string;
  family: string;
  asset: string;
  address: string;
  addressLookup: string;
  accountKeyId: number;
  derivationIndex: number;
  derivationPath: string;
  label: string | null;
  externalId: string | null;
}

export async function insertDepositAddress(
  db: Queryable,
  row: NewDepositAddress,
): Promise<DepositAddressRow> {
  const result = await db.query<DepositAddressRow>({
    name: 'crypto.insert_address',
    text: `INSERT INTO crypto_deposit_addresses
             (id, organisation_id, network, family, asset, address, address_lookup, account_key_id,
              derivation_index, derivation_path, label, external_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
           RETURNING ${COLUMNS}`,
    values: [
      row.id,
      row.organisationId,
      row.network,
      row.family,
      row.asset,
      row.address,
      row.addressLookup,
      row.accountKeyId,
      row.derivationIndex,
      row.derivationPath,
      row.label,
      row.externalId,
    ],
  });
  return result.rows[0]!;
}

const FIND = {
  name: 'crypto.find_address',
  text: `SELECT ${COLUMNS} FROM crypto_deposit_addresses WHERE id = $1 AND organisation_id = $2`,
};
const FIND_FOR_UPDATE = {
  name: 'crypto.find_address_for_update',
  text: `${FIND.text} FOR NO KEY UPDATE`,
};

export async function findDepositAddress(
  db: Queryable,
  organisationId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<DepositAddressRow | undefined> {
  const statement = options.forUpdate ? FIND_FOR_UPDATE : FIND;
  const result = await db.query<DepositAddressRow>({ ...statement, values: [id, organisationId] });
  return result.rows[0];
}

export async function findByExternalId(
  db: Queryable,
  organisationId: string,
  externalId: string,
): Promise<DepositAddressRow | undefined> {
  const result = await db.query<DepositAddressRow>({
    name: 'crypto.find_by_external_id',
    text: `SELECT ${COLUMNS} FROM crypto_deposit_addresses WHERE organisation_id = $1 AND external_id = $2`,
    values: [organisationId, externalId],
  });
  return result.rows[0];
}

/** The record of an address of a key family, whichever organisation holds it. */
export async function findByLookup(
  db: Queryable,
  family: string,
  addressLookup: string,
): Promise<DepositAddressRow | undefined> {
  const result = await db.query<DepositAddressRow>({
    name: 'crypto.find_by_lookup',
    text: `SELECT ${COLUMNS} FROM crypto_deposit_addresses WHERE family = $1 AND address_lookup = $2`,
    values: [family, addressLookup],
  });
  return result.rows[0];
}

export async function disableDepositAddress(db: Queryable, id: string): Promise<DepositAddressRow> {
  const result = await db.query<DepositAddressRow>({
    name: 'crypto.disable_address',
    text: `UPDATE crypto_deposit_addresses
           SET status = 'disabled', disabled_at = now(), updated_at = now()
           WHERE id = $1 RETURNING ${COLUMNS}`,
    values: [id],
  });
  return result.rows[0]!;
}

export interface DepositAddressFilters {
  network?: string[];
  asset?: string[];
  status?: string[];
  external_id?: string[];
}

const SORT_COLUMNS: Record<string, string> = { id: 'id', created_at: 'created_at', updated_at: 'updated_at' };

/** A page of the organisation's addresses and the total that match (D4). */
export async function searchDepositAddresses(
  db: Queryable,
  organisationId: string,
  filters: DepositAddressFilters,
  search: string | undefined,
  sortBy: string,
  direction: 'asc' | 'desc',
  limit: number,
  offset: number,
): Promise<{ rows: DepositAddressRow[]; total: number }> {
  const values: unknown[] = [organisationId];
  const conditions = ['organisation_id = $1'];
  const add = (column: string, list: string[] | undefined) => {
    if (!list) return;
    values.push(list);
    conditions.push(`${column} = ANY($${values.length}::text[])`);
  };
  add('network', filters.network);
  add('asset', filters.asset);
  add('status', filters.status);
  add('external_id', filters.external_id);
  if (search !== undefined) {
    // A substring of the address (any case: EVM and bech32 addresses are case-insensitive) or of the label.
    values.push(search.toLowerCase());
    const p = `$${values.length}`;
    conditions.push(`(strpos(lower(address), ${p}) > 0 OR strpos(lower(coalesce(label, '')), ${p}) > 0)`);
  }
  values.push(limit, offset);
  const column = SORT_COLUMNS[sortBy] ?? 'id';
  const dir = direction === 'asc' ? 'ASC' : 'DESC';
  return pageWithTotal<DepositAddressRow>(db, {
    columns: COLUMNS,
    from: 'crypto_deposit_addresses',
    condition: conditions.join(' AND '),
    orderBy: column === 'id' ? `id ${dir}` : `${column} ${dir}, id ${dir}`,
    limit: `$${values.length - 1}`,
    offset: `$${values.length}`,
    values,
  });
}
