// SQL of the auth module: API clients and signing keys.
import type { Queryable } from '../db/pool.ts';

export interface ClientRow {
  client_id: string;
  organisation_id: string;
  realm: string;
  name: string | null;
  secret_hash: string;
  scopes: string[];
  created_at: Date;
  deleted_at: Date | null;
}

// Named (prepared once per connection): every token request reads its client, and for this
// primary-key look-up PostgreSQL spends longer parsing and planning than running it. The columns are
// named so that a column added by a migration cannot change what a prepared statement returns.
const FIND_CLIENT = {
  name: 'api_clients.find',
  text:
    'SELECT client_id, organisation_id, realm, name, secret_hash, scopes, created_at, deleted_at ' +
    'FROM api_clients WHERE client_id = $1',
};

/** NUL cannot be stored in text (PostgreSQL refuses it as a parameter): an id holding it matches nothing. */
const storable = (clientId: string): boolean => !clientId.includes('\u0000');

export async function findClient(db: Queryable, clientId: string): Promise<ClientRow | undefined> {
  if (!storable(clientId)) return undefined;
  const result = await db.query<ClientRow>({ ...FIND_CLIENT, values: [clientId] });
  return result.rows[0];
}

export async function insertClient(
  db: Queryable,
  client: Pick<ClientRow, 'client_id' | 'organisation_id' | 'realm' | 'name' | 'secret_hash' | 'scopes'>,
): Promise<ClientRow> {
  const result = await db.query<ClientRow>(
    `INSERT INTO api_clients (client_id, organisation_id, realm, name, secret_hash, scopes)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [client.client_id, client.organisation_id, client.realm, client.name, client.secret_hash, client.scopes],
  );
  return result.rows[0]!;
}

/**
 * Replaces a client's secret hash if it is still `from`: of several processes re-hashing the same
 * client at once, one writes and the others change nothing. True when this call wrote.
 */
export async function replaceSecretHash(
  db: Queryable,
  clientId: string,
  from: string,
  to: string,
): Promise<boolean> {
  const result = await db.query(
    'UPDATE api_clients SET secret_hash = $3 WHERE client_id = $1 AND secret_hash = $2',
    [clientId, from, to],
  );
  return result.rowCount === 1;
}

/** Marks a client deleted; returns the row, or undefined when no such client exists. */
export async function markClientDeleted(db: Queryable, clientId: string): Promise<ClientRow | undefined> {
  if (!storable(clientId)) return undefined;
  const result = await db.query<ClientRow>(
    'UPDATE api_clients SET deleted_at = COALESCE(deleted_at, now()) WHERE client_id = $1 RETURNING *',
    [clientId],
  );
  return result.rows[0];
}

export async function setClientScopes(db: Queryable, clientId: string, scopes: string[]): Promise<void> {
  await db.query('UPDATE api_clients SET scopes = $2 WHERE client_id = $1', [clientId, scopes]);
}

export interface SigningKeyRow {
  kid: string;
  realm: string;
  public_jwk: Record<string, unknown>;
  private_key_sealed: string;
  created_at: Date;
  retired_at: Date | null;
}

/** Keys still published: the signing one and retired ones whose tokens may not have expired yet. */
export async function listPublishedKeys(
  db: Queryable,
  realm: string,
  retiredSince: Date,
): Promise<SigningKeyRow[]> {
  const result = await db.query<SigningKeyRow>(
    `SELECT * FROM signing_keys WHERE realm = $1 AND (retired_at IS NULL OR retired_at > $2)
     ORDER BY created_at DESC`,
    [realm, retiredSince],
  );
  return result.rows;
}

export async function findSigningKey(db: Queryable, realm: string): Promise<SigningKeyRow | undefined> {
  const result = await db.query<SigningKeyRow>(
    'SELECT * FROM signing_keys WHERE realm = $1 AND retired_at IS NULL ORDER BY created_at DESC LIMIT 1',
    [realm],
  );
  return result.rows[0];
}

export async function insertSigningKey(
  db: Queryable,
  key: Pick<SigningKeyRow, 'kid' | 'realm' | 'public_jwk' | 'private_key_sealed'>,
): Promise<void> {
  await db.query(
    'INSERT INTO signing_keys (kid, realm, public_jwk, private_key_sealed) VALUES ($1, $2, $3, $4)',
    [key.kid, key.realm, key.public_jwk, key.private_key_sealed],
  );
}

export async function retireSigningKeys(db: Queryable, realm: string): Promise<void> {
  await db.query('UPDATE signing_keys SET retired_at = now() WHERE realm = $1 AND retired_at IS NULL', [
    realm,
  ]);
}

/** Serialises key creation across processes starting together. */
export async function lockRealmKeys(db: Queryable, realm: string): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtext('signing_keys:' || $1))", [realm]);
}
