// SQL of webhook subscriptions (contract section 2, D9). The 10-slot limit (trigger
// webhook_subscriptions_limit) and URL uniqueness (index webhook_subscriptions_url_uniq) are enforced
// by the database so that concurrent requests cannot get past them.
import type { Queryable } from '../../db/pool.ts';
import type { SubscriptionSortKey, SubscriptionStatus } from './schemas.ts';

export interface SubscriptionRow {
  id: string;
  organisation_id: string;
  endpoint_url: string;
  endpoint_url_normalized: string;
  event_type_codes: string[];
  max_retries: number;
  status: SubscriptionStatus;
  consecutive_failures: number;
  last_delivery_at: Date | null;
  signing_secret_sealed: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export const URL_UNIQUE_INDEX = 'webhook_subscriptions_url_uniq';
export const LIMIT_HINT = 'subscription_limit';

/**
 * Locks the organisation row so that creates of one organisation serialise (the limit trigger takes the
 * same lock). NO KEY UPDATE, not UPDATE: it does not conflict with the KEY SHARE locks that inserts
 * referencing the organisation take, so publishing events is never blocked by a create.
 */
export async function lockOrganisation(db: Queryable, organisationId: string): Promise<void> {
  await db.query('SELECT 1 FROM organisations WHERE id = $1 FOR NO KEY UPDATE', [organisationId]);
}

export async function findByNormalizedUrl(
  db: Queryable,
  organisationId: string,
  normalizedUrl: string,
): Promise<SubscriptionRow | undefined> {
  const result = await db.query<SubscriptionRow>(
    `SELECT * FROM webhook_subscriptions
     WHERE organisation_id = $1 AND endpoint_url_normalized = $2 AND status <> 'deleted'`,
    [organisationId, normalizedUrl],
  );
  return result.rows[0];
}

export async function insertSubscription(
  db: Queryable,
  row: Pick<
    SubscriptionRow,
    | 'id'
    | 'organisation_id'
    | 'endpoint_url'
    | 'endpoint_url_normalized'
    | 'event_type_codes'
    | 'max_retries'
    | 'signing_secret_sealed'
  >,
): Promise<SubscriptionRow> {
  const result = await db.query<SubscriptionRow>(
    `INSERT INTO webhook_subscriptions
       (id, organisation_id, endpoint_url, endpoint_url_normalized, event_type_codes, max_retries, status,
        signing_secret_sealed)
     VALUES ($1, $2, $3, $4, $5, $6, 'pending_verification', $7)
     RETURNING *`,
    [
      row.id,
      row.organisation_id,
      row.endpoint_url,
      row.endpoint_url_normalized,
      row.event_type_codes,
      row.max_retries,
      row.signing_secret_sealed,
    ],
  );
  return result.rows[0]!;
}

/** Every column of SubscriptionRow, named: a column added later does not change what a prepared read returns. */
const SUBSCRIPTION_COLUMNS =
  'id, organisation_id, endpoint_url, endpoint_url_normalized, event_type_codes, max_retries, status, ' +
  'consecutive_failures, last_delivery_at, signing_secret_sealed, created_at, updated_at, deleted_at';

// Named (prepared once per connection): PostgreSQL then skips parsing and planning on every later read.
// For this primary-key look-up planning took longer than running it (0.08 ms against 0.03 ms, issue 6).
const FIND_SUBSCRIPTION = {
  name: 'subscriptions.find',
  text: `SELECT ${SUBSCRIPTION_COLUMNS} FROM webhook_subscriptions WHERE id = $1 AND organisation_id = $2`,
};
const FIND_SUBSCRIPTION_FOR_UPDATE = {
  name: 'subscriptions.find-for-update',
  text: `${FIND_SUBSCRIPTION.text} FOR NO KEY UPDATE`,
};

/** One subscription of the organisation, deleted ones included (they stay readable by id). */
export async function findSubscription(
  db: Queryable,
  organisationId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<SubscriptionRow | undefined> {
  const statement = options.forUpdate ? FIND_SUBSCRIPTION_FOR_UPDATE : FIND_SUBSCRIPTION;
  const result = await db.query<SubscriptionRow>({ ...statement, values: [id, organisationId] });
  return result.rows[0];
}

export interface SubscriptionChanges {
  endpoint_url?: string;
  endpoint_url_normalized?: string;
  event_type_codes?: string[];
  max_retries?: number;
  status?: SubscriptionStatus;
  consecutive_failures?: number;
  signing_secret_sealed?: string;
}

const CHANGEABLE: readonly (keyof SubscriptionChanges)[] = [
  'endpoint_url',
  'endpoint_url_normalized',
  'event_type_codes',
  'max_retries',
  'status',
  'consecutive_failures',
  'signing_secret_sealed',
];

/** Applies `changes` (column names from a fixed list) and bumps updated_at. */
export async function updateSubscription(
  db: Queryable,
  id: string,
  changes: SubscriptionChanges,
): Promise<SubscriptionRow> {
  const assignments: string[] = ['updated_at = now()'];
  const values: unknown[] = [id];
  for (const column of CHANGEABLE) {
    if (changes[column] === undefined) continue;
    values.push(changes[column]);
    assignments.push(`${column} = $${values.length}`);
  }
  if (changes.status === 'deleted') assignments.push('deleted_at = now()');
  const result = await db.query<SubscriptionRow>(
    `UPDATE webhook_subscriptions SET ${assignments.join(', ')} WHERE id = $1 RETURNING *`,
    values,
  );
  return result.rows[0]!;
}

export interface SubscriptionSearch {
  organisationId: string;
  statuses?: string[];
  eventTypeCodes?: string[];
  normalizedUrls?: string[];
  search?: string;
  sortBy: SubscriptionSortKey;
  sortDirection: 'asc' | 'desc';
  limit: number;
  offset: number;
}

const SORT_COLUMNS: Record<SubscriptionSortKey, string> = {
  id: 'id',
  created_at: 'created_at',
  updated_at: 'updated_at',
};

/** A page of non-deleted subscriptions (D4: deleted ones never appear) and the total that match. */
export async function searchSubscriptions(
  db: Queryable,
  query: SubscriptionSearch,
): Promise<{ rows: SubscriptionRow[]; total: number }> {
  const where = ['organisation_id = $1', "status <> 'deleted'"];
  const values: unknown[] = [query.organisationId];
  const add = (condition: (placeholder: string) => string, value: unknown) => {
    values.push(value);
    where.push(condition(`$${values.length}`));
  };
  if (query.statuses) add((p) => `status = ANY(${p}::text[])`, query.statuses);
  if (query.eventTypeCodes) add((p) => `event_type_codes && ${p}::text[]`, query.eventTypeCodes);
  if (query.normalizedUrls) add((p) => `endpoint_url_normalized = ANY(${p}::text[])`, query.normalizedUrls);
  if (query.search !== undefined) add((p) => `strpos(lower(endpoint_url), lower(${p})) > 0`, query.search);
  const direction = query.sortDirection === 'asc' ? 'ASC' : 'DESC';
  const sort = SORT_COLUMNS[query.sortBy];
  const condition = where.join(' AND ');
  const page = await db.query<SubscriptionRow>(
    `SELECT * FROM webhook_subscriptions WHERE ${condition}
     ORDER BY ${sort} ${direction}, id ${direction}
     LIMIT $${values.length + 1} OFFSET $${values.length + 2}`,
    [...values, query.limit, query.offset],
  );
  const count = await db.query<{ total: number }>(
    `SELECT count(*) AS total FROM webhook_subscriptions WHERE ${condition}`,
    values,
  );
  return { rows: page.rows, total: count.rows[0]?.total ?? 0 };
}
