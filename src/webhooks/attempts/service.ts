// Reading delivery attempts (contract sections 2, 4, 7; D4). Attempts of another organisation are not
// found.
import type { AppDeps } from '../../platform/deps.ts';
import { notFound } from '../../platform/errors.ts';
import { parseIntegerId } from '../../platform/ids.ts';
import { type Page, refuseFreeText, toPage, toSearchQuery } from '../../platform/search.ts';
import { toIso } from '../../platform/time.ts';
import * as repo from './repository.ts';
import type { AttemptFilters, AttemptSortKey, AttemptSummaryView, AttemptView } from './schemas.ts';

/** The X-Webhook-Delivery-Id the attempt carried (header names are case-insensitive). */
function deliveryHeaderId(headers: Record<string, string>): string | null {
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === 'x-webhook-delivery-id') return value;
  }
  return null;
}

export function attemptSummaryView(row: repo.AttemptRow): AttemptSummaryView {
  const view: AttemptSummaryView = {
    id: row.id,
    webhook_event_id: row.event_id,
    webhook_subscription_id: row.subscription_id,
    delivery_id: deliveryHeaderId(row.request_headers),
    attempt_number: row.attempt_number,
    status: row.status,
    latency_ms: row.latency_ms,
    // Contract: set only while pending_retry (the table's CHECK guarantees it; this keeps it so).
    next_retry_at: row.status === 'pending_retry' ? toIso(row.next_retry_at) : null,
    failure_reason: row.failure_reason,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
  // Contract: absent, not null, when no response was received.
  if (row.http_status_code !== null) view.http_status_code = row.http_status_code;
  return view;
}

export function attemptView(row: repo.AttemptRow): AttemptView {
  return {
    ...attemptSummaryView(row),
    request_headers: row.request_headers,
    response_body_snippet: row.response_body_snippet,
  };
}

export async function getAttempt(
  deps: AppDeps,
  organisationId: string,
  idText: string,
): Promise<AttemptView> {
  const id = parseIntegerId(idText);
  const row = id === undefined ? undefined : await repo.findAttempt(deps.pool, organisationId, id.toString());
  if (!row) throw notFound('No delivery attempt matches the id');
  return attemptView(row);
}

export interface AttemptSearchInput {
  filters?: AttemptFilters;
  search?: string;
  page?: number;
  page_size?: number;
  sort_by?: string;
  sort_direction?: 'asc' | 'desc';
}

export async function searchAttempts(
  deps: AppDeps,
  organisationId: string,
  body: AttemptSearchInput | undefined,
): Promise<Page<AttemptSummaryView>> {
  refuseFreeText(body, 'Delivery attempts');
  const query = toSearchQuery<AttemptFilters, AttemptSortKey>(body);
  const { rows, total } = await repo.searchAttempts(deps.pool, {
    organisationId,
    filters: query.filters,
    sortBy: query.sortBy,
    sortDirection: query.sortDirection,
    limit: query.pageSize,
    offset: query.offset,
  });
  return toPage(query, rows.map(attemptSummaryView), total);
}
