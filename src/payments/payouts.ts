// Payouts (D21): money going out to a beneficiary through a rail connector. The amount leaves the available
// balance at once (available -> held), goes to the rail on completion (held -> rail), and comes back on a
// failure or a cancel (held -> available) or a return after completion (rail -> available). Each move is
// one ledger transaction in the same database transaction as the state change and its event.
import * as ledger from '../balances/ledger.ts';
import {
  LOCK_ORDER_RETRIES,
  PG_UNIQUE_VIOLATION,
  type PoolClient,
  pgConstraint,
  pgErrorCode,
  type Queryable,
  withTransaction,
} from '../db/pool.ts';
import { transactionGroups } from '../db/transaction-groups.ts';
import type { GaugeGroup, PayoutDestination, ReviewedScreening } from '../platform/area.ts';
import type { AppDeps } from '../platform/deps.ts';
import { AppError, conflict, invalidState, notFound, validationFailed } from '../platform/errors.ts';
import { isPublicId, newPublicId } from '../platform/ids.ts';
import { cancelJob, jobPending, runJobNow, scheduleJob } from '../platform/jobs/runner.ts';
import { readingsByLabel } from '../platform/metrics.ts';
import { Decimal, findCurrency, formatAmount, parseAmount } from '../platform/money.ts';
import { type Page, refuseFreeText, toPage, toSearchQuery } from '../platform/search.ts';
import { toIso } from '../platform/time.ts';
import { publishResourceEvent } from '../webhooks/publish.ts';
import type { RailConnector } from './connectors/connector.ts';
import { manualConnector } from './connectors/manual.ts';
import { SANDBOX_STEP_KIND, sandboxConnector } from './connectors/sandbox.ts';
import * as repo from './repository.ts';
import type {
  CreatePayoutInput,
  FailureReason,
  PayoutDestinationView,
  PayoutSearchInput,
  PayoutView,
} from './schemas.ts';

export const HAND_OFF_KIND = 'payments.hand_off';

const CONNECTORS: Readonly<Record<string, RailConnector>> = {
  sandbox: sandboxConnector,
  manual: manualConnector,
};

/** The names of the rail connectors a payout may have. */
export const connectorNames = (): string[] => Object.keys(CONNECTORS);

type Status = repo.PayoutRow['status'];

/** What each status may become (D21); anything else is 400 INVALID_STATE. */
const PAYOUT_MOVES: Readonly<Record<Status, readonly Status[]>> = {
  pending: ['processing', 'cancelled', 'failed'],
  processing: ['completed', 'failed'],
  completed: ['returned'],
  failed: [],
  cancelled: [],
  returned: [],
};

/** The timestamp column each status sets. */
const MILESTONE: Partial<Record<Status, keyof repo.PayoutRow>> = {
  processing: 'processing_at',
  completed: 'completed_at',
  failed: 'failed_at',
  cancelled: 'cancelled_at',
  returned: 'returned_at',
};

export function payoutView(row: repo.PayoutRow): PayoutView {
  return {
    id: row.id,
    beneficiary_id: row.beneficiary_id,
    currency: row.currency,
    amount: formatAmount(row.amount, row.currency),
    reference: row.reference,
    status: row.status,
    failure_reason: row.failure_reason as PayoutView['failure_reason'],
    transfer_id: row.transfer_id,
    external_id: row.external_id,
    completed_at: toIso(row.completed_at),
    processing_at: toIso(row.processing_at),
    failed_at: toIso(row.failed_at),
    cancelled_at: toIso(row.cancelled_at),
    returned_at: toIso(row.returned_at),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/** Where a payout to the beneficiary goes, from the area that holds beneficiaries (D19); undefined if unknown. */
export async function destinationOf(
  db: Queryable,
  deps: AppDeps,
  organisationId: string,
  beneficiaryId: string,
): Promise<PayoutDestination | undefined> {
  for (const area of deps.areas) {
    const found = await area.payoutDestination?.(db, organisationId, beneficiaryId, deps);
    if (found) return found;
  }
  return undefined;
}

/**
 * The destination of a beneficiary that may be paid: 404 NOT_FOUND naming beneficiary_id when the
 * organisation has no such beneficiary (D14: another organisation's id is answered as an unknown one, as
 * an unknown corridor_id is), 400 BENEFICIARY_NOT_ACTIVE unless it is active (D19, D20, D21).
 */
export function payable(destination: PayoutDestination | undefined): PayoutDestination {
  if (!destination) {
    throw new AppError('NOT_FOUND', 'No beneficiary of the organisation matches beneficiary_id', {
      field: 'beneficiary_id',
    });
  }
  if (destination.status !== 'active') {
    throw new AppError(
      'BENEFICIARY_NOT_ACTIVE',
      `The beneficiary is ${destination.status}; only an active one is paid`,
    );
  }
  return destination;
}

/** The platform account of a connector's rail, or of a crypto network's. */
export const railAccount = (connectorOrNetwork: string, method: 'bank' | 'crypto' = 'bank'): string =>
  method === 'crypto' ? `rail:crypto:${connectorOrNetwork}` : `rail:${connectorOrNetwork}`;

/** Where a transfer's money waits between its funding and its payout (D20): platform accounts. */
export const TRANSFER_CLEARING = 'transfers_clearing';
export const FX_POSITION = 'fx';

/**
 * The accounts a payout moves between: a payout of its own is held on the organisation's balance and
 * given back to it; a transfer's payout leg waits on the transfers clearing account and goes back to the
 * FX position it was converted from (the transfer then refunds the sender, D20).
 */
function payoutAccounts(row: Pick<repo.PayoutRow, 'organisation_id' | 'currency' | 'transfer_id'>) {
  return row.transfer_id === null
    ? {
        waiting: ledger.held(row.organisation_id, row.currency),
        back: ledger.available(row.organisation_id, row.currency),
      }
    : {
        waiting: ledger.platform(TRANSFER_CLEARING, row.currency),
        back: ledger.platform(FX_POSITION, row.currency),
      };
}

export interface NewPayout {
  organisationId: string;
  beneficiaryId: string;
  currency: string;
  amount: Decimal;
  reference: string | null;
  transferId: string | null;
  externalId: string | null;
  /** The payout's id when the caller names it first (a transfer records its payout leg's id). */
  id?: string;
  /** The beneficiary's destination when the caller has just read it in the same transaction. */
  destination?: PayoutDestination;
}

/**
 * Creates a pending payout in the caller's transaction: debits the available balance (400
 * INSUFFICIENT_FUNDS if short; the caller's transaction then rolls back), publishes payout.created and
 * schedules its hand-off to the rail. A transfer's payout leg is created this way (D20) with its
 * `transferId`: its money is already on the transfers clearing account, so nothing is debited.
 */
export async function openPayout(tx: PoolClient, deps: AppDeps, payout: NewPayout): Promise<repo.PayoutRow> {
  const found =
    payout.destination ?? (await destinationOf(tx, deps, payout.organisationId, payout.beneficiaryId));
  // A transfer's payout leg pays the beneficiary the transfer was confirmed to, also one deleted since
  // (D19: transfers already confirmed go on); the transfer has already refused a blocked one.
  const destination = payout.transferId !== null && found ? found : payable(found);
  if (destination.currency !== payout.currency) {
    throw validationFailed(
      'currency',
      `The beneficiary is paid in ${destination.currency}, not ${payout.currency}`,
    );
  }
  const id = payout.id ?? newPublicId('pyt');
  let row: repo.PayoutRow;
  try {
    row = await repo.insertPayout(tx, {
      id,
      organisation_id: payout.organisationId,
      beneficiary_id: payout.beneficiaryId,
      currency: payout.currency,
      amount: formatAmount(payout.amount, payout.currency),
      reference: payout.reference,
      connector: deps.config.paymentConnector,
      transfer_id: payout.transferId,
      external_id: payout.externalId,
    });
  } catch (error) {
    if (pgErrorCode(error) === PG_UNIQUE_VIOLATION && pgConstraint(error) === 'payouts_external_id_uniq') {
      throw conflict('The organisation already has a payout with this external_id');
    }
    throw error;
  }
  if (payout.transferId === null) {
    await ledger.post(tx, {
      type: 'payout',
      resourceType: 'payout',
      resourceId: id,
      postings: [
        {
          account: ledger.available(payout.organisationId, payout.currency),
          amount: payout.amount.negated(),
        },
        { account: ledger.held(payout.organisationId, payout.currency), amount: payout.amount },
      ],
    });
  }
  await publishResourceEvent(tx, deps, {
    organisationId: payout.organisationId,
    sourceObjectType: 'payout',
    object: payoutView(row),
    action: 'created',
    previousStatus: null,
  });
  await scheduleHandOff(tx, id, pendingMs(deps, row));
  return row;
}

/**
 * How long a new payout stays `pending` before its hand-off, as its rail says (RailConnector.pendingMs). A
 * transfer's payout leg cannot be cancelled, so it goes at once.
 */
function pendingMs(deps: AppDeps, row: repo.PayoutRow): number {
  return row.transfer_id === null ? (CONNECTORS[row.connector]?.pendingMs?.(deps) ?? 0) : 0;
}

const handOffKey = (id: string): string => `${HAND_OFF_KIND}:${id}`;

/** How long a hand-off held for a beneficiary's review waits before it looks again, unless the review comes. */
export const HELD_HAND_OFF_RECHECK_MS = 60_000;

/** Schedules the payout's hand-off, now or `delayMs` later; one already scheduled stays as it is (one per payout). */
async function scheduleHandOff(tx: PoolClient, id: string, delayMs = 0): Promise<void> {
  await scheduleJob(tx, {
    kind: HAND_OFF_KIND,
    payload: { payout_id: id },
    runAt: new Date(Date.now() + delayMs),
    dedupeKey: handOffKey(id),
  });
}

export async function createPayout(
  deps: AppDeps,
  organisationId: string,
  input: CreatePayoutInput,
): Promise<PayoutView> {
  if (!findCurrency(input.currency)) throw validationFailed('currency', `Unknown currency ${input.currency}`);
  const amount = parseAmount(input.amount, input.currency, 'amount');
  // Payouts of one organisation share commits: its balance row is their hot spot.
  const row = await transactionGroups(deps.pool).run(organisationId, (tx) =>
    openPayout(tx, deps, {
      organisationId,
      beneficiaryId: input.beneficiary_id,
      currency: input.currency,
      amount,
      reference: input.reference ?? null,
      transferId: null,
      externalId: input.external_id ?? null,
    }),
  );
  return payoutView(row);
}

export async function getPayout(deps: AppDeps, organisationId: string, id: string): Promise<PayoutView> {
  const row = isPublicId('pyt', id) ? await repo.findPayout(deps.pool, organisationId, id) : undefined;
  if (!row) throw notFound('No payout matches the id');
  return payoutView(row);
}

export async function searchPayouts(
  deps: AppDeps,
  organisationId: string,
  body: PayoutSearchInput,
): Promise<Page<PayoutView>> {
  refuseFreeText(body, 'Payouts');
  const query = toSearchQuery<repo.SearchFilters, string>(body);
  const { rows, total } = await repo.search<repo.PayoutRow>(
    deps.pool,
    'payouts',
    organisationId,
    query.filters,
    query.sortBy,
    query.sortDirection,
    query.pageSize,
    query.offset,
  );
  return toPage(query, rows.map(payoutView), total);
}

/** Moves a locked payout with its ledger transaction and `payout.<status>` event. */
async function movePayout(
  tx: PoolClient,
  deps: AppDeps,
  row: repo.PayoutRow,
  to: Status,
  failureReason: FailureReason | null = null,
): Promise<repo.PayoutRow> {
  if (!PAYOUT_MOVES[row.status].includes(to)) {
    throw invalidState(`The payout is ${row.status}; it cannot become ${to}`);
  }
  const amount = new Decimal(row.amount);
  const org = row.organisation_id;
  const rail = ledger.platform(railAccount(row.connector), row.currency);
  const { waiting, back } = payoutAccounts(row);
  const move = (
    type: 'payout' | 'payout_reversal',
    from: ledger.Posting['account'],
    into: ledger.Posting['account'],
  ) =>
    ledger.post(tx, {
      type,
      resourceType: 'payout',
      resourceId: row.id,
      postings: [
        { account: from, amount: amount.negated() },
        { account: into, amount },
      ],
    });
  if (to === 'completed') await move('payout', waiting, rail);
  else if (to === 'failed' || to === 'cancelled') await move('payout_reversal', waiting, back);
  else if (to === 'returned') await move('payout_reversal', rail, back);
  const milestone = MILESTONE[to];
  const updated = await repo.updatePayout(tx, row.id, {
    status: to,
    ...(failureReason !== null ? { failure_reason: failureReason } : {}),
    ...(milestone ? { [milestone]: new Date() } : {}),
  });
  await publishResourceEvent(tx, deps, {
    organisationId: org,
    sourceObjectType: 'payout',
    object: payoutView(updated),
    action: to,
    previousStatus: row.status,
  });
  for (const area of deps.areas) {
    await area.onPayoutMoved?.(
      tx,
      {
        id: updated.id,
        organisationId: org,
        status: updated.status,
        previousStatus: row.status,
        transferId: updated.transfer_id,
        failureReason: updated.failure_reason,
        row: updated,
      },
      deps,
    );
  }
  return updated;
}

async function lockedPayout(
  tx: PoolClient,
  organisationId: string | null,
  id: string,
): Promise<repo.PayoutRow> {
  const row = isPublicId('pyt', id) ? await repo.lockPayout(tx, organisationId, id) : undefined;
  if (!row) throw notFound('No payout matches the id');
  return row;
}

/**
 * The client's cancel: only while pending (D21); the amount goes back to the available balance. A
 * transfer's payout leg is not cancelled on its own: its transfer is processing, which D20 does not let
 * the client cancel, and a cancelled leg would neither complete nor refund the transfer.
 */
export async function cancelPayout(deps: AppDeps, organisationId: string, id: string): Promise<PayoutView> {
  return transactionGroups(deps.pool).run(organisationId, async (tx) => {
    const row = await lockedPayout(tx, organisationId, id);
    if (row.status !== 'pending')
      throw invalidState(`The payout is ${row.status}; only a pending payout can be cancelled`);
    if (row.transfer_id !== null) {
      throw invalidState(
        `The payout is pending as the payout leg of transfer ${row.transfer_id}; it moves with its transfer and cannot be cancelled`,
      );
    }
    const cancelled = await movePayout(tx, deps, row, 'cancelled');
    await cancelJob(tx, handOffKey(row.id));
    return payoutView(cancelled);
  });
}

/**
 * The hand-off (a durable timer run by the worker): a pending payout goes to its connector and becomes
 * processing, with the hand-off recorded, all in the job's transaction: exactly once, also when a worker
 * dies mid-way (D21). No money goes to a name a sanctions review confirmed (D18): such a payout fails
 * with `compliance` (its amount back), and one whose beneficiary's new name waits for its review stays
 * pending: its hand-off looks again every HELD_HAND_OFF_RECHECK_MS, and at once when the review comes
 * (onScreeningReviewed).
 */
export async function handOff(tx: PoolClient, deps: AppDeps, id: string): Promise<void> {
  const row = await repo.lockPayout(tx, null, id);
  if (row?.status !== 'pending') return; // cancelled meanwhile
  const destination = await destinationOf(tx, deps, row.organisation_id, row.beneficiary_id);
  if (destination?.blocked) {
    await movePayout(tx, deps, row, 'failed', 'compliance');
    return;
  }
  if (destination?.reviewPending) {
    // Looked at again later too: a new name without a hit makes the beneficiary active with no review.
    await scheduleHandOff(tx, row.id, HELD_HAND_OFF_RECHECK_MS);
    return;
  }
  if (!(await repo.recordHandOff(tx, row.id, row.connector))) return;
  if (!destination) {
    // The beneficiary is gone from its area (it cannot be: beneficiaries are only ever marked deleted).
    await movePayout(tx, deps, row, 'failed', 'invalid_account');
    return;
  }
  const connector = CONNECTORS[row.connector];
  if (!connector) throw new Error(`unknown rail connector ${row.connector}`);
  await connector.submit(
    tx,
    {
      id: row.id,
      organisationId: row.organisation_id,
      currency: row.currency,
      amount: row.amount,
      accountIdentifier: destination.accountIdentifier,
    },
    deps,
  );
  await movePayout(tx, deps, row, 'processing');
}

/**
 * A review of a beneficiary's screening (D18) hands its held payouts off at once, in the review's
 * transaction: cleared, they go to the rail; confirmed, they fail with `compliance`. The payouts are
 * locked first, so that a hand-off running meanwhile leaves nothing held: one that locked the payout before
 * has finished (its next look is made due now here); one still to come, its job claimed, locks the payout
 * after the review's commit and reads the beneficiary as the review left it. The review never waits for a
 * running hand-off's job row, which would deadlock with that hand-off.
 */
export async function onScreeningReviewed(tx: PoolClient, screening: ReviewedScreening): Promise<void> {
  if (screening.source_object_type !== 'beneficiary' || screening.source_object_id === null) return;
  const ids = await repo.lockPendingPayoutIds(tx, screening.organisation_id, screening.source_object_id);
  for (const id of ids) {
    const key = handOffKey(id);
    if (!(await runJobNow(tx, key)) && !(await jobPending(tx, key))) await scheduleHandOff(tx, id);
  }
}

/** An outcome of the rail: the operator's (manual), the sandbox simulator's, or its simulation routes. */
export async function settlePayout(
  deps: AppDeps,
  organisationId: string | null,
  id: string,
  outcome: 'complete' | 'fail' | 'return',
  failureReason?: FailureReason,
): Promise<PayoutView> {
  return withTransaction(
    deps.pool,
    async (tx) =>
      payoutView(
        await settleLocked(tx, deps, await lockedPayout(tx, organisationId, id), outcome, failureReason),
      ),
    LOCK_ORDER_RETRIES,
  );
}

async function settleLocked(
  tx: PoolClient,
  deps: AppDeps,
  row: repo.PayoutRow,
  outcome: 'complete' | 'fail' | 'return',
  failureReason?: FailureReason,
): Promise<repo.PayoutRow> {
  if (outcome === 'complete') {
    if (failureReason !== undefined) {
      throw validationFailed(
        'failure_reason',
        'A payout that completes has no failure_reason; it applies to fail and return',
      );
    }
    if (row.status !== 'processing')
      throw invalidState(`The payout is ${row.status}; only a processing payout can complete`);
    return movePayout(tx, deps, row, 'completed');
  }
  if (outcome === 'fail') {
    if (failureReason === 'returned') {
      throw validationFailed(
        'failure_reason',
        'returned is the reason of a return; a failure is account_closed, invalid_account, rejected_by_bank or compliance',
      );
    }
    if (row.status !== 'processing')
      throw invalidState(`The payout is ${row.status}; only a processing payout can fail`);
    return movePayout(tx, deps, row, 'failed', failureReason ?? 'rejected_by_bank');
  }
  if (row.status !== 'completed')
    throw invalidState(`The payout is ${row.status}; only a completed payout can be returned`);
  // A rail returns a payment with its own reason (an account closed after the credit, say); `returned`
  // when it gives none.
  return movePayout(tx, deps, row, 'returned', failureReason ?? 'returned');
}

/** The sandbox simulator's step (a durable timer): complete or fail, and a return after a completion. */
export async function sandboxStep(
  tx: PoolClient,
  deps: AppDeps,
  payload: Record<string, unknown>,
): Promise<void> {
  const id = String(payload.payout_id);
  const row = await repo.lockPayout(tx, null, id);
  // A step whose payout was moved meanwhile (by a simulation route) has nothing left to do.
  const expected: Status = payload.action === 'return' ? 'completed' : 'processing';
  if (row?.status !== expected) return;
  const action = payload.action as 'complete' | 'fail' | 'return';
  await settleLocked(tx, deps, row, action, payload.failure_reason as FailureReason | undefined);
  if (action === 'complete' && payload.then_return === true) {
    await scheduleJob(tx, {
      kind: SANDBOX_STEP_KIND,
      payload: { payout_id: id, action: 'return' },
      runAt: new Date(Date.now() + deps.config.sandboxStepDelayMs),
      dedupeKey: `${SANDBOX_STEP_KIND}:${id}:return`,
    });
  }
}

/** The manual rail's list for the operator: payouts waiting in processing, oldest first. */
export async function payoutsWaiting(deps: AppDeps, limit: number): Promise<PayoutView[]> {
  return (await repo.payoutsWaiting(deps.pool, 'manual', limit)).map(payoutView);
}

/** The rails' backlog for a worker's /metrics: on the manual rail, the payouts waiting to be paid by hand. */
export const payoutGauges: GaugeGroup = {
  gauges: {
    payouts_processing:
      'Payouts handed to their rail and waiting for its outcome (on the manual rail: to be paid by hand)',
    payouts_processing_oldest_seconds:
      'How long the oldest processing payout has waited since its hand-off (0 when none)',
  },
  labelNames: ['connector'],
  async read(db) {
    return readingsByLabel(
      'connector',
      connectorNames(),
      await repo.processingBacklog(db),
      (row) => row.connector,
      (row) => ({
        payouts_processing: row?.processing ?? 0,
        payouts_processing_oldest_seconds: row?.oldestSeconds ?? 0,
      }),
    );
  },
};

/**
 * What the operator needs to pay a payout by hand (manual rail, D21): its amount and reference, and its
 * beneficiary with the account opened as the beneficiary's own GET answers it, through the area boundary
 * (destinationOf). Any payout of any organisation, whatever its status. A deleted beneficiary's destination
 * is answered too, with its status `deleted`: a payout made before the delete is still paid (a transfer's
 * payout leg goes on after its beneficiary is deleted, D19, D20).
 */
export async function payoutDestination(deps: AppDeps, id: string): Promise<PayoutDestinationView> {
  const row = isPublicId('pyt', id) ? await repo.findPayoutOfAnyOrganisation(deps.pool, id) : undefined;
  if (!row) throw notFound('No payout matches the id');
  const destination = await destinationOf(deps.pool, deps, row.organisation_id, row.beneficiary_id);
  // Beneficiaries are only ever marked deleted, never removed: a payout always has its destination.
  if (!destination) throw new Error(`payout ${row.id}: no area knows beneficiary ${row.beneficiary_id}`);
  return {
    payout_id: row.id,
    status: row.status,
    currency: row.currency,
    amount: formatAmount(row.amount, row.currency),
    reference: row.reference,
    beneficiary: {
      id: destination.beneficiaryId,
      status: destination.status,
      blocked: destination.blocked,
      review_pending: destination.reviewPending,
      entity_type: destination.entityType,
      name: destination.name,
      address: destination.address,
      destination_country: destination.country,
      destination_currency: destination.currency,
      payout_method: destination.payoutMethod,
      account: destination.account,
      bank: destination.bank,
    },
  };
}
