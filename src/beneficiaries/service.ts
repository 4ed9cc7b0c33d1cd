// Rules of beneficiaries (D19, D14): the requirements of a destination, create with screening, read,
// update (re-screened on a name change), delete, search; the review hook that moves a beneficiary out of
// review; and the payout destination payments read. Each change publishes its events in its transaction.
// The account fields are sealed with the D13 key before they reach the database, and opened only to
// answer the organisation that owns them and to pay them.

import stringify from 'safe-stable-stringify';
import { PAYOUT_METHODS } from '../corridors/schemas.ts';
import { activeRoutesTo } from '../corridors/service.ts';
import {
  PG_UNIQUE_VIOLATION,
  type PoolClient,
  pgConstraint,
  pgErrorCode,
  type Queryable,
  withTransaction,
} from '../db/pool.ts';
import type { PayoutDestination, ReviewedScreening } from '../platform/area.ts';
import { isCountryCode } from '../platform/countries.ts';
import type { AppDeps } from '../platform/deps.ts';
import { type AppError, conflict, invalidState, notFound, validationFailed } from '../platform/errors.ts';
import { isPublicId, newPublicId } from '../platform/ids.ts';
import { findCurrency } from '../platform/money.ts';
import { type Page, toPage, toSearchQuery } from '../platform/search.ts';
import { toIso } from '../platform/time.ts';
import { matchStatusOf, screen } from '../sanctions/service.ts';
import { publishResourceEvent } from '../webhooks/publish.ts';
import * as repo from './repository.ts';
import { allFields, ENTITY_TYPES, type FieldSet, fieldSetFor, publicField } from './requirements.ts';
import type {
  BeneficiaryFilters,
  BeneficiarySearchInput,
  BeneficiarySortKey,
  BeneficiaryStatus,
  BeneficiaryView,
  CreateBeneficiaryInput,
  RequirementsQueryInput,
  RequirementsView,
  UpdateBeneficiaryInput,
} from './schemas.ts';
import { type BeneficiaryFields, type ValidatedBeneficiary, validateFields } from './validation.ts';

export const BENEFICIARY_PREFIX = 'ben';
const RESOURCE = 'beneficiary';

/** The catalogue action (D8) each status is announced with. */
const STATUS_ACTION: Record<BeneficiaryStatus, string> = {
  in_review: 'in_review',
  active: 'activated',
  blocked: 'blocked',
  deleted: 'deleted',
};

const beneficiaryNotFound = (): AppError => notFound('No beneficiary matches the id');
const duplicateExternalId = (): AppError =>
  conflict('The organisation already has a beneficiary with this external_id');

function openAccount(deps: AppDeps, row: repo.BeneficiaryRow): Record<string, string> {
  return JSON.parse(deps.secretBox.decrypt(row.account_sealed)) as Record<string, string>;
}

export function beneficiaryView(deps: AppDeps, row: repo.BeneficiaryRow): BeneficiaryView {
  return {
    id: row.id,
    entity_type: row.entity_type,
    name: row.name,
    destination_country: row.destination_country,
    destination_currency: row.destination_currency,
    payout_method: row.payout_method,
    address: {
      line1: row.address.line1,
      city: row.address.city,
      postal_code: row.address.postal_code ?? null,
      country: row.address.country,
    },
    email: row.email,
    date_of_birth: row.date_of_birth,
    account: openAccount(deps, row),
    bank: row.bank_id ? { id: row.bank_id, name: row.bank_name!, bic: row.bank_bic } : null,
    status: row.status,
    screening_id: row.screening_id,
    external_id: row.external_id,
    created_at: toIso(row.created_at)!,
    updated_at: toIso(row.updated_at)!,
    deleted_at: toIso(row.deleted_at),
  };
}

interface Destination {
  country: string;
  currency: string;
  method: string;
}

/** Country, currency and method as D14 writes them: 422 naming the one that is not. */
function checkDestination(input: Destination): void {
  if (!/^[A-Z]{2}$/.test(input.country) || !isCountryCode(input.country)) {
    throw validationFailed(
      'destination_country',
      'destination_country must be an upper-case ISO 3166-1 alpha-2 country code',
    );
  }
  if (!findCurrency(input.currency)) {
    throw validationFailed(
      'destination_currency',
      'destination_currency must be an upper-case ISO 4217 code',
    );
  }
  if (!(PAYOUT_METHODS as readonly string[]).includes(input.method)) {
    throw validationFailed('payout_method', `payout_method must be one of: ${PAYOUT_METHODS.join(', ')}`);
  }
}

type Served =
  | { set: FieldSet }
  | { unserved: 'destination_country' | 'destination_currency' | 'payout_method'; why: string };

/**
 * The field set of a destination an active corridor serves (D16, D19); otherwise the field no active
 * corridor accepts (the country when none pays to it, else the currency, else the method) and why.
 */
async function servedFieldSet(db: Queryable, input: Destination): Promise<Served> {
  const routes = await activeRoutesTo(db, input.country);
  const none = `No active corridor pays ${describe(input)}`;
  if (routes.length === 0) return { unserved: 'destination_country', why: none };
  if (!routes.some((route) => route.destination_currency === input.currency)) {
    return { unserved: 'destination_currency', why: none };
  }
  if (
    !routes.some(
      (route) => route.destination_currency === input.currency && route.payout_method === input.method,
    )
  ) {
    return { unserved: 'payout_method', why: none };
  }
  const set = fieldSetFor(input.country, input.method);
  if (!set) {
    return {
      unserved: 'destination_country',
      why: `No beneficiary field set is defined for ${describe(input)}`,
    };
  }
  return { set };
}

const describe = (input: Destination): string => `${input.currency} to ${input.country} by ${input.method}`;

/** GET /api/v1/beneficiaries/requirements (D19): 404 when no active corridor serves the destination. */
export async function getRequirements(
  deps: AppDeps,
  query: RequirementsQueryInput,
): Promise<RequirementsView> {
  const destination = {
    country: query.destination_country,
    currency: query.destination_currency,
    method: query.payout_method,
  };
  checkDestination(destination);
  const served = await servedFieldSet(deps.pool, destination);
  if (!('set' in served)) {
    throw notFound(served.why);
  }
  return {
    destination_country: destination.country,
    destination_currency: destination.currency,
    payout_method: destination.method as RequirementsView['payout_method'],
    entity_types: [...ENTITY_TYPES],
    fields: allFields(served.set).map(publicField),
  };
}

/** How a beneficiary's name is screened (D19): a business as an organisation, an individual with its birth date. */
async function screenName(
  tx: PoolClient,
  deps: AppDeps,
  organisationId: string,
  id: string,
  fields: ValidatedBeneficiary,
) {
  return screen(
    tx,
    deps,
    organisationId,
    {
      entity_type: fields.entity_type === 'business' ? 'organisation' : 'individual',
      name: fields.name,
      ...(fields.date_of_birth !== null ? { date_of_birth: fields.date_of_birth } : {}),
      country: fields.address.country,
    },
    { type: RESOURCE, id },
  );
}

const statusAfter = (matchStatus: string): BeneficiaryStatus =>
  matchStatus === 'no_match' ? 'active' : 'in_review';

async function publish(
  tx: PoolClient,
  deps: AppDeps,
  organisationId: string,
  view: BeneficiaryView,
  action: string,
  previousStatus: string | null,
  idempotencyKey?: string | null,
): Promise<void> {
  await publishResourceEvent(tx, deps, {
    organisationId,
    sourceObjectType: RESOURCE,
    object: view,
    action,
    previousStatus,
    ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
  });
}

/**
 * The event of a status a beneficiary enters (D14), keyed `<id>:<status>` (D8). A status reached through a
 * screening is announced once per screening, so its key also names the screening: a beneficiary may return
 * to `active` or `in_review` after a later name change, and that change is announced too (D14).
 */
function publishStatus(
  tx: PoolClient,
  deps: AppDeps,
  organisationId: string,
  view: BeneficiaryView,
  previousStatus: BeneficiaryStatus | null,
): Promise<void> {
  const action = STATUS_ACTION[view.status];
  const key =
    view.status === 'deleted' ? `${view.id}:deleted` : `${view.id}:${view.status}:${view.screening_id}`;
  return publish(tx, deps, organisationId, view, action, previousStatus, key);
}

const bankColumns = (bank: ValidatedBeneficiary['bank']) => ({
  bank_id: bank?.id ?? null,
  bank_name: bank?.name ?? null,
  bank_bic: bank?.bic ?? null,
});

export async function createBeneficiary(
  deps: AppDeps,
  organisationId: string,
  input: CreateBeneficiaryInput,
): Promise<BeneficiaryView> {
  const destination = {
    country: input.destination_country,
    currency: input.destination_currency,
    method: input.payout_method,
  };
  checkDestination(destination);
  const served = await servedFieldSet(deps.pool, destination);
  if (!('set' in served)) {
    throw validationFailed(served.unserved, served.why);
  }
  const fields = await validateFields(deps.pool, served.set, destination.country, input as BeneficiaryFields);
  if (input.external_id !== undefined) {
    if (await repo.findByExternalId(deps.pool, organisationId, input.external_id))
      throw duplicateExternalId();
  }
  return withTransaction(deps.pool, async (tx) => {
    const id = newPublicId(BENEFICIARY_PREFIX);
    const screening = await screenName(tx, deps, organisationId, id, fields);
    const row = await repo
      .insertBeneficiary(tx, {
        id,
        organisation_id: organisationId,
        status: statusAfter(screening.match_status),
        destination_country: destination.country,
        destination_currency: destination.currency,
        payout_method: destination.method as repo.BeneficiaryRow['payout_method'],
        entity_type: fields.entity_type,
        name: fields.name,
        address: fields.address,
        email: fields.email,
        date_of_birth: fields.date_of_birth,
        account_sealed: deps.secretBox.encrypt(JSON.stringify(fields.account)),
        ...bankColumns(fields.bank),
        screening_id: screening.id,
        external_id: input.external_id ?? null,
      })
      .catch((error: unknown) => {
        if (pgErrorCode(error) === PG_UNIQUE_VIOLATION && pgConstraint(error) === repo.EXTERNAL_ID_INDEX) {
          throw duplicateExternalId();
        }
        throw error;
      });
    const view = beneficiaryView(deps, row);
    await publish(tx, deps, organisationId, view, 'created', null);
    await publishStatus(tx, deps, organisationId, view, null);
    return view;
  });
}

export async function getBeneficiary(
  deps: AppDeps,
  organisationId: string,
  id: string,
): Promise<BeneficiaryView> {
  if (!isPublicId(BENEFICIARY_PREFIX, id)) throw beneficiaryNotFound();
  const row = await repo.findBeneficiary(deps.pool, organisationId, id);
  if (!row) throw beneficiaryNotFound();
  return beneficiaryView(deps, row);
}

async function lockOrThrow(tx: PoolClient, organisationId: string, id: string): Promise<repo.BeneficiaryRow> {
  if (!isPublicId(BENEFICIARY_PREFIX, id)) throw beneficiaryNotFound();
  const row = await repo.findBeneficiary(tx, organisationId, id, { forUpdate: true });
  if (!row) throw beneficiaryNotFound();
  return row;
}

/** Equal as JSON whatever the key order (jsonb keeps its own order). */
const sameJson = (a: unknown, b: unknown): boolean => stringify(a) === stringify(b);

/**
 * PATCH (D19): name, address, email, date_of_birth and the account, merged over the beneficiary and judged
 * again as a whole by its field set. A new name is screened again, which may move the beneficiary to
 * `in_review` (a hit) or to `active` (no hit, from review). `blocked` and `deleted`: 400 INVALID_STATE.
 * A PATCH that changes nothing publishes nothing.
 */
export async function updateBeneficiary(
  deps: AppDeps,
  organisationId: string,
  id: string,
  patch: UpdateBeneficiaryInput,
): Promise<BeneficiaryView> {
  return withTransaction(deps.pool, async (tx) => {
    const current = await lockOrThrow(tx, organisationId, id);
    if (current.status === 'blocked' || current.status === 'deleted') {
      throw invalidState(
        `The beneficiary is ${current.status}; only an active or in_review one can be updated`,
      );
    }
    const set = fieldSetFor(current.destination_country, current.payout_method);
    if (!set) throw new Error(`no field set for ${current.destination_country} ${current.payout_method}`);
    const account = openAccount(deps, current);
    const merged: BeneficiaryFields = {
      entity_type: current.entity_type,
      name: patch.name ?? current.name,
      address: patch.address ?? {
        line1: current.address.line1,
        city: current.address.city,
        ...(current.address.postal_code !== null ? { postal_code: current.address.postal_code } : {}),
        country: current.address.country,
      },
      email: patch.email !== undefined ? patch.email : current.email,
      date_of_birth: patch.date_of_birth !== undefined ? patch.date_of_birth : current.date_of_birth,
      account: patch.account ?? account,
    };
    const fields = await validateFields(tx, set, current.destination_country, merged);
    const nameChanged = fields.name !== current.name;
    const bank = bankColumns(fields.bank);
    const unchanged =
      !nameChanged &&
      sameJson(fields.address, { ...current.address, postal_code: current.address.postal_code ?? null }) &&
      fields.email === current.email &&
      fields.date_of_birth === current.date_of_birth &&
      sameJson(fields.account, account) &&
      bank.bank_id === current.bank_id;
    if (unchanged) return beneficiaryView(deps, current);

    let status: BeneficiaryStatus = current.status;
    let screeningId = current.screening_id;
    // The date of birth and the country weigh in the score (D18), so a change of either is screened too.
    // It only ever holds a beneficiary: one in review stays there, on its new screening if that is a hit,
    // else on the one that waits for the operator (a new birth date is no way out of a review).
    const weighedChanged =
      fields.date_of_birth !== current.date_of_birth || fields.address.country !== current.address.country;
    if (nameChanged || weighedChanged) {
      const screening = await screenName(tx, deps, organisationId, current.id, fields);
      if (nameChanged || current.status === 'active') {
        status = statusAfter(screening.match_status);
        screeningId = screening.id;
      } else if (screening.match_status !== 'no_match') {
        screeningId = screening.id;
      }
    }
    const row = await repo.updateBeneficiary(tx, current.id, {
      status,
      name: fields.name,
      address: fields.address,
      email: fields.email,
      date_of_birth: fields.date_of_birth,
      account_sealed: sameJson(fields.account, account)
        ? current.account_sealed
        : deps.secretBox.encrypt(JSON.stringify(fields.account)),
      ...bank,
      screening_id: screeningId,
    });
    const view = beneficiaryView(deps, row);
    // Every update is announced: the default key (<id>:updated) would announce only the first.
    await publish(tx, deps, organisationId, view, 'updated', current.status, null);
    if (status !== current.status) await publishStatus(tx, deps, organisationId, view, current.status);
    return view;
  });
}

/** DELETE (D19): 200 with status `deleted`; repeatable (a second delete changes and publishes nothing). */
export async function deleteBeneficiary(
  deps: AppDeps,
  organisationId: string,
  id: string,
): Promise<BeneficiaryView> {
  return withTransaction(deps.pool, async (tx) => {
    const current = await lockOrThrow(tx, organisationId, id);
    if (current.status === 'deleted') return beneficiaryView(deps, current);
    const row = await repo.setStatus(tx, current.id, 'deleted');
    const view = beneficiaryView(deps, row);
    await publishStatus(tx, deps, organisationId, view, current.status);
    return view;
  });
}

/**
 * Search (D4, D19). Deleted beneficiaries are left out unless the `status` filter asks for them, as deleted
 * webhook subscriptions are; they stay readable by id.
 */
export async function searchBeneficiaries(
  deps: AppDeps,
  organisationId: string,
  body: BeneficiarySearchInput | undefined,
): Promise<Page<BeneficiaryView>> {
  const query = toSearchQuery<BeneficiaryFilters, BeneficiarySortKey>(body);
  if (query.search?.includes('\u0000')) return toPage(query, [], 0);
  const { rows, total } = await repo.searchBeneficiaries(deps.pool, {
    organisationId,
    filters: query.filters,
    ...(query.search !== undefined ? { search: query.search } : {}),
    sortBy: query.sortBy,
    sortDirection: query.sortDirection,
    limit: query.pageSize,
    offset: query.offset,
  });
  return toPage(
    query,
    rows.map((row) => beneficiaryView(deps, row)),
    total,
  );
}

/**
 * The operator's review of a beneficiary's screening (D18, D19), in the review's transaction: `cleared`
 * makes an `in_review` beneficiary `active`, `confirmed_match` makes it `blocked`. A beneficiary deleted
 * while its name waited keeps its status, and a confirmed match still bars it from every payout. A review
 * of an older screening (the name changed since) changes nothing.
 */
export async function onScreeningReviewed(
  tx: PoolClient,
  screening: ReviewedScreening,
  deps: AppDeps,
): Promise<void> {
  if (screening.source_object_type !== RESOURCE || screening.source_object_id === null) return;
  const current = await repo.findBeneficiary(tx, screening.organisation_id, screening.source_object_id, {
    forUpdate: true,
  });
  if (!current || current.screening_id !== screening.id) return;
  if (current.status === 'deleted' && screening.match_status === 'confirmed_match') {
    await repo.markBlocked(tx, current.id);
    return;
  }
  if (current.status !== 'in_review') return;
  const status: BeneficiaryStatus = screening.match_status === 'cleared' ? 'active' : 'blocked';
  const row = await repo.setStatus(tx, current.id, status);
  await publishStatus(tx, deps, screening.organisation_id, beneficiaryView(deps, row), 'in_review');
}

/**
 * A review confirmed the beneficiary's name as a match on another screening of it (a transfer's, Area.
 * blockPayee): if that is still its name, it is blocked as its own review would block it (`beneficiary.blocked`
 * from its status), or, deleted, barred from payouts all the same.
 */
export async function blockPayee(
  tx: PoolClient,
  payee: { organisationId: string; beneficiaryId: string; name: string },
  deps: AppDeps,
): Promise<void> {
  if (!isPublicId(BENEFICIARY_PREFIX, payee.beneficiaryId)) return;
  const current = await repo.findBeneficiary(tx, payee.organisationId, payee.beneficiaryId, {
    forUpdate: true,
  });
  if (!current || current.name !== payee.name || current.blocked_at !== null) return;
  if (current.status === 'deleted') {
    await repo.markBlocked(tx, current.id);
    return;
  }
  const row = await repo.setStatus(tx, current.id, 'blocked');
  await publishStatus(tx, deps, payee.organisationId, beneficiaryView(deps, row), current.status);
}

/**
 * Whether the beneficiary's current name waits for its review: `in_review`, or deleted while it waited (a
 * delete does not end the wait, and the review may still confirm the match).
 */
async function reviewPending(db: Queryable, row: repo.BeneficiaryRow): Promise<boolean> {
  if (row.status === 'in_review') return true;
  if (row.status !== 'deleted' || row.blocked_at !== null) return false;
  return (await matchStatusOf(db, row.organisation_id, row.screening_id)) === 'potential_match';
}

/**
 * Where a payout to the beneficiary goes (Area.payoutDestination): its status (deleted ones included), its
 * destination, and its address, account and bank as its GET answers them (beneficiaryView, the one place
 * that opens the sealed account), with the account identifier the rail needs picked out of the account.
 */
export async function payoutDestination(
  db: Queryable,
  organisationId: string,
  beneficiaryId: string,
  deps: AppDeps,
): Promise<PayoutDestination | undefined> {
  if (!isPublicId(BENEFICIARY_PREFIX, beneficiaryId)) return undefined;
  const row = await repo.findBeneficiary(db, organisationId, beneficiaryId);
  if (!row) return undefined;
  const set = fieldSetFor(row.destination_country, row.payout_method);
  const identifierField = set?.account.find((spec) => spec.identifier)?.name.slice('account.'.length);
  const view = beneficiaryView(deps, row);
  return {
    beneficiaryId: view.id,
    status: view.status,
    blocked: row.blocked_at !== null,
    reviewPending: await reviewPending(db, row),
    currency: view.destination_currency,
    country: view.destination_country,
    payoutMethod: view.payout_method,
    name: view.name,
    entityType: view.entity_type,
    dateOfBirth: view.date_of_birth,
    accountIdentifier: (identifierField && view.account[identifierField]) || '',
    address: view.address,
    // The view's account is the opened account itself (openAccount): its values are all strings.
    account: view.account as Record<string, string>,
    bank: view.bank,
  };
}
