// SQL of reading delivery attempts (contract section 4, D4). The delivery engine writes them.
import { pageWithTotal } from '../../db/paging.ts';
import type { Queryable } from '../../db/pool.ts';
import type { AttemptFilters, AttemptSortKey } from './schemas.ts';

export interface AttemptRow {
  id: number;
  delivery_id: number;
  event_id: number;
  subscription_id: string;
  organisation_id: string;
  attempt_number: number;
  status: 'success' | 'failed' | 'timeout' | 'pending_retry';
  http_status_code: number | null;
  latency_ms: number;
  request_headers: Record<string, string>;
  response_body_snippet: string;
  failure_reason: string | null;
  next_retry_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * The columns of AttemptRow, named: a search statement is prepared once per connection, and a prepared
 * `SELECT *` would fail ("cached plan must not change result type") once a migration adds a column.
 */
const ATTEMPT_COLUMNS =
  'id, delivery_id, event_id, subscription_id, organisation_id, attempt_number, status, http_status_code, ' +
  'latency_ms, request_headers, response_body_snippet, failure_reason, next_retry_at, created_at, updated_at';

export async function findAttempt(
  db: Queryable,
  organisationId: string,
  id: string,
): Promise<AttemptRow | undefined> {
  const result = await db.query<AttemptRow>(
    'SELECT * FROM webhook_delivery_attempts WHERE id = $1 AND organisation_id = $2',
    [id, organisationId],
  );
  return result.rows[0];
}

export interface AttemptSearch {
  organisationId: string;
  filters: AttemptFilters;
  sortBy: AttemptSortKey;
  sortDirection: 'asc' | 'desc';
  limit: number;
  offset: number;
}

const SORT_COLUMNS: Record<AttemptSortKey, string> = {
  id: 'id',
  created_at: 'created_at',
  updated_at: 'updated_at',
  attempt_number: 'attempt_number',
  latency_ms: 'latency_ms',
};

export async function searchAttempts(
  db: Queryable,
  query: AttemptSearch,
): Promise<{ rows: AttemptRow[]; total: number }> {
  const where = ['organisation_id = $1'];
  const values: unknown[] = [query.organisationId];
  const bind = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  const { filters } = query;
  if (filters.webhook_event_ids) where.push(`event_id = ANY(${bind(filters.webhook_event_ids)}::bigint[])`);
  if (filters.webhook_subscription_ids) {
    where.push(`subscription_id = ANY(${bind(filters.webhook_subscription_ids)}::uuid[])`);
  }
  if (filters.status) where.push(`status = ANY(${bind(filters.status)}::text[])`);
  const direction = query.sortDirection === 'asc' ? 'ASC' : 'DESC';
  return pageWithTotal<AttemptRow>(db, {
    columns: ATTEMPT_COLUMNS,
    from: 'webhook_delivery_attempts',
    condition: where.join(' AND '),
    orderBy: `${SORT_COLUMNS[query.sortBy]} ${direction}, id ${direction}`,
    limit: bind(query.limit),
    offset: bind(query.offset),
    values,
  });
}
