// Transfers (D20): a confirmed quote on its way from funding to payout.
//
//   confirm -> in_review (the beneficiary's re-screening hit) -> awaiting_deposit | processing | rejected
//   confirm -> awaiting_deposit (bank transfer, crypto) -> processing (a deposit of at least the amount)
//   confirm -> processing (balance) -> completed (payout completed) | refunding -> refunded (payout failed
//   or returned); awaiting_deposit -> expired | cancelled | rejected (the beneficiary was blocked);
//   in_review -> cancelled | expired (unfunded at its deadline).
//
// Money (ledger, D21): funding takes the source amount from the available balance (the net amount to the
// transfers clearing account, type transfer_funding; the fee to the platform's fees, type fee); the payout
// leg converts the net amount through the FX position into the destination currency on the clearing
// account, from where the payout pays it to the rail. A refund gives the source amount back.
import * as ledger from '../balances/ledger.ts';
import { findBalance } from '../balances/repository.ts';
import type { NetworkCode } from '../crypto/networks.ts';
import { depositNetwork } from '../crypto/service.ts';
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
import { creditDeposit, depositView, openDeposit } from '../payments/deposits.ts';
import {
  destinationOf,
  FX_POSITION,
  openPayout,
  payable,
  payoutView,
  TRANSFER_CLEARING,
} from '../payments/payouts.ts';
import * as payments from '../payments/repository.ts';
import type { MovedPayout, PayoutDestination, ReceivedDeposit, ReviewedScreening } from '../platform/area.ts';
import type { AppDeps } from '../platform/deps.ts';
import { AppError, conflict, invalidState, notFound, validationFailed } from '../platform/errors.ts';
import { isPublicId, newPublicId } from '../platform/ids.ts';
import { cancelJob, scheduleJob } from '../platform/jobs/runner.ts';
import { ownEntry } from '../platform/lookup.ts';
import {
  checkAmountText,
  Decimal,
  formatAmount,
  formatRate,
  isCryptoAsset,
  parseAmount,
} from '../platform/money.ts';
import { type Page, toPage, toSearchQuery } from '../platform/search.ts';
import { toIso } from '../platform/time.ts';
import { screen } from '../sanctions/service.ts';
import { publishResourceEvent } from '../webhooks/publish.ts';
import { acceptQuote, expireIfDue } from './quotes.ts';
import * as repo from './transfer-repository.ts';
import type { ConfirmInput, TransferSearchInput, TransferStatus, TransferView } from './transfer-schemas.ts';

/** The platform account that earns the transfers' fees (D20, D21). */
export const FEES = 'fees';

export const EXPIRE_TRANSFER_KIND = 'transfers.expire_transfer';

/** What each status may become (D20); anything else is 400 INVALID_STATE. */
const MOVES: Readonly<Record<TransferStatus, readonly TransferStatus[]>> = {
  in_review: ['awaiting_deposit', 'processing', 'rejected', 'cancelled', 'expired'],
  awaiting_deposit: ['processing', 'expired', 'cancelled', 'rejected'],
  processing: ['completed', 'refunding'],
  completed: ['refunding'],
  refunding: ['refunded'],
  rejected: [],
  cancelled: [],
  expired: [],
  refunded: [],
};

export async function transferView(db: Queryable, row: repo.TransferRow): Promise<TransferView> {
  const deposit = row.deposit_id
    ? await payments.findDeposit(db, row.organisation_id, row.deposit_id)
    : undefined;
  const payout = row.payout_id
    ? await payments.findPayout(db, row.organisation_id, row.payout_id)
    : undefined;
  return buildTransferView(row, deposit, payout);
}

/** The transfer as GET returns it, from its row and its legs' rows. */
function buildTransferView(
  row: repo.TransferRow,
  deposit: payments.DepositRow | undefined,
  payout: payments.PayoutRow | undefined,
): TransferView {
  const depositLeg = deposit ? depositView(deposit) : null;
  return {
    id: row.id,
    quote_id: row.quote_id,
    corridor_id: row.corridor_id,
    beneficiary_id: row.beneficiary_id,
    external_id: row.external_id,
    reference: row.reference,
    purpose: row.purpose as TransferView['purpose'],
    funding_method: row.funding_method,
    source_currency: row.source_currency,
    source_amount: formatAmount(row.source_amount, row.source_currency),
    fee_amount: formatAmount(row.fee_amount, row.source_currency),
    rate: formatRate(new Decimal(row.rate)),
    destination_currency: row.destination_currency,
    destination_amount: formatAmount(row.destination_amount, row.destination_currency),
    status: row.status,
    status_reason: row.status_reason,
    deposit_instructions: depositLeg?.instructions ?? null,
    deposit: depositLeg,
    payout: payout ? payoutView(payout) : null,
    screening_id: row.screening_id,
    expires_at: toIso(row.expires_at),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
    completed_at: toIso(row.completed_at),
  };
}

/**
 * Moves a locked transfer and publishes `transfer.<status>` in the same transaction. `payout`: the payout
 * leg as this transaction left it, when the caller has it (a transfer without a deposit leg then needs no
 * read for its event).
 */
async function move(
  tx: PoolClient,
  deps: AppDeps,
  row: repo.TransferRow,
  to: TransferStatus,
  changes: Parameters<typeof repo.updateTransfer>[2] = {},
  payout?: payments.PayoutRow,
): Promise<repo.TransferRow> {
  if (!MOVES[row.status].includes(to))
    throw invalidState(`The transfer is ${row.status}; it cannot become ${to}`);
  const updated = await repo.updateTransfer(tx, row.id, { ...changes, status: to });
  await publishResourceEvent(tx, deps, {
    organisationId: row.organisation_id,
    sourceObjectType: 'transfer',
    object:
      payout !== undefined && updated.deposit_id === null && updated.payout_id === payout.id
        ? buildTransferView(updated, undefined, payout)
        : await transferView(tx, updated),
    action: to,
    previousStatus: row.status,
  });
  return updated;
}

/** Taking the source amount from the available balance: net to the clearing account, the fee to the platform. */
function funding(row: repo.TransferRow): ledger.LedgerTransaction[] {
  const fee = new Decimal(row.fee_amount);
  const net = new Decimal(row.source_amount).minus(fee);
  const available = ledger.available(row.organisation_id, row.source_currency);
  const transactions: ledger.LedgerTransaction[] = [
    {
      type: 'transfer_funding',
      resourceType: 'transfer',
      resourceId: row.id,
      postings: [
        { account: available, amount: net.negated() },
        { account: ledger.platform(TRANSFER_CLEARING, row.source_currency), amount: net },
      ],
    },
  ];
  if (fee.gt(0)) {
    transactions.push({
      type: 'fee',
      resourceType: 'transfer',
      resourceId: row.id,
      postings: [
        { account: available, amount: fee.negated() },
        { account: ledger.platform(FEES, row.source_currency), amount: fee },
      ],
    });
  }
  return transactions;
}

/** Gives the source amount back to the available balance (the fee too: nothing was delivered). */
async function refund(tx: PoolClient, row: repo.TransferRow, from: 'clearing' | 'fx'): Promise<void> {
  const fee = new Decimal(row.fee_amount);
  const net = new Decimal(row.source_amount).minus(fee);
  const available = ledger.available(row.organisation_id, row.source_currency);
  const postings: ledger.Posting[] = [
    {
      account: ledger.platform(from === 'clearing' ? TRANSFER_CLEARING : FX_POSITION, row.source_currency),
      amount: net.negated(),
    },
    { account: available, amount: net },
  ];
  if (fee.gt(0)) {
    postings.push(
      { account: ledger.platform(FEES, row.source_currency), amount: fee.negated() },
      { account: available, amount: fee },
    );
  }
  await ledger.post(tx, { type: 'transfer_refund', resourceType: 'transfer', resourceId: row.id, postings });
}

/** The payout leg's conversion: the net amount through the FX position into the destination currency. */
function conversion(row: repo.TransferRow): ledger.LedgerTransaction {
  const net = new Decimal(row.source_amount).minus(new Decimal(row.fee_amount));
  const destination = new Decimal(row.destination_amount);
  return {
    type: 'transfer_funding',
    resourceType: 'transfer',
    resourceId: row.id,
    postings: [
      { account: ledger.platform(TRANSFER_CLEARING, row.source_currency), amount: net.negated() },
      { account: ledger.platform(FX_POSITION, row.source_currency), amount: net },
      { account: ledger.platform(FX_POSITION, row.destination_currency), amount: destination.negated() },
      { account: ledger.platform(TRANSFER_CLEARING, row.destination_currency), amount: destination },
    ],
  };
}

/**
 * The payout to the beneficiary of a funded transfer, for the destination amount; its conversion is
 * posted by the caller (with the funding when both happen in one transaction).
 */
function openPayoutLeg(
  tx: PoolClient,
  deps: AppDeps,
  row: repo.TransferRow,
  known: { id?: string; destination?: PayoutDestination } = {},
): Promise<payments.PayoutRow> {
  return openPayout(tx, deps, {
    organisationId: row.organisation_id,
    beneficiaryId: row.beneficiary_id,
    currency: row.destination_currency,
    amount: new Decimal(row.destination_amount),
    reference: row.reference,
    transferId: row.id,
    externalId: null,
    ...known,
  });
}

/**
 * The deposit leg of a transfer funded from outside: instructions and a unique reference or address. It
 * outlives the transfer's funding deadline by DEPOSIT_TTL_SECONDS: money a payer sends late (or after a
 * cancel) still finds its reference and is credited to the balance, though the transfer no longer takes it.
 */
async function createDepositLeg(tx: PoolClient, deps: AppDeps, row: repo.TransferRow): Promise<string> {
  const deposit = await openDeposit(tx, deps, {
    organisationId: row.organisation_id,
    method: row.funding_method as 'bank_transfer' | 'crypto',
    currency: row.source_currency,
    expectedAmount: new Decimal(row.source_amount),
    transferId: row.id,
    externalId: null,
    ...(row.network !== null ? { network: row.network } : {}),
    // A transfer funded by a deposit has a funding deadline.
    expiresAt: new Date(row.expires_at!.getTime() + deps.config.depositTtlSeconds * 1000),
  });
  return deposit.id;
}

/**
 * Why the transfer's payout would be refused before any money moved, or null when it goes on: a
 * beneficiary blocked by a sanctions review since the confirm, also one deleted after it was blocked (the
 * transfer is then rejected, D20). One deleted since goes on (D19: "transfers already confirmed go on"); one
 * whose new name waits for its review goes on to a payout leg that the hand-off holds until the review.
 */
function payoutRefusal(destination: PayoutDestination | undefined): string | null {
  if (!destination) return 'the beneficiary no longer exists';
  if (destination.blocked) return 'the beneficiary was blocked by a sanctions review';
  return null;
}

const NOT_FUNDED_IN_TIME = 'not funded in time';

/**
 * Unfunded at its funding deadline, the transfer is expired (D20) whether or not its timer has run yet: a
 * timer runs late when the workers lag or restart, and nothing may move the transfer on meanwhile.
 */
function pastFundingDeadline(row: repo.TransferRow, now: Date = new Date()): boolean {
  return !row.funded && row.expires_at !== null && row.expires_at <= now;
}

/**
 * After a cleared review: balance funding (taken at confirm) pays out, the others wait for their deposit.
 * A beneficiary blocked meanwhile rejects the transfer (money taken goes back), and a transfer still
 * unfunded past its funding deadline expires: the review itself always succeeds.
 */
async function proceed(tx: PoolClient, deps: AppDeps, row: repo.TransferRow): Promise<repo.TransferRow> {
  const destination = await destinationOf(tx, deps, row.organisation_id, row.beneficiary_id);
  const refusal = payoutRefusal(destination);
  if (refusal !== null) return stop(tx, deps, row, 'rejected', refusal);
  if (row.funding_method === 'balance') {
    await ledger.post(tx, conversion(row));
    const payout = await openPayoutLeg(tx, deps, row, { destination: destination! });
    return move(tx, deps, row, 'processing', { payout_id: payout.id }, payout);
  }
  if (pastFundingDeadline(row)) return stop(tx, deps, row, 'expired', NOT_FUNDED_IN_TIME);
  const unfundable = fundingRefusal(deps, row);
  if (unfundable !== null) return stop(tx, deps, row, 'rejected', unfundable);
  return move(tx, deps, row, 'awaiting_deposit', { deposit_id: await createDepositLeg(tx, deps, row) });
}

/**
 * Why a transfer held in review can no longer open its deposit leg, or null: the collection account of its
 * currency or the key of its network was removed from the configuration since the confirm, which checked
 * them (assertFundable). It is rejected, since nobody could pay it.
 */
function fundingRefusal(deps: AppDeps, row: repo.TransferRow): string | null {
  try {
    assertFundable(deps, row.source_currency, {
      funding_method: row.funding_method as ConfirmInput['funding_method'],
      ...(row.network !== null ? { network: row.network } : {}),
    });
    return null;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return error.message;
  }
}

export async function confirmQuote(
  deps: AppDeps,
  organisationId: string,
  quoteId: string,
  input: ConfirmInput,
): Promise<TransferView> {
  try {
    return await withTransaction(deps.pool, (tx) => confirmIn(tx, deps, organisationId, quoteId, input));
  } catch (error) {
    // The refused confirm rolled back; the quote's expiry is recorded on its own (D20).
    if (error instanceof AppError && error.code === 'QUOTE_EXPIRED') {
      await expireIfDue(deps, organisationId, quoteId);
    }
    throw error;
  }
}

/**
 * Refuses at confirm a funding method whose deposit leg could not be opened, naming the confirm's own
 * fields: a transfer held in review opens its leg only when the review clears it, and that review must
 * not be the one to fail. Answers the network a crypto deposit is to arrive on (null for the others).
 */
function assertFundable(
  deps: AppDeps,
  currency: string,
  input: Pick<ConfirmInput, 'funding_method' | 'network'>,
): NetworkCode | null {
  if (input.funding_method === 'bank_transfer' && !ownEntry(deps.config.depositBankAccounts, currency)) {
    throw validationFailed(
      'funding_method',
      `Bank transfers in ${currency} cannot be received (no collection account); fund the transfer another way`,
    );
  }
  return input.funding_method === 'crypto' ? depositNetwork(deps, input.network, currency) : null;
}

async function confirmIn(
  tx: PoolClient,
  deps: AppDeps,
  organisationId: string,
  quoteId: string,
  input: ConfirmInput,
): Promise<TransferView> {
  const quote = await acceptQuote(tx, organisationId, quoteId);
  const beneficiary = payable(await destinationOf(tx, deps, organisationId, input.beneficiary_id));
  if (
    beneficiary.country !== quote.destination_country ||
    beneficiary.currency !== quote.destination_currency ||
    beneficiary.payoutMethod !== quote.payout_method
  ) {
    throw validationFailed(
      'beneficiary_id',
      `The quote's corridor pays ${quote.destination_currency} by ${quote.payout_method} in ${quote.destination_country}; ` +
        `the beneficiary is paid ${beneficiary.currency} by ${beneficiary.payoutMethod} in ${beneficiary.country}`,
    );
  }
  if (input.funding_method === 'crypto' && !isCryptoAsset(quote.source_currency)) {
    throw validationFailed(
      'funding_method',
      `crypto funding needs a crypto source currency, not ${quote.source_currency}`,
    );
  }
  if (input.funding_method !== 'crypto' && input.network !== undefined) {
    throw validationFailed('network', 'network is for crypto funding only');
  }
  const network = assertFundable(deps, quote.source_currency, input);
  const id = newPublicId('trf');
  // The beneficiary is screened again (D20), with what it was screened with (its birth date and country
  // weigh in the score): a hit holds the transfer in review until the operator decides.
  const screening = await screen(
    tx,
    deps,
    organisationId,
    {
      entity_type: beneficiary.entityType === 'business' ? 'organisation' : 'individual',
      name: beneficiary.name,
      ...(beneficiary.dateOfBirth !== null ? { date_of_birth: beneficiary.dateOfBirth } : {}),
      country: beneficiary.address.country,
    },
    { type: 'transfer', id },
  );
  const held = screening.match_status === 'potential_match';
  const status: TransferStatus = held
    ? 'in_review'
    : input.funding_method === 'balance'
      ? 'processing'
      : 'awaiting_deposit';
  // The payout leg's id is known before the transfer is written, so that one insert records both.
  const payoutId = status === 'processing' ? newPublicId('pyt') : null;
  let row: repo.TransferRow;
  try {
    row = await repo.insertTransfer(tx, {
      id,
      organisation_id: organisationId,
      quote_id: quote.id,
      corridor_id: quote.corridor_id,
      beneficiary_id: input.beneficiary_id,
      external_id: input.external_id ?? null,
      reference: input.reference ?? null,
      purpose: input.purpose ?? null,
      funding_method: input.funding_method,
      source_currency: quote.source_currency,
      source_amount: quote.source_amount,
      fee_amount: quote.fee_amount,
      rate: quote.rate,
      destination_currency: quote.destination_currency,
      destination_amount: quote.destination_amount,
      status,
      network,
      // Only a transfer that waits for its money has a funding deadline.
      expires_at:
        input.funding_method === 'balance'
          ? null
          : new Date(Date.now() + deps.config.transferFundingTtlSeconds * 1000),
      funded: input.funding_method === 'balance',
      payout_id: payoutId,
      screening_id: screening.id,
    });
  } catch (error) {
    if (pgErrorCode(error) === PG_UNIQUE_VIOLATION && pgConstraint(error) === 'transfers_external_id_uniq') {
      throw conflict('The organisation already has a transfer with this external_id');
    }
    throw error;
  }
  const payout =
    payoutId === null
      ? undefined
      : await openPayoutLeg(tx, deps, row, { id: payoutId, destination: beneficiary });
  if (status === 'awaiting_deposit') {
    row = await repo.updateTransfer(tx, id, { deposit_id: await createDepositLeg(tx, deps, row) });
  }
  // transfer.created announces the transfer with its first status (D14); the event of that status follows
  // (transfer.in_review, transfer.processing; awaiting_deposit has no code), so that a subscription to a
  // status hears of every transfer that enters it (D8), as beneficiary events do at create.
  const view = payout ? buildTransferView(row, undefined, payout) : await transferView(tx, row);
  for (const action of ['created', status] as const) {
    await publishResourceEvent(tx, deps, {
      organisationId,
      sourceObjectType: 'transfer',
      object: view,
      action,
      previousStatus: null,
    });
  }
  if (row.expires_at !== null) {
    await scheduleJob(tx, {
      kind: EXPIRE_TRANSFER_KIND,
      payload: { transfer_id: id },
      runAt: row.expires_at,
      dedupeKey: `${EXPIRE_TRANSFER_KIND}:${id}`,
    });
  }
  // Balance funding takes the money at confirm (400 INSUFFICIENT_FUNDS: the whole confirm rolls back,
  // nothing is created), also while a screening hit holds the transfer (a confirmed match gives it
  // back), in one round trip with the payout leg's conversion. It is the transaction's last step: the
  // balance's row lock is then held only until the commit, so that confirms of one organisation do the
  // rest of their work side by side.
  if (input.funding_method === 'balance') {
    await ledger.postAll(tx, [...(payout ? [conversion(row)] : []), ...funding(row)]);
  }
  return view;
}

async function locked(tx: PoolClient, organisationId: string | null, id: string): Promise<repo.TransferRow> {
  const row = isPublicId('trf', id) ? await repo.lockTransfer(tx, organisationId, id) : undefined;
  if (!row) throw notFound('No transfer matches the id');
  return row;
}

export async function getTransfer(deps: AppDeps, organisationId: string, id: string): Promise<TransferView> {
  const row = isPublicId('trf', id) ? await repo.findTransfer(deps.pool, organisationId, id) : undefined;
  if (!row) throw notFound('No transfer matches the id');
  return transferView(deps.pool, row);
}

export async function searchTransfers(
  deps: AppDeps,
  organisationId: string,
  body: TransferSearchInput,
): Promise<Page<TransferView>> {
  const query = toSearchQuery<repo.TransferFilters, string>(body);
  // NUL cannot be stored in text, so a search holding it matches nothing (PostgreSQL would refuse it).
  if (query.search?.includes('\u0000')) return toPage(query, [], 0);
  const { rows, total } = await repo.searchTransfers(
    deps.pool,
    organisationId,
    query.filters,
    query.search,
    query.sortBy,
    query.sortDirection,
    query.pageSize,
    query.offset,
  );
  // The page's legs in two statements, not two per transfer.
  const deposits = await payments.findDepositsByIds(deps.pool, organisationId, legIds(rows, 'deposit_id'));
  const payouts = await payments.findPayoutsByIds(deps.pool, organisationId, legIds(rows, 'payout_id'));
  const items = rows.map((row) =>
    buildTransferView(
      row,
      row.deposit_id ? deposits.get(row.deposit_id) : undefined,
      row.payout_id ? payouts.get(row.payout_id) : undefined,
    ),
  );
  return toPage(query, items, total);
}

const legIds = (rows: repo.TransferRow[], column: 'deposit_id' | 'payout_id'): string[] =>
  rows.flatMap((row) => (row[column] === null ? [] : [row[column]]));

/** Ends a transfer that will not go on: its deposit leg stops waiting and any money taken goes back. */
async function stop(
  tx: PoolClient,
  deps: AppDeps,
  row: repo.TransferRow,
  to: 'cancelled' | 'expired' | 'rejected',
  reason: string | null,
  changes: Parameters<typeof repo.updateTransfer>[2] = {},
): Promise<repo.TransferRow> {
  if (!MOVES[row.status].includes(to))
    throw invalidState(`The transfer is ${row.status}; it cannot become ${to}`);
  if (row.funded) await refund(tx, row, 'clearing');
  const stopped = await move(tx, deps, row, to, { ...changes, status_reason: reason, funded: false });
  await cancelJob(tx, `${EXPIRE_TRANSFER_KIND}:${row.id}`);
  return stopped;
}

/**
 * The client's cancel: only from awaiting_deposit or in_review (D20). One past its funding deadline is
 * expired instead, and the cancel is refused as it would be had the timer already run.
 */
export async function cancelTransfer(
  deps: AppDeps,
  organisationId: string,
  id: string,
): Promise<TransferView> {
  const cancelled = await transactionGroups(deps.pool).run(organisationId, async (tx) => {
    const row = await locked(tx, organisationId, id);
    const cancellable = row.status === 'awaiting_deposit' || row.status === 'in_review';
    if (cancellable && pastFundingDeadline(row)) {
      await stop(tx, deps, row, 'expired', NOT_FUNDED_IN_TIME);
      return undefined;
    }
    if (!cancellable) throw notCancellable(row.status);
    return transferView(tx, await stop(tx, deps, row, 'cancelled', 'cancelled by the client'));
  });
  if (cancelled === undefined) throw notCancellable('expired');
  return cancelled;
}

const notCancellable = (status: string) =>
  invalidState(
    `The transfer is ${status}; only a transfer awaiting its deposit or in review can be cancelled`,
  );

/**
 * The transfer's durable timer: unfunded at expires_at, it expires (D20), also while a screening hit
 * holds it in review (its deadline does not wait for the review; a balance-funded one has none).
 */
export async function expireTransferJob(tx: PoolClient, deps: AppDeps, id: string): Promise<void> {
  const row = await repo.lockTransfer(tx, null, id);
  if (!row || row.funded || (row.status !== 'awaiting_deposit' && row.status !== 'in_review')) return;
  await stop(tx, deps, row, 'expired', NOT_FUNDED_IN_TIME);
}

/** Sandbox: expire a transfer awaiting its deposit now. */
export async function expireTransferNow(
  deps: AppDeps,
  organisationId: string,
  id: string,
): Promise<TransferView> {
  return withTransaction(
    deps.pool,
    async (tx) => {
      const row = await locked(tx, organisationId, id);
      if (row.status !== 'awaiting_deposit')
        throw invalidState(`The transfer is ${row.status}; only one awaiting its deposit can expire`);
      // It expires now, not at the end of its funding time: expires_at says when (D24).
      const now = new Date();
      const expiresAt = row.expires_at !== null && row.expires_at < now ? row.expires_at : now;
      return transferView(
        tx,
        await stop(tx, deps, row, 'expired', NOT_FUNDED_IN_TIME, { expires_at: expiresAt }),
      );
    },
    LOCK_ORDER_RETRIES,
  );
}

/**
 * A deposit was credited (D20). A deposit of the transfer of at least the source amount funds it: the
 * source amount is taken from the balance the deposit just credited (an excess stays there), the payout
 * starts, and the transfer shows that deposit. A smaller one stays credited to the balance and the
 * transfer keeps waiting (waitAgain).
 *
 * The transfer's deposits are its leg and the payments made on earlier instructions of it, each credited
 * as a deposit of its own with the transfer's id: for crypto, every further transaction to the address its
 * instructions showed when the transaction was seen (depositAwaitedAt), since the payer who sends the full
 * amount to that address has done what the transfer asked, whatever else arrived there first; for a bank
 * transfer, a further payment quoting the reference of one of its earlier legs (the operator records it).
 * The transfer's row lock makes the first of them to be credited the one that funds it; those credited
 * after stay on the balance, as does money sent later to a leg the transfer no longer waits on.
 */
export async function onDepositReceived(
  tx: PoolClient,
  deps: AppDeps,
  deposit: ReceivedDeposit,
): Promise<void> {
  if (deposit.transferId === null) return;
  const row = await repo.lockTransfer(tx, deposit.organisationId, deposit.transferId);
  if (row?.status !== 'awaiting_deposit') return;
  const credited = `deposit ${deposit.id} brought ${deposit.amount} ${deposit.currency}`;
  // The money that arrived stays credited whatever happens to the transfer: one past its funding deadline
  // expires, and one whose payout would be refused is rejected, before anything is taken; neither asks for
  // more money.
  if (pastFundingDeadline(row)) {
    await stop(tx, deps, row, 'expired', `${NOT_FUNDED_IN_TIME}; ${credited}, credited to the balance`);
    return;
  }
  const destination = await destinationOf(tx, deps, row.organisation_id, row.beneficiary_id);
  const refusal = payoutRefusal(destination);
  if (refusal !== null) {
    await stop(tx, deps, row, 'rejected', `${refusal}; ${credited}, credited to the balance`);
    return;
  }
  const enough = new Decimal(deposit.amount).gte(new Decimal(row.source_amount));
  if (enough) {
    // A balance that was below zero (a deposit reversed after it was spent) may still be short after the
    // credit: the transfer then waits, as after an under-payment. The credit holds the balance's row lock
    // until commit, so what is read here is what the funding would debit.
    const balance = await findBalance(tx, row.organisation_id, row.source_currency);
    if (balance && new Decimal(balance.available).gte(new Decimal(row.source_amount))) {
      await ledger.postAll(tx, [...funding(row), conversion(row)]);
      await cancelJob(tx, `${EXPIRE_TRANSFER_KIND}:${row.id}`);
      const payout = await openPayoutLeg(tx, deps, row, { destination: destination! });
      // An earlier under-payment's reason no longer holds once the transfer is funded.
      await move(
        tx,
        deps,
        row,
        'processing',
        { funded: true, payout_id: payout.id, deposit_id: deposit.id, status_reason: null },
        payout,
      );
      return;
    }
  }
  await waitAgain(
    tx,
    deps,
    row,
    deposit.id,
    enough
      ? `${credited}, credited to the balance, which stays below the source amount`
      : `${credited}, less than the source amount; it was credited to the balance`,
  );
}

/**
 * A transfer still awaiting its deposit after one that did not fund it. It asks the payer for the full
 * amount again, on a new leg with a new address or reference, only when nothing it awaits could still
 * fund it: not while its leg's own transaction is still to come (the deposit was another transaction to
 * its address), nor while another transaction of at least the source amount to its address awaits its
 * confirmations (the transfer then shows that one).
 */
async function waitAgain(
  tx: PoolClient,
  deps: AppDeps,
  row: repo.TransferRow,
  depositId: string,
  reason: string,
): Promise<void> {
  if (row.deposit_id !== depositId) {
    await repo.updateTransfer(tx, row.id, { status_reason: reason });
    return;
  }
  const inFlight = await payments.findDetectedDepositOf(tx, row.organisation_id, row.id, row.source_amount);
  await repo.updateTransfer(tx, row.id, {
    deposit_id: inFlight?.id ?? (await createDepositLeg(tx, deps, row)),
    status_reason: reason,
  });
}

/**
 * The transfer awaiting its deposit whose instructions show this address (Area.depositAwaitedAt): read
 * without a lock, since onDepositReceived decides under the transfer's lock whether the deposit funds it.
 */
export async function depositAwaitedAt(
  db: Queryable,
  at: { organisationId: string; network: string; address: string; currency: string },
): Promise<{ transferId: string; expectedAmount: string | null } | undefined> {
  const seen = await payments.findTransferDepositAt(
    db,
    at.organisationId,
    at.network,
    at.address,
    at.currency,
  );
  if (!seen?.transfer_id) return undefined;
  const row = await repo.findTransfer(db, at.organisationId, seen.transfer_id);
  if (row?.status !== 'awaiting_deposit' || row.deposit_id === null) return undefined;
  const shown =
    row.deposit_id === seen.id ? seen : await payments.findDeposit(db, at.organisationId, row.deposit_id);
  if (shown?.address !== at.address || shown.network !== at.network || shown.currency !== at.currency) {
    return undefined;
  }
  return { transferId: row.id, expectedAmount: shown.expected_amount };
}

/** The payout leg moved (D20): completed completes the transfer; failed or returned refunds it. */
export async function onPayoutMoved(tx: PoolClient, deps: AppDeps, payout: MovedPayout): Promise<void> {
  // A payout leg that starts processing moves nothing of its transfer.
  if (payout.transferId === null || !['completed', 'failed', 'returned'].includes(payout.status)) return;
  const row = await repo.lockTransfer(tx, payout.organisationId, payout.transferId);
  if (!row || row.payout_id !== payout.id) return;
  if (payout.status === 'completed' && row.status === 'processing') {
    await move(tx, deps, row, 'completed', { completed_at: new Date() }, payout.row);
  } else if (payout.status === 'failed' || payout.status === 'returned') {
    const refunding = await move(
      tx,
      deps,
      row,
      'refunding',
      { status_reason: `payout ${payout.status}: ${payout.failureReason}` },
      payout.row,
    );
    await refund(tx, refunding, 'fx');
    await move(tx, deps, refunding, 'refunded', { funded: false }, payout.row);
  }
}

/** The operator reviewed the transfer's screening hit (D18, D20): cleared goes on, confirmed rejects. */
export async function onScreeningReviewed(
  tx: PoolClient,
  deps: AppDeps,
  screening: ReviewedScreening,
): Promise<void> {
  if (screening.source_object_type !== 'transfer' || screening.source_object_id === null) return;
  const row = await repo.lockTransfer(tx, screening.organisation_id, screening.source_object_id);
  if (row?.screening_id !== screening.id) return;
  // The confirmed name is the beneficiary's: no payment goes to it, this transfer's or any other.
  if (screening.match_status === 'confirmed_match') {
    const payee = {
      organisationId: row.organisation_id,
      beneficiaryId: row.beneficiary_id,
      name: screening.name,
    };
    for (const area of deps.areas) await area.blockPayee?.(tx, payee, deps);
  }
  if (row.status !== 'in_review') return;
  if (screening.match_status === 'confirmed_match') {
    await stop(tx, deps, row, 'rejected', 'the beneficiary matched a sanctions list');
    return;
  }
  await proceed(tx, deps, row);
}

/** Sandbox: a deposit matching the transfer's instructions arrives (default: the source amount). */
export async function fundTransfer(
  deps: AppDeps,
  organisationId: string,
  id: string,
  amountText: string | undefined,
): Promise<TransferView> {
  if (amountText !== undefined) checkAmountText(amountText, 'amount');
  return transactionGroups(deps.pool).run(organisationId, async (tx) => {
    // The deposit leg is locked before the transfer, in the order a deposit's arrival takes them (the
    // deposit, then its transfer through onDepositReceived): the other order deadlocks with it.
    const seen = isPublicId('trf', id) ? await repo.findTransfer(tx, organisationId, id) : undefined;
    if (seen?.deposit_id) await payments.lockDeposit(tx, organisationId, seen.deposit_id);
    const row = await locked(tx, organisationId, id);
    if (row.status !== 'awaiting_deposit' || row.deposit_id === null) {
      throw invalidState(`The transfer is ${row.status}; only a transfer awaiting its deposit can be funded`);
    }
    const amount =
      amountText === undefined
        ? new Decimal(row.source_amount)
        : parseAmount(amountText, row.source_currency, 'amount');
    const deposit = (await payments.lockDeposit(tx, organisationId, row.deposit_id))!;
    // A transaction seen on chain is what will fund the transfer, with its own amount, at its confirmations:
    // the simulation stands for a payment that has not arrived.
    if (deposit.status === 'detected') {
      throw invalidState(
        `The transfer's deposit ${deposit.id} is detected: it is credited with the amount that arrived when its confirmations come`,
      );
    }
    await creditDeposit(tx, deps, deposit, amount);
    return transferView(tx, (await repo.findTransfer(tx, organisationId, id))!);
  });
}
