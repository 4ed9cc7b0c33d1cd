// SQL of idempotency keys (D14).
import type { Queryable } from '../db/pool.ts';

export interface IdempotencyRow {
  fingerprint: string;
  state: 'running' | 'completed';
  owner: string | null;
  locked_until: Date | null;
  committed_at: Date | null;
  response_status: number | null;
  response_body: string | null;
}

export interface Claim {
  organisationId: string;
  key: string;
  fingerprint: string;
  method: string;
  path: string;
  owner: string;
  leaseMs: number;
  retentionMs: number;
}

/**
 * Takes the key for this request, or returns undefined when another request has it. A key is taken when
 * it is new, when it expired, or when the request that held it ran out of its lease before its
 * operation committed (its process died): with the same fingerprint only, since another body is a reuse.
 * The primary key decides between concurrent requests, in every process at once.
 */
export async function claimKey(db: Queryable, claim: Claim): Promise<boolean> {
  const result = await db.query({
    name: 'idempotency.claim',
    text: `INSERT INTO idempotency_keys AS k
             (organisation_id, key, fingerprint, method, path, state, owner, locked_until, expires_at)
           VALUES ($1, $2, $3, $4, $5, 'running', $6,
                   now() + make_interval(secs => $7::double precision / 1000),
                   now() + make_interval(secs => $8::double precision / 1000))
           ON CONFLICT (organisation_id, key) DO UPDATE SET
             fingerprint = EXCLUDED.fingerprint, method = EXCLUDED.method, path = EXCLUDED.path,
             state = 'running', owner = EXCLUDED.owner, locked_until = EXCLUDED.locked_until,
             committed_at = NULL, response_status = NULL, response_body = NULL,
             created_at = now(), expires_at = EXCLUDED.expires_at
           WHERE k.expires_at <= now()
              OR (k.state = 'running' AND k.committed_at IS NULL AND k.locked_until <= now()
                  AND k.fingerprint = EXCLUDED.fingerprint)
           RETURNING 1`,
    values: [
      claim.organisationId,
      claim.key,
      claim.fingerprint,
      claim.method,
      claim.path,
      claim.owner,
      claim.leaseMs,
      claim.retentionMs,
    ],
  });
  return result.rowCount === 1;
}

export async function findKey(
  db: Queryable,
  organisationId: string,
  key: string,
): Promise<IdempotencyRow | undefined> {
  const result = await db.query<IdempotencyRow>({
    name: 'idempotency.find',
    text: `SELECT fingerprint, state, owner, locked_until, committed_at, response_status, response_body
           FROM idempotency_keys WHERE organisation_id = $1 AND key = $2 AND expires_at > now()`,
    values: [organisationId, key],
  });
  return result.rows[0];
}

/** Inside the operation's transaction: false when this request no longer owns the key. */
export async function markCommitted(
  db: Queryable,
  organisationId: string,
  key: string,
  owner: string,
): Promise<boolean> {
  const result = await db.query({
    name: 'idempotency.committed',
    text: `UPDATE idempotency_keys SET committed_at = COALESCE(committed_at, now())
           WHERE organisation_id = $1 AND key = $2 AND owner = $3 AND state = 'running'`,
    values: [organisationId, key, owner],
  });
  return result.rowCount === 1;
}

export async function storeResponse(
  db: Queryable,
  organisationId: string,
  key: string,
  owner: string,
  status: number,
  body: string,
): Promise<void> {
  await db.query({
    name: 'idempotency.store',
    text: `UPDATE idempotency_keys
           SET state = 'completed', response_status = $4, response_body = $5, owner = NULL, locked_until = NULL
           WHERE organisation_id = $1 AND key = $2 AND owner = $3`,
    values: [organisationId, key, owner, status, body],
  });
}

/** Frees a key whose request failed before its operation took effect: the same key may be retried. */
export async function releaseKey(
  db: Queryable,
  organisationId: string,
  key: string,
  owner: string,
): Promise<void> {
  await db.query({
    name: 'idempotency.release',
    text: `DELETE FROM idempotency_keys
           WHERE organisation_id = $1 AND key = $2 AND owner = $3 AND committed_at IS NULL`,
    values: [organisationId, key, owner],
  });
}

/** Deletes up to `limit` expired keys; returns how many. */
export async function purgeExpired(db: Queryable, limit: number): Promise<number> {
  const result = await db.query(
    `DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
       SELECT ctid FROM idempotency_keys WHERE expires_at <= now() ORDER BY expires_at LIMIT $1))`,
    [limit],
  );
  return result.rowCount ?? 0;
}
