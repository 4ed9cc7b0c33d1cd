// Subscription rules (contract sections 3, 4, 7, 8; D9, D13). Validation (422) comes first, then
// URL uniqueness (409), then the 10-slot limit (400). The secret is generated here, stored sealed and
// returned only by create and rotate.
import {
  PG_RAISE_EXCEPTION,
  PG_UNIQUE_VIOLATION,
  type PoolClient,
  pgConstraint,
  pgErrorCode,
  withTransaction,
} from '../../db/pool.ts';
import type { AppDeps } from '../../platform/deps.ts';
import { type AppError, badRequest, conflict, notFound, validationFailed } from '../../platform/errors.ts';
import { isUuid, newUuid } from '../../platform/ids.ts';
import { type Page, toPage, toSearchQuery } from '../../platform/search.ts';
import { generateSigningSecret } from '../../platform/secrets.ts';
import { toIso } from '../../platform/time.ts';
import { probeEndpoint } from '../delivery/probe.ts';
import { refusedLiteral } from '../delivery/ssrf.ts';
import * as repo from './repository.ts';
import {
  type CreateSubscriptionInput,
  DEFAULT_MAX_RETRIES,
  MAX_ENDPOINT_URL_LENGTH,
  type SubscriptionFilters,
  type SubscriptionSearchInput,
  type SubscriptionSortKey,
  type SubscriptionStatus,
  type SubscriptionView,
  type SubscriptionWithSecretView,
  type UpdateSubscriptionInput,
} from './schemas.ts';

export function subscriptionView(row: repo.SubscriptionRow): SubscriptionView {
  return {
    id: row.id,
    endpoint_url: row.endpoint_url,
    event_type_codes: row.event_type_codes,
    max_retries: row.max_retries,
    status: row.status,
    consecutive_failures: row.consecutive_failures,
    last_delivery_at: toIso(row.last_delivery_at),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

const subscriptionNotFound = (): AppError => notFound('No subscription matches the id');

/**
 * D9: an absolute `https://` URL with a host, no user-info, at most 2048 characters (length is checked
 * by the schema). Uniqueness compares the WHATWG serialisation: lower-case scheme and host, default
 * port dropped (and an empty path written as `/`). A host that is an IP literal in a range D10 never
 * sends to is refused here, unless `allowPrivateTargets`: every attempt to it would fail.
 */
export function checkEndpointUrl(
  value: string,
  options: { allowPrivateTargets: boolean },
  field = 'endpoint_url',
): { url: string; normalized: string } {
  // Whitespace and control characters would be silently stripped or encoded by the URL parser;
  // a URL that means something other than what was typed is refused instead.
  if (/[\s\p{Cc}]/u.test(value)) {
    throw validationFailed(field, `${field} must not contain whitespace or control characters`);
  }
  if (!/^https:\/\//i.test(value)) throw validationFailed(field, `${field} must be an absolute https:// URL`);
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw validationFailed(field, `${field} must be an absolute https:// URL`);
  }
  // The authority as typed: `https:///x` and `https://\\x` parse to a host the client did not write.
  const authority = /^https:\/\/([^/?#]*)/i.exec(value)?.[1] ?? '';
  if (parsed.hostname === '' || authority === '' || authority.includes('\\')) {
    throw validationFailed(field, `${field} must name a host`);
  }
  if (parsed.username !== '' || parsed.password !== '' || authority.includes('@')) {
    throw validationFailed(field, `${field} must not contain user-info (user:password@)`);
  }
  // The parser's host: `https://0x7f.1/` and `https://[::ffff:127.0.0.1]/` are checked as the
  // addresses they denote (127.0.0.1, ::ffff:7f00:1).
  const refused = options.allowPrivateTargets ? undefined : refusedLiteral(parsed.hostname);
  if (refused !== undefined) {
    throw validationFailed(
      field,
      `${field} is refused: ${refused}, and webhooks are only sent to public addresses`,
    );
  }
  // The URL as requests carry it, percent-encoded: a non-ASCII character takes up to 12 characters
  // there, and the encoded form is what the unique index keeps (PostgreSQL caps an index entry at 2704
  // bytes).
  if (parsed.href.length > MAX_ENDPOINT_URL_LENGTH) {
    throw validationFailed(
      field,
      `${field} is ${parsed.href.length} characters long percent-encoded, as requests carry it; at most ${MAX_ENDPOINT_URL_LENGTH}`,
    );
  }
  return { url: value, normalized: parsed.href };
}

const endpointRules = (deps: AppDeps) => ({
  allowPrivateTargets: deps.config.webhookAllowPrivateTargets,
});

/** Every code must be published by the event types endpoint (contract rule 3); duplicates collapse. */
function checkEventTypeCodes(deps: AppDeps, codes: string[], field = 'event_type_codes'): string[] {
  codes.forEach((code, index) => {
    if (!deps.catalogue.isPublishedEventType(code)) {
      throw validationFailed(
        `${field}[${index}]`,
        `${field}[${index}] is not a published event type (see GET /api/v1/webhooks/event-types)`,
      );
    }
  });
  return [...new Set(codes)];
}

/** The database's guards, as the contract's errors: URL taken 409 (no field), slots full 400. */
function mapStorageError(error: unknown): unknown {
  if (pgErrorCode(error) === PG_UNIQUE_VIOLATION && pgConstraint(error) === repo.URL_UNIQUE_INDEX) {
    return duplicateUrl();
  }
  if (pgErrorCode(error) === PG_RAISE_EXCEPTION && (error as { hint?: string }).hint === repo.LIMIT_HINT) {
    return badRequest(
      'The organisation already holds 10 subscriptions that are not deleted; delete one to free a slot ' +
        '(pausing does not free a slot)',
    );
  }
  return error;
}

const duplicateUrl = (): AppError =>
  conflict('The organisation already has a subscription on this endpoint_url');

export async function createSubscription(
  deps: AppDeps,
  organisationId: string,
  input: CreateSubscriptionInput,
): Promise<SubscriptionWithSecretView> {
  const endpoint = checkEndpointUrl(input.endpoint_url, endpointRules(deps));
  const codes = checkEventTypeCodes(deps, input.event_type_codes);
  const secret = generateSigningSecret();
  const row = await withTransaction(deps.pool, async (tx) => {
    // The organisation lock (also taken by the limit trigger) serialises creates of one organisation,
    // so the 409 check below is decided before the slot count, as D9 orders them.
    await repo.lockOrganisation(tx, organisationId);
    if (await repo.findByNormalizedUrl(tx, organisationId, endpoint.normalized)) throw duplicateUrl();
    return repo
      .insertSubscription(tx, {
        id: newUuid(),
        organisation_id: organisationId,
        endpoint_url: endpoint.url,
        endpoint_url_normalized: endpoint.normalized,
        event_type_codes: codes,
        max_retries: input.max_retries ?? DEFAULT_MAX_RETRIES,
        signing_secret_sealed: deps.secretBox.encrypt(secret),
      })
      .catch((error: unknown) => {
        throw mapStorageError(error);
      });
  });
  return { ...subscriptionView(row), signing_secret: secret };
}

export async function getSubscription(
  deps: AppDeps,
  organisationId: string,
  id: string,
): Promise<SubscriptionView> {
  if (!isUuid(id)) throw subscriptionNotFound();
  const row = await repo.findSubscription(deps.pool, organisationId, id);
  if (!row) throw subscriptionNotFound();
  return subscriptionView(row);
}

type StatusPlan = { status?: SubscriptionStatus; probe: boolean };

/**
 * The contract's state table with D9: a client sets only `active` or `paused` (others are 422 in the
 * schema); a same-state request is a no-op; any other transition, and any change of a deleted
 * subscription, is 400.
 */
function planStatus(current: SubscriptionStatus, requested: SubscriptionStatus | undefined): StatusPlan {
  if (current === 'deleted') throw badRequest('A deleted subscription cannot be changed');
  if (requested === undefined || requested === current) return { probe: false };
  const allowed =
    (requested === 'active' &&
      (current === 'pending_verification' || current === 'paused' || current === 'auto_disabled')) ||
    (requested === 'paused' && current === 'active');
  if (!allowed) throw badRequest(`A subscription cannot change from ${current} to ${requested}`);
  // auto_disabled -> active needs a healthy endpoint (D9).
  return { status: requested, probe: current === 'auto_disabled' };
}

export async function updateSubscription(
  deps: AppDeps,
  organisationId: string,
  id: string,
  input: UpdateSubscriptionInput,
): Promise<SubscriptionView> {
  const endpoint =
    input.endpoint_url !== undefined ? checkEndpointUrl(input.endpoint_url, endpointRules(deps)) : undefined;
  // Contract rule 2: an empty list on update is ignored, not a clear.
  const codes =
    input.event_type_codes !== undefined && input.event_type_codes.length > 0
      ? checkEventTypeCodes(deps, input.event_type_codes)
      : undefined;
  if (!isUuid(id)) throw subscriptionNotFound();
  const before = await repo.findSubscription(deps.pool, organisationId, id);
  if (!before) throw subscriptionNotFound();
  const plan = planStatus(before.status, input.status);

  if (plan.probe) {
    // Outside any transaction (D2): the probe is an outbound request of up to 10 s.
    const outcome = await probeEndpoint(deps, {
      id,
      endpoint_url: endpoint?.url ?? before.endpoint_url,
      signing_secret: deps.secretBox.decrypt(before.signing_secret_sealed),
    });
    if (!outcome.ok) {
      throw badRequest(
        `The endpoint is not healthy, the subscription stays auto_disabled: the signed webhook.ping probe failed (${outcome.description})`,
      );
    }
  }

  const row = await withTransaction(deps.pool, async (tx) => {
    const current = await repo.findSubscription(tx, organisationId, id, { forUpdate: true });
    if (!current) throw subscriptionNotFound();
    const replanned = planStatus(current.status, input.status);
    if (replanned.probe && !plan.probe) {
      throw badRequest('The subscription was auto-disabled meanwhile; retry to probe the endpoint');
    }
    const changes: repo.SubscriptionChanges = {};
    if (replanned.status !== undefined) changes.status = replanned.status;
    if (replanned.probe) changes.consecutive_failures = 0;
    if (input.max_retries !== undefined && input.max_retries !== current.max_retries) {
      changes.max_retries = input.max_retries;
    }
    if (codes !== undefined && !sameList(codes, current.event_type_codes)) changes.event_type_codes = codes;
    if (endpoint !== undefined && endpoint.url !== current.endpoint_url) {
      if (endpoint.normalized !== current.endpoint_url_normalized) {
        await checkUrlFree(tx, organisationId, endpoint.normalized);
        changes.endpoint_url_normalized = endpoint.normalized;
      }
      changes.endpoint_url = endpoint.url;
    }
    // Nothing to change (e.g. a same-state PATCH): 200 with the record as it is.
    if (Object.keys(changes).length === 0) return current;
    return repo.updateSubscription(tx, id, changes).catch((error: unknown) => {
      throw mapStorageError(error);
    });
  });
  return subscriptionView(row);
}

async function checkUrlFree(tx: PoolClient, organisationId: string, normalized: string): Promise<void> {
  if (await repo.findByNormalizedUrl(tx, organisationId, normalized)) throw duplicateUrl();
}

const sameList = (a: string[], b: string[]): boolean =>
  a.length === b.length && a.every((value, index) => value === b[index]);

export async function rotateSecret(
  deps: AppDeps,
  organisationId: string,
  id: string,
): Promise<SubscriptionWithSecretView> {
  if (!isUuid(id)) throw subscriptionNotFound();
  const secret = generateSigningSecret();
  const row = await withTransaction(deps.pool, async (tx) => {
    const current = await repo.findSubscription(tx, organisationId, id, { forUpdate: true });
    if (!current) throw subscriptionNotFound();
    if (current.status === 'deleted') throw badRequest('A deleted subscription cannot be changed');
    // Takes effect at commit: the delivery engine reads the sealed secret for every send (D9).
    return repo.updateSubscription(tx, id, { signing_secret_sealed: deps.secretBox.encrypt(secret) });
  });
  return { ...subscriptionView(row), signing_secret: secret };
}

/** Repeatable: deleting a deleted subscription answers 200 with it again (contract section 3). */
export async function deleteSubscription(
  deps: AppDeps,
  organisationId: string,
  id: string,
): Promise<SubscriptionView> {
  if (!isUuid(id)) throw subscriptionNotFound();
  const row = await withTransaction(deps.pool, async (tx) => {
    const current = await repo.findSubscription(tx, organisationId, id, { forUpdate: true });
    if (!current) throw subscriptionNotFound();
    if (current.status === 'deleted') return current;
    return repo.updateSubscription(tx, id, { status: 'deleted' });
  });
  return subscriptionView(row);
}

/** Normalises an `endpoint_url` filter value as stored; a value that is not a URL is compared as is. */
function normalizeFilterUrl(value: string): string {
  try {
    return new URL(value).href;
  } catch {
    return value;
  }
}

export async function searchSubscriptions(
  deps: AppDeps,
  organisationId: string,
  body: SubscriptionSearchInput | undefined,
): Promise<Page<SubscriptionView>> {
  const query = toSearchQuery<SubscriptionFilters, SubscriptionSortKey>(body);
  // NUL cannot be stored in text, so a search holding it matches nothing (PostgreSQL would refuse it).
  if (query.search?.includes('\u0000')) return toPage(query, [], 0);
  const filters = query.filters;
  const { rows, total } = await repo.searchSubscriptions(deps.pool, {
    organisationId,
    ...(filters.status ? { statuses: filters.status } : {}),
    ...(filters.event_type_codes ? { eventTypeCodes: filters.event_type_codes } : {}),
    ...(filters.endpoint_url ? { normalizedUrls: filters.endpoint_url.map(normalizeFilterUrl) } : {}),
    ...(query.search !== undefined ? { search: query.search } : {}),
    sortBy: query.sortBy,
    sortDirection: query.sortDirection,
    limit: query.pageSize,
    offset: query.offset,
  });
  return toPage(query, rows.map(subscriptionView), total);
}
