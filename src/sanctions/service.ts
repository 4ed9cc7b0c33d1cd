// Screening rules (D18, D14): a screening matches one name against every list, records the hits, and
// publishes `screening.completed` in the same transaction. Only the operator reviews a potential match
// (`screening.resolved`); each area's onScreeningReviewed hook then moves what waited on it, in the
// review's transaction. Other areas screen their resources with `screen()` inside their own transaction.
import {
  LOCK_ORDER_RETRIES,
  PG_UNIQUE_VIOLATION,
  type PoolClient,
  pgConstraint,
  pgErrorCode,
  type Queryable,
  withTransaction,
} from '../db/pool.ts';
import type { GaugeGroup, ReviewedScreening } from '../platform/area.ts';
import type { AppDeps } from '../platform/deps.ts';
import { type AppError, conflict, invalidState, notFound, validationFailed } from '../platform/errors.ts';
import { isPublicId, newPublicId } from '../platform/ids.ts';
import { type Page, toPage, toSearchQuery } from '../platform/search.ts';
import { toIso } from '../platform/time.ts';
import { publishResourceEvent } from '../webhooks/publish.ts';
import { isCountryCode } from './formats/countries.ts';
import { isCalendarDate } from './formats/dates.ts';
import { type Hit, MAX_HITS, type MatchQuery } from './matching/engine.ts';
import { currentIndex } from './matching/index-cache.ts';
import { normaliseName } from './matching/normalise.ts';
import { sanctionsMetrics } from './metrics.ts';
import * as repo from './repository.ts';
import { withMagicHits } from './sandbox.ts';
import type {
  CreateScreeningInput,
  MatchStatus,
  PendingScreeningView,
  ReviewDecision,
  ScreeningFilters,
  ScreeningSearchInput,
  ScreeningSortKey,
  ScreeningView,
} from './schemas.ts';

export const SCREENING_PREFIX = 'scr';
const RESOURCE = 'screening';

export function screeningView(row: repo.ScreeningRow): ScreeningView {
  return {
    id: row.id,
    entity_type: row.entity_type,
    name: row.name,
    date_of_birth: row.date_of_birth,
    country: row.country,
    match_status: row.match_status,
    hits: row.hits,
    threshold: row.threshold,
    lists_version: row.lists_version,
    source_object_type: row.source_object_type,
    source_object_id: row.source_object_id,
    external_id: row.external_id,
    reviewed_at: toIso(row.reviewed_at),
    review_note: row.review_note,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

const screeningNotFound = (): AppError => notFound('No screening matches the id');
const duplicateExternalId = (): AppError =>
  conflict('The organisation already has a screening with this external_id');

/** What to screen; the same shape as the create body. */
export type ScreeningInput = CreateScreeningInput;

/** The resource of another area that asks for a screening (D14 `source_object_type` / `_id`). */
export interface ScreeningSource {
  type: string;
  id: string;
}

/** The checks the schema cannot make (422 naming the field). */
export function checkScreeningInput(input: ScreeningInput): void {
  if (normaliseName(input.name, input.entity_type === 'organisation').length === 0) {
    throw validationFailed('name', 'name must contain letters or digits');
  }
  if (input.date_of_birth !== undefined) {
    if (input.entity_type !== 'individual') {
      throw validationFailed('date_of_birth', 'date_of_birth is only for entity_type individual');
    }
    const [year, month, day] = input.date_of_birth.split('-').map(Number) as [number, number, number];
    if (!isCalendarDate(year, month, day) || year < 1850) {
      throw validationFailed('date_of_birth', 'date_of_birth must be a real date (YYYY-MM-DD) after 1850');
    }
    if (input.date_of_birth > new Date().toISOString().slice(0, 10)) {
      throw validationFailed('date_of_birth', 'date_of_birth must not be in the future');
    }
  }
  if (input.country !== undefined && !isCountryCode(input.country)) {
    throw validationFailed('country', 'country must be an ISO 3166-1 alpha-2 code (e.g. DE)');
  }
}

/** The hits of one name against every list, as the index of `tx`'s lists sees them. */
async function matchLists(
  tx: PoolClient,
  deps: AppDeps,
  input: ScreeningInput,
): Promise<{ hits: Hit[]; version: string }> {
  const metrics = sanctionsMetrics(deps.metrics);
  const { index, version } = await currentIndex(deps.pool, tx, (seconds) =>
    metrics.indexBuildSeconds.observe(seconds),
  );
  const query: MatchQuery = {
    entityType: input.entity_type,
    name: input.name,
    dateOfBirth: input.date_of_birth ?? null,
    country: input.country ?? null,
  };
  const threshold = Number(deps.config.sanctionsMatchThreshold);
  const started = performance.now();
  let hits = index.match(query, threshold);
  if (deps.config.appEnv === 'sandbox') hits = withMagicHits(index, query, hits, threshold, MAX_HITS);
  metrics.matchSeconds.observe((performance.now() - started) / 1000);
  return { hits, version };
}

/**
 * Screens a name inside the caller's transaction: records the screening and publishes
 * `screening.completed` with it. Other areas call this for their resources (`source` names the resource);
 * the screening then commits or rolls back with the caller's change. Validates the input (422).
 */
export async function screen(
  tx: PoolClient,
  deps: AppDeps,
  organisationId: string,
  input: ScreeningInput,
  source: ScreeningSource | null = null,
): Promise<ScreeningView> {
  checkScreeningInput(input);
  if (input.external_id !== undefined) {
    if (await repo.findByExternalId(tx, organisationId, input.external_id)) throw duplicateExternalId();
  }
  const { hits, version } = await matchLists(tx, deps, input);
  const status: MatchStatus = hits.length > 0 ? 'potential_match' : 'no_match';
  const row = await repo
    .insertScreening(tx, {
      id: newPublicId(SCREENING_PREFIX),
      organisation_id: organisationId,
      entity_type: input.entity_type,
      name: input.name,
      date_of_birth: input.date_of_birth ?? null,
      country: input.country ?? null,
      match_status: status,
      hits,
      threshold: deps.config.sanctionsMatchThreshold,
      lists_version: version,
      source_object_type: source?.type ?? null,
      source_object_id: source?.id ?? null,
      external_id: input.external_id ?? null,
    })
    .catch((error: unknown) => {
      if (pgErrorCode(error) === PG_UNIQUE_VIOLATION && pgConstraint(error) === repo.EXTERNAL_ID_INDEX) {
        throw duplicateExternalId();
      }
      throw error;
    });
  const view = screeningView(row);
  await publishResourceEvent(tx, deps, {
    organisationId,
    sourceObjectType: RESOURCE,
    object: view,
    action: 'completed',
    previousStatus: null,
  });
  return view;
}

export async function createScreening(
  deps: AppDeps,
  organisationId: string,
  input: CreateScreeningInput,
): Promise<ScreeningView> {
  checkScreeningInput(input);
  return withTransaction(deps.pool, (tx) => screen(tx, deps, organisationId, input));
}

/** The screening's match status, read in the caller's transaction; undefined for an unknown id. */
export async function matchStatusOf(
  db: Queryable,
  organisationId: string,
  id: string,
): Promise<MatchStatus | undefined> {
  return (await repo.findScreening(db, organisationId, id))?.match_status;
}

export async function getScreening(
  deps: AppDeps,
  organisationId: string,
  id: string,
): Promise<ScreeningView> {
  if (!isPublicId(SCREENING_PREFIX, id)) throw screeningNotFound();
  const row = await repo.findScreening(deps.pool, organisationId, id);
  if (!row) throw screeningNotFound();
  return screeningView(row);
}

export async function searchScreenings(
  deps: AppDeps,
  organisationId: string,
  body: ScreeningSearchInput | undefined,
): Promise<Page<ScreeningView>> {
  const query = toSearchQuery<ScreeningFilters, ScreeningSortKey>(body);
  if (query.search?.includes('\u0000')) return toPage(query, [], 0);
  const filters = query.filters;
  const { rows, total } = await repo.searchScreenings(deps.pool, {
    organisationId,
    ...(filters.match_status ? { matchStatuses: filters.match_status } : {}),
    ...(filters.entity_type ? { entityTypes: filters.entity_type } : {}),
    ...(filters.source_object_type ? { sourceObjectTypes: filters.source_object_type } : {}),
    ...(filters.source_object_id ? { sourceObjectIds: filters.source_object_id } : {}),
    ...(filters.external_id ? { externalIds: filters.external_id } : {}),
    ...(query.search !== undefined ? { search: query.search } : {}),
    sortBy: query.sortBy,
    sortDirection: query.sortDirection,
    limit: query.pageSize,
    offset: query.offset,
  });
  return toPage(query, rows.map(screeningView), total);
}

/**
 * The compliance officer's queue (D18): screenings in potential_match, oldest first, each as the client's
 * view shows it plus its organisation, since the operator serves every organisation.
 */
export async function pendingScreenings(
  deps: AppDeps,
  query: { limit: number; organisationId?: string },
): Promise<PendingScreeningView[]> {
  const rows = await repo.pendingScreenings(deps.pool, query.limit, query.organisationId);
  return rows.map((row) => ({ ...screeningView(row), organisation_id: row.organisation_id }));
}

/** The compliance officer's backlog for a worker's /metrics: a hit waits for review, and what it holds with it. */
export const reviewGauges: GaugeGroup = {
  gauges: {
    sanctions_reviews_pending:
      "Screenings waiting for the operator's review (potential_match); beneficiaries and transfers wait with them",
    sanctions_reviews_pending_oldest_seconds:
      'How long the oldest screening has waited for review (0 when none)',
  },
  labelNames: [],
  async read(db) {
    const backlog = await repo.reviewBacklog(db);
    return [
      {
        labels: {},
        values: {
          sanctions_reviews_pending: backlog.pending,
          sanctions_reviews_pending_oldest_seconds: backlog.oldestSeconds,
        },
      },
    ];
  },
};

/**
 * The review of a potential match (D18): only from `potential_match` (else 400 INVALID_STATE); records the
 * decision and note, publishes `screening.resolved`, and calls every area's onScreeningReviewed in the same
 * transaction. Without `organisationId` (the operator) the screening may belong to any organisation.
 */
export async function reviewScreening(
  deps: AppDeps,
  id: string,
  review: { decision: ReviewDecision; note: string },
  organisationId?: string,
): Promise<ScreeningView> {
  if (!isPublicId(SCREENING_PREFIX, id)) throw screeningNotFound();
  return withTransaction(
    deps.pool,
    async (tx) => {
      const current = await repo.findScreeningForUpdate(tx, id, organisationId);
      if (!current) throw screeningNotFound();
      if (current.match_status !== 'potential_match') {
        throw invalidState(
          `The screening is ${current.match_status}; only a potential_match can be reviewed`,
        );
      }
      const row = await repo.recordReview(tx, id, { matchStatus: review.decision, note: review.note });
      const view = screeningView(row);
      await publishResourceEvent(tx, deps, {
        organisationId: row.organisation_id,
        sourceObjectType: RESOURCE,
        object: view,
        action: 'resolved',
        previousStatus: current.match_status,
      });
      const reviewed: ReviewedScreening = {
        ...view,
        organisation_id: row.organisation_id,
        match_status: review.decision,
      };
      for (const area of deps.areas) await area.onScreeningReviewed?.(tx, reviewed, deps);
      return view;
    },
    LOCK_ORDER_RETRIES,
  );
}
