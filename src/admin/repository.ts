// SQL of the operator API: organisations, and what a key rotation reads and re-seals.
import pg from 'pg';
import type { Queryable } from '../db/pool.ts';
import type { SealedColumn } from '../platform/area.ts';

export interface OrganisationRow {
  id: string;
  name: string;
  created_at: Date;
}

export async function insertOrganisation(db: Queryable, id: string, name: string): Promise<OrganisationRow> {
  const result = await db.query<OrganisationRow>(
    'INSERT INTO organisations (id, name) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET name = organisations.name RETURNING *',
    [id, name],
  );
  return result.rows[0]!;
}

export async function findOrganisation(db: Queryable, id: string): Promise<OrganisationRow | undefined> {
  const result = await db.query<OrganisationRow>('SELECT * FROM organisations WHERE id = $1', [id]);
  return result.rows[0];
}

// Sealed values (D13) and client-secret hashes, for a key rotation. Table and column names come from the
// areas' declarations, never from a request.

export interface ClientHashesByKey {
  /** The key id a keyed hash names; `scrypt` for the unkeyed scheme. */
  key_id: string;
  count: number;
  /** The first 100 clients, by id. */
  client_ids: string[];
}

/** The clients that can still get a token, by the key their secret's hash names. */
export async function countClientHashesByKey(db: Queryable): Promise<ClientHashesByKey[]> {
  const result = await db.query<ClientHashesByKey>(
    `SELECT key_id, count(*)::int AS count, (array_agg(client_id ORDER BY client_id))[1:100] AS client_ids
       FROM (SELECT client_id,
                    CASE WHEN split_part(secret_hash, '$', 1) = 'hmac-sha256' THEN split_part(secret_hash, '$', 2)
                         ELSE 'scrypt' END AS key_id
               FROM api_clients WHERE deleted_at IS NULL) AS clients
      GROUP BY key_id ORDER BY key_id`,
  );
  return result.rows;
}

export interface SealedValue {
  /** The row's primary key, column by column as SealedColumn.key names them. */
  key: string[];
  sealed: string;
}

/** Up to `limit` values of `column`, in primary-key order after the row `after` (from the start when null). */
export async function sealedValuesAfter(
  db: Queryable,
  column: SealedColumn,
  after: readonly string[] | null,
  limit: number,
): Promise<SealedValue[]> {
  const value = pg.escapeIdentifier(column.column);
  const keys = column.key.map((name) => pg.escapeIdentifier(name)).join(', ');
  const afterRow = column.key.map((_, index) => `$${index + 2}`).join(', ');
  const result = await db.query<Record<string, string>>(
    `SELECT ${column.key.map((name, index) => `${pg.escapeIdentifier(name)} AS k${index}`).join(', ')}, ${value} AS sealed
       FROM ${pg.escapeIdentifier(column.table)}
      WHERE ${value} IS NOT NULL ${after === null ? '' : `AND (${keys}) > (${afterRow})`}
      ORDER BY ${keys} LIMIT $1::int`,
    [limit, ...(after ?? [])],
  );
  return result.rows.map((row) => ({
    key: column.key.map((_, index) => row[`k${index}`]!),
    sealed: row.sealed!,
  }));
}

/** Replaces a sealed value unless it changed since it was read; true when it was replaced. */
export async function replaceSealedValue(
  db: Queryable,
  column: SealedColumn,
  row: SealedValue,
  resealed: string,
): Promise<boolean> {
  const value = pg.escapeIdentifier(column.column);
  const where = column.key.map((name, index) => `${pg.escapeIdentifier(name)} = $${index + 3}`);
  const result = await db.query(
    `UPDATE ${pg.escapeIdentifier(column.table)} SET ${value} = $1 WHERE ${value} = $2 AND ${where.join(' AND ')}`,
    [resealed, row.sealed, ...row.key],
  );
  return result.rowCount === 1;
}
