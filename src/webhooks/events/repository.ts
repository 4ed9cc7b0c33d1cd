// SQL of reading webhook events (contract section 4, D4). Writing them is the outbox's
// (publish-repository.ts).
import { pageWithTotal } from '../../db/paging.ts';
import type { Queryable } from '../../db/pool.ts';
import type { EventRow } from '../publish-repository.ts';
import type { EventFilters, EventSortKey } from './schemas.ts';

export async function findEvent(
  db: Queryable,
  organisationId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<EventRow | undefined> {
  const result = await db.query<EventRow>(
    `SELECT * FROM webhook_events WHERE id = $1 AND organisation_id = $2${options.forUpdate ? ' FOR NO KEY UPDATE' : ''}`,
    [id, organisationId],
  );
  return result.rows[0];
}

export interface EventSearch {
  organisationId: string;
  filters: EventFilters;
  search?: { text: string; id: string | undefined };
  sortBy: EventSortKey;
  sortDirection: 'asc' | 'desc';
  limit: number;
  offset: number;
}

const SORT_COLUMNS: Record<EventSortKey, string> = {
  id: 'id',
  created_at: 'created_at',
  updated_at: 'updated_at',
};

const TEXT_FILTERS = [
  'public_id',
  'status',
  'event_type_code',
  'source_object_type',
  'source_object_id',
  'idempotency_key',
] as const;

/** Search rows leave out the payload (read one event for it): pages stay small. */
const SUMMARY_COLUMNS =
  'id, public_id, organisation_id, event_type_code, status, source_object_type, source_object_id, ' +
  'idempotency_key, current_round, created_at, updated_at';

export async function searchEvents(
  db: Queryable,
  query: EventSearch,
): Promise<{ rows: Omit<EventRow, 'payload'>[]; total: number }> {
  const where = ['organisation_id = $1'];
  const values: unknown[] = [query.organisationId];
  const bind = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  // A one-value list is written as plain equality: the planner then walks the (organisation_id,
  // column, id) index in order and stops after one page, instead of sorting every match.
  const inList = (column: string, list: readonly unknown[], type: string): string =>
    list.length === 1 ? `${column} = ${bind(list[0])}::${type}` : `${column} = ANY(${bind(list)}::${type}[])`;
  if (query.filters.id) where.push(inList('id', query.filters.id, 'bigint'));
  for (const column of TEXT_FILTERS) {
    const list = query.filters[column];
    if (list) where.push(inList(column, list, 'text'));
  }
  if (query.search) {
    // D4: id exactly when the text is numeric; the other fields by case-insensitive substring.
    const text = bind(query.search.text);
    const alternatives = [
      `strpos(lower(public_id), lower(${text})) > 0`,
      `strpos(lower(idempotency_key), lower(${text})) > 0`,
      `strpos(lower(event_type_code), lower(${text})) > 0`,
    ];
    if (query.search.id !== undefined) alternatives.unshift(`id = ${bind(query.search.id)}::bigint`);
    where.push(`(${alternatives.join(' OR ')})`);
  }
  const direction = query.sortDirection === 'asc' ? 'ASC' : 'DESC';
  return pageWithTotal<Omit<EventRow, 'payload'>>(db, {
    columns: SUMMARY_COLUMNS,
    from: 'webhook_events',
    condition: where.join(' AND '),
    orderBy: `${SORT_COLUMNS[query.sortBy]} ${direction}, id ${direction}`,
    limit: bind(query.limit),
    offset: bind(query.offset),
    values,
  });
}
