// The ledger's API (D21): the only way money moves. Another area posts inside its own transaction, the
// one that changes its resource's state and publishes its event, so the three commit together.
import type { PoolClient, Queryable } from '../db/pool.ts';
import { pgErrorCode } from '../db/pool.ts';
import { AppError } from '../platform/errors.ts';
import { newPublicId } from '../platform/ids.ts';
import { Decimal, formatAmount, knownCurrencyCodes } from '../platform/money.ts';
import * as repo from './repository.ts';

export type TransactionType =
  | 'deposit'
  | 'payout'
  | 'payout_reversal'
  | 'transfer_funding'
  | 'transfer_refund'
  | 'fee'
  | 'top_up'
  | 'adjustment';

/** An organisation's own money: spendable (`available`) or set aside for a movement in flight (`held`). */
export interface OrganisationAccount {
  organisationId: string;
  name: 'available' | 'held';
  currency: string;
}

/**
 * The platform's side of a movement: the outside world through a rail (`rail:sandbox`, `rail:manual`),
 * the platform's fees and FX positions, and the sandbox's funding of test money.
 */
export interface PlatformAccount {
  platform: string;
  currency: string;
}

export interface Posting {
  account: OrganisationAccount | PlatformAccount;
  /** Signed: positive credits the account, negative debits it. */
  amount: Decimal;
  /**
   * A debit that may take an organisation account below zero: only for what the platform must record
   * whatever the balance (a reversal by the bank). Never for a client's action.
   */
  mayOverdraw?: boolean;
}

export interface LedgerTransaction {
  type: TransactionType;
  resourceType: string | null;
  resourceId: string | null;
  postings: Posting[];
}

export interface PostedEntry {
  id: string;
  balanceAfter: string | null;
}

/**
 * Posts one balanced transaction. Throws 400 INSUFFICIENT_FUNDS when a debit would take an organisation
 * account below zero; the caller's transaction is then aborted and must roll back (nothing it did
 * stays).
 */
export async function post(tx: PoolClient, transaction: LedgerTransaction): Promise<PostedEntry[]> {
  return (await postAll(tx, [transaction]))[0]!;
}

/**
 * Posts balanced transactions in order, in one round trip: for a debit followed by more postings to the
 * same balance (a transfer's funding and its fee), whose row lock then waits on one round trip, not two.
 * Errors as `post`.
 */
export async function postAll(tx: PoolClient, transactions: LedgerTransaction[]): Promise<PostedEntry[][]> {
  for (const transaction of transactions) assertBalanced(transaction);
  try {
    // formatAmount refuses an amount finer than its currency: a rounding bug upstream, not money to keep.
    return await repo.postTransactions(
      tx,
      transactions.map((transaction) => ({
        type: transaction.type,
        resourceType: transaction.resourceType,
        resourceId: transaction.resourceId,
        entries: transaction.postings.map((posting) => ({
          entryId: newPublicId('btx'),
          organisationId: 'organisationId' in posting.account ? posting.account.organisationId : null,
          name: 'organisationId' in posting.account ? posting.account.name : posting.account.platform,
          currency: posting.account.currency,
          amount: formatAmount(posting.amount, posting.account.currency),
          mayOverdraw: posting.mayOverdraw === true || !('organisationId' in posting.account),
        })),
      })),
    );
  } catch (error) {
    if (pgErrorCode(error) === repo.PG_INSUFFICIENT_FUNDS) {
      throw new AppError('INSUFFICIENT_FUNDS', 'The balance is too low for this operation');
    }
    throw error;
  }
}

function assertBalanced(transaction: LedgerTransaction): void {
  const sums = new Map<string, Decimal>();
  for (const posting of transaction.postings) {
    if (posting.amount.isZero()) throw new RangeError('a ledger entry cannot be zero');
    const currency = posting.account.currency;
    sums.set(currency, (sums.get(currency) ?? new Decimal(0)).plus(posting.amount));
  }
  for (const [currency, sum] of sums) {
    if (!sum.isZero()) throw new RangeError(`ledger postings sum to ${sum.toString()} ${currency}, not zero`);
  }
}

export const available = (organisationId: string, currency: string): OrganisationAccount => ({
  organisationId,
  name: 'available',
  currency,
});

export const held = (organisationId: string, currency: string): OrganisationAccount => ({
  organisationId,
  name: 'held',
  currency,
});

export const platform = (name: string, currency: string): PlatformAccount => ({ platform: name, currency });

/**
 * Creates the platform accounts `names` in every currency `findCurrency` knows, where missing, in one
 * order (as ledger_post creates accounts): a posting then never creates a platform account (see
 * Area.platformAccounts). Idempotent; several processes may run it at once.
 */
export async function ensurePlatformAccounts(db: Queryable, names: readonly string[]): Promise<void> {
  await repo.insertPlatformAccounts(db, [...new Set(names)], knownCurrencyCodes());
}
