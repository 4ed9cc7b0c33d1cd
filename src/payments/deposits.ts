// Deposits (D21): money coming in. A deposit waits `pending` for its funds; `received` credits the
// available balance in the same transaction as the state change and its event; `reversed` debits it back.
import { randomInt } from 'node:crypto';
import * as ledger from '../balances/ledger.ts';
import {
  LOCK_ORDER_RETRIES,
  PG_UNIQUE_VIOLATION,
  type PoolClient,
  pgConstraint,
  pgErrorCode,
  withTransaction,
} from '../db/pool.ts';
import type { AppDeps } from '../platform/deps.ts';
import { AppError, conflict, invalidState, notFound, validationFailed } from '../platform/errors.ts';
import { isPublicId, newPublicId } from '../platform/ids.ts';
import { cancelJob, scheduleJob } from '../platform/jobs/runner.ts';
import { ownEntry } from '../platform/lookup.ts';
import { Decimal, findCurrency, formatAmount, parseAmount } from '../platform/money.ts';
import { type Page, refuseFreeText, toPage, toSearchQuery } from '../platform/search.ts';
import { toIso } from '../platform/time.ts';
import { publishResourceEvent } from '../webhooks/publish.ts';
import { railAccount } from './payouts.ts';
import * as repo from './repository.ts';
import type { CreateDepositInput, DepositSearchInput, DepositView } from './schemas.ts';

export const EXPIRE_DEPOSIT_KIND = 'payments.expire_deposit';

/** What each status may become (D21); anything else is 400 INVALID_STATE. */
const DEPOSIT_MOVES: Readonly<Record<repo.DepositRow['status'], readonly repo.DepositRow['status'][]>> = {
  pending: ['detected', 'received', 'expired', 'failed'],
  detected: ['received', 'failed'],
  received: ['reversed'],
  expired: [],
  failed: [],
  reversed: [],
};

const amountOrNull = (value: string | null, currency: string) =>
  value === null ? null : formatAmount(value, currency);

/** The keys of deposit instructions in D20's order (bank transfer, then crypto's own). */
const INSTRUCTION_KEYS = [
  'type',
  'currency',
  'network',
  'asset',
  'amount',
  'account_holder',
  'bank_name',
  'iban',
  'account_number',
  'routing_code',
  'bic',
  'reference',
  'address',
];

/**
 * Stored instructions as GET and the events show them: in D20's key order, whatever order the database
 * (jsonb sorts keys by length) gave them back in.
 */
function instructionsView(stored: Record<string, unknown>): DepositView['instructions'] {
  const ordered: Record<string, unknown> = {};
  for (const key of INSTRUCTION_KEYS) if (Object.hasOwn(stored, key)) ordered[key] = stored[key];
  for (const key of Object.keys(stored)) if (!Object.hasOwn(ordered, key)) ordered[key] = stored[key];
  return ordered as DepositView['instructions'];
}

export function depositView(row: repo.DepositRow): DepositView {
  return {
    id: row.id,
    method: row.method,
    currency: row.currency,
    expected_amount: amountOrNull(row.expected_amount, row.currency),
    received_amount: amountOrNull(row.received_amount, row.currency),
    status: row.status,
    instructions: instructionsView(row.instructions),
    transfer_id: row.transfer_id,
    tx_hash: row.tx_hash,
    confirmations: row.confirmations,
    external_id: row.external_id,
    expires_at: toIso(row.expires_at),
    detected_at: toIso(row.detected_at),
    received_at: toIso(row.received_at),
    network: row.network,
    failure_reason: row.failure_reason,
    failed_at: toIso(row.failed_at),
    reversed_at: toIso(row.reversed_at),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/** Crockford base32 without I, L, O, U: a reference a payer can type without ambiguity. */
const REFERENCE_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
function newReference(): string {
  let reference = 'PSD';
  for (let index = 0; index < 10; index++)
    reference += REFERENCE_ALPHABET[randomInt(REFERENCE_ALPHABET.length)];
  return reference;
}

export interface NewDepositOptions {
  organisationId: string;
  method: 'bank_transfer' | 'crypto';
  currency: string;
  expectedAmount: Decimal | null;
  transferId: string | null;
  externalId: string | null;
  network?: string;
  /** A crypto deposit seen on an address the organisation already had (D22): no new address is made. */
  address?: string;
  /**
   * A further bank payment quoting this earlier deposit's reference (manual rail): the new deposit shows the
   * instructions the payer followed and has no reference of its own (the reference keeps naming the deposit
   * it was made for, so the operator's look-up finds that one).
   */
  quoted?: repo.DepositRow;
  expiresAt: Date;
}

/**
 * Creates a pending deposit with its instructions, publishes deposit.created and schedules its expiry, in
 * the caller's transaction (a transfer awaiting its funds creates one this way, D20).
 */
export async function openDeposit(
  tx: PoolClient,
  deps: AppDeps,
  options: NewDepositOptions,
): Promise<repo.DepositRow> {
  const id = newPublicId('dep');
  const amount =
    options.expectedAmount === null ? null : formatAmount(options.expectedAmount, options.currency);
  let instructions: Record<string, unknown>;
  let reference: string | null = null;
  let address: string | null = null;
  let network: string | null = null;
  if (options.method === 'bank_transfer' && options.quoted !== undefined) {
    // The instructions the payer followed, amount included: a transfer this deposit funds shows them.
    instructions = { ...options.quoted.instructions };
  } else if (options.method === 'bank_transfer') {
    const account = ownEntry(deps.config.depositBankAccounts, options.currency);
    if (!account) {
      throw validationFailed(
        'currency',
        `Bank transfers in ${options.currency} cannot be received: no collection account`,
      );
    }
    reference = newReference();
    instructions = { type: 'bank_transfer', currency: options.currency, amount, ...account, reference };
  } else {
    const at =
      options.address !== undefined && options.network !== undefined
        ? { address: options.address, network: options.network }
        : await allocateAddress(tx, deps, options);
    address = at.address;
    network = at.network;
    instructions = { type: 'crypto', network, asset: options.currency, amount, address };
  }
  let row: repo.DepositRow;
  try {
    row = await repo.insertDeposit(tx, {
      id,
      organisation_id: options.organisationId,
      method: options.method,
      currency: options.currency,
      expected_amount: amount,
      reference,
      instructions,
      transfer_id: options.transferId,
      network,
      address,
      external_id: options.externalId,
      expires_at: options.expiresAt,
    });
  } catch (error) {
    if (pgErrorCode(error) === PG_UNIQUE_VIOLATION && pgConstraint(error) === 'deposits_external_id_uniq') {
      throw conflict('The organisation already has a deposit with this external_id');
    }
    throw error;
  }
  await publishResourceEvent(tx, deps, {
    organisationId: options.organisationId,
    sourceObjectType: 'deposit',
    object: depositView(row),
    action: 'created',
    previousStatus: null,
  });
  await scheduleJob(tx, {
    kind: EXPIRE_DEPOSIT_KIND,
    payload: { deposit_id: id },
    runAt: options.expiresAt,
    dedupeKey: `${EXPIRE_DEPOSIT_KIND}:${id}`,
  });
  return row;
}

async function allocateAddress(
  tx: PoolClient,
  deps: AppDeps,
  options: NewDepositOptions,
): Promise<{ address: string; network: string }> {
  for (const area of deps.areas) {
    if (area.allocateDepositAddress) {
      return area.allocateDepositAddress(tx, deps, options.organisationId, options.network, options.currency);
    }
  }
  throw new AppError('CORRIDOR_UNAVAILABLE', 'Crypto deposits are not offered');
}

export async function createDeposit(
  deps: AppDeps,
  organisationId: string,
  input: CreateDepositInput,
): Promise<DepositView> {
  const currency = findCurrency(input.currency);
  if (!currency) throw validationFailed('currency', `Unknown currency ${input.currency}`);
  if (input.method === 'crypto' && currency.type !== 'crypto') {
    throw validationFailed('currency', `${input.currency} is not a crypto asset`);
  }
  if (input.method === 'bank_transfer' && currency.type !== 'fiat') {
    throw validationFailed('currency', `${input.currency} cannot arrive by bank transfer`);
  }
  if (input.method === 'bank_transfer' && input.network !== undefined) {
    throw validationFailed('network', 'network is for crypto deposits only');
  }
  const expected =
    input.expected_amount === undefined
      ? null
      : parseAmount(input.expected_amount, input.currency, 'expected_amount');
  const row = await withTransaction(deps.pool, (tx) =>
    openDeposit(tx, deps, {
      organisationId,
      method: input.method,
      currency: input.currency,
      expectedAmount: expected,
      transferId: null,
      externalId: input.external_id ?? null,
      ...(input.network !== undefined ? { network: input.network } : {}),
      expiresAt: new Date(Date.now() + deps.config.depositTtlSeconds * 1000),
    }),
  );
  return depositView(row);
}

export async function getDeposit(deps: AppDeps, organisationId: string, id: string): Promise<DepositView> {
  const row = isPublicId('dep', id) ? await repo.findDeposit(deps.pool, organisationId, id) : undefined;
  if (!row) throw notFound('No deposit matches the id');
  return depositView(row);
}

export async function searchDeposits(
  deps: AppDeps,
  organisationId: string,
  body: DepositSearchInput,
): Promise<Page<DepositView>> {
  refuseFreeText(body, 'Deposits');
  const query = toSearchQuery<repo.SearchFilters, string>(body);
  const { rows, total } = await repo.search<repo.DepositRow>(
    deps.pool,
    'deposits',
    organisationId,
    query.filters,
    query.sortBy,
    query.sortDirection,
    query.pageSize,
    query.offset,
  );
  return toPage(query, rows.map(depositView), total);
}

/** Moves a locked deposit, checking the move against D21 and publishing `deposit.<status>`. */
export async function moveDeposit(
  tx: PoolClient,
  deps: AppDeps,
  row: repo.DepositRow,
  to: repo.DepositRow['status'],
  changes: Parameters<typeof repo.updateDeposit>[2] = {},
): Promise<repo.DepositRow> {
  if (!DEPOSIT_MOVES[row.status].includes(to)) {
    throw invalidState(`The deposit is ${row.status}; it cannot become ${to}`);
  }
  const updated = await repo.updateDeposit(tx, row.id, { ...changes, status: to });
  await publishResourceEvent(tx, deps, {
    organisationId: row.organisation_id,
    sourceObjectType: 'deposit',
    object: depositView(updated),
    action: to,
    previousStatus: row.status,
  });
  return updated;
}

/** The ledger account a deposit's money comes from. */
const inboundRail = (deps: AppDeps, row: repo.DepositRow) =>
  row.method === 'crypto' ? railAccount(row.network!, 'crypto') : railAccount(deps.config.paymentConnector);

/**
 * Credits a pending or detected deposit with what arrived (D21): the whole amount goes to the available
 * balance, whatever was expected, and the areas waiting on it react in the same transaction (D20).
 */
export async function creditDeposit(
  tx: PoolClient,
  deps: AppDeps,
  row: repo.DepositRow,
  amount: Decimal,
  extra: Parameters<typeof repo.updateDeposit>[2] = {},
): Promise<repo.DepositRow> {
  if (!DEPOSIT_MOVES[row.status].includes('received')) {
    throw invalidState(`The deposit is ${row.status}; only a pending or detected deposit can be received`);
  }
  await ledger.post(tx, {
    type: 'deposit',
    resourceType: 'deposit',
    resourceId: row.id,
    postings: [
      { account: ledger.platform(inboundRail(deps, row), row.currency), amount: amount.negated() },
      { account: ledger.available(row.organisation_id, row.currency), amount },
    ],
  });
  const received = await moveDeposit(tx, deps, row, 'received', {
    ...extra,
    received_amount: formatAmount(amount, row.currency),
    received_at: new Date(),
  });
  await cancelJob(tx, `${EXPIRE_DEPOSIT_KIND}:${row.id}`);
  for (const area of deps.areas) {
    await area.onDepositReceived?.(
      tx,
      {
        id: received.id,
        organisationId: received.organisation_id,
        currency: received.currency,
        amount: formatAmount(amount, received.currency),
        transferId: received.transfer_id,
      },
      deps,
    );
  }
  return received;
}

/** Locks a deposit for an action; `organisationId` null for the operator (any organisation). */
async function lockedDeposit(
  tx: PoolClient,
  organisationId: string | null,
  id: string,
): Promise<repo.DepositRow> {
  const row = isPublicId('dep', id) ? await repo.lockDeposit(tx, organisationId, id) : undefined;
  if (!row) throw notFound('No deposit matches the id');
  return row;
}

/** What the operator (or the sandbox) records of a bank payment. */
interface ReceivedPaymentInput {
  amount?: string;
  reference?: string;
  bank_transaction_id?: string;
  further_payment?: boolean;
}

/** The reference a bank-transfer deposit's instructions show, if any. */
const referenceShown = (row: repo.DepositRow): string | null =>
  typeof row.instructions.reference === 'string' ? row.instructions.reference : null;

/** A bank payment recorded, and whether the record made a new deposit for it. */
export interface ReceivedPayment {
  created: boolean;
  deposit: DepositView;
}

/** The unique index that records a bank payment once (payments migration 032). */
const BANK_TRANSACTION_INDEX = 'deposits_bank_transaction_uniq';

/**
 * Funds arrived for a deposit: the operator's record (manual rail) or the sandbox's simulation. Without an
 * amount the expected amount arrived.
 *
 * The operator (`organisationId` null) may also record a payment that quotes the reference of a deposit
 * that no longer waits (received, expired, failed or reversed: a payer who splits a payment or pays twice,
 * or pays late): it is credited as a new deposit of its own (`created`), of the same organisation, currency
 * and transfer, in the same transaction; as the crypto side opens a new deposit on an address whose deposit
 * no longer waits (D22). Such a record needs the bank's id of the payment (`bank_transaction_id`), so that a
 * retry cannot credit it twice: a record whose `bank_transaction_id` is known answers the deposit that
 * recorded it and changes nothing (409 when it was another payment).
 */
export async function receiveDeposit(
  deps: AppDeps,
  organisationId: string | null,
  id: string,
  input: ReceivedPaymentInput,
): Promise<ReceivedPayment> {
  const record = (tx: PoolClient) => recordPayment(tx, deps, organisationId, id, input);
  try {
    return await withTransaction(deps.pool, record, LOCK_ORDER_RETRIES);
  } catch (error) {
    // The same bank payment recorded twice at once, on two deposits: the unique index lets only the first
    // commit. Running the other again finds the committed deposit and answers as a repeat does.
    if (pgErrorCode(error) !== PG_UNIQUE_VIOLATION || pgConstraint(error) !== BANK_TRANSACTION_INDEX)
      throw error;
    return withTransaction(deps.pool, record, LOCK_ORDER_RETRIES);
  }
}

async function recordPayment(
  tx: PoolClient,
  deps: AppDeps,
  organisationId: string | null,
  id: string,
  input: ReceivedPaymentInput,
): Promise<ReceivedPayment> {
  const row = await lockedDeposit(tx, organisationId, id);
  if (row.method !== 'bank_transfer') {
    // The sandbox's client (organisationId set) simulates the chain; the operator's indexer reports it.
    const how =
      organisationId === null
        ? 'its chain notification (POST /admin/v1/crypto/deposits)'
        : 'a simulated chain transaction (POST /api/v1/sandbox/crypto/deposits)';
    throw invalidState(`The deposit is a ${row.status} crypto deposit: it is credited by ${how}`);
  }
  // The payer's reference, when the operator gives it, guards against crediting the wrong deposit. Banks
  // pass references on in capitals or with spaces, so those do not count.
  // A deposit opened for a further payment has no reference of its own: it shows the one it was quoted by.
  const own = row.reference ?? referenceShown(row);
  const quoted = input.reference === undefined ? undefined : comparableReference(input.reference);
  if (quoted !== undefined && own !== null && quoted !== comparableReference(own)) {
    throw validationFailed(
      'reference',
      `The payer quoted ${input.reference}, not this deposit's reference ${own}: check the deposit`,
    );
  }
  const given = input.amount === undefined ? undefined : parseAmount(input.amount, row.currency, 'amount');
  // A statement's id copied with spaces around it names the same payment (payments migration 034 trims
  // the same characters from the ids stored before).
  const bankTransactionId = input.bank_transaction_id?.replace(/^[ \t\n\r\f\v]+|[ \t\n\r\f\v]+$/g, '');
  if (bankTransactionId === '') {
    throw validationFailed('bank_transaction_id', 'bank_transaction_id must not be blank');
  }
  if (bankTransactionId !== undefined) {
    const recorded = await repo.findDepositByBankTransaction(tx, row.currency, bankTransactionId);
    if (recorded) return { created: false, deposit: depositView(repeated(row, recorded, given)) };
  }
  const extra = bankTransactionId === undefined ? {} : { bank_transaction_id: bankTransactionId };
  if (row.status === 'pending' || organisationId !== null) {
    let amount: Decimal;
    if (given !== undefined) amount = given;
    else if (row.expected_amount !== null) amount = new Decimal(row.expected_amount);
    else throw validationFailed('amount', 'amount is required: the deposit expects no amount');
    return { created: false, deposit: depositView(await creditDeposit(tx, deps, row, amount, extra)) };
  }
  // A further payment quoting the reference of a deposit that no longer waits.
  if (bankTransactionId === undefined) {
    throw validationFailed(
      'bank_transaction_id',
      `The deposit is ${row.status}${row.received_amount === null ? '' : ` (${formatAmount(row.received_amount, row.currency)} ${row.currency} recorded)`}: ` +
        "a further payment quoting its reference is credited as a new deposit and needs the bank's id of " +
        'the payment in bank_transaction_id, so that it is credited once. A payment already recorded must ' +
        'not be recorded again.',
    );
  }
  if (given === undefined) throw validationFailed('amount', 'amount is required for a further payment');
  // A deposit credited without the bank's id cannot tell its own retry (now with an id) from another
  // payment: the operator says which. Only the deposit the reference belongs to can have been credited so
  // (one opened for a further payment always has the bank's id), and a retry may name any deposit that
  // shows the reference: that one decides.
  const owner =
    row.reference === null && own !== null
      ? ((await repo.findDepositByReference(tx, comparableReference(own))) ?? row)
      : row;
  if (
    owner.received_amount !== null &&
    owner.bank_transaction_id === null &&
    input.further_payment !== true
  ) {
    throw conflict(
      `The deposit ${owner.id} was credited with ${formatAmount(owner.received_amount, owner.currency)} ${owner.currency} ` +
        'without a bank_transaction_id, so this record cannot be told apart from a retry of that one: if it is ' +
        'another payment, send it again with "further_payment": true',
    );
  }
  const opened = await openDeposit(tx, deps, {
    organisationId: row.organisation_id,
    method: 'bank_transfer',
    currency: row.currency,
    expectedAmount: null,
    transferId: row.transfer_id,
    externalId: null,
    quoted: row,
    expiresAt: new Date(Date.now() + deps.config.depositTtlSeconds * 1000),
  });
  return { created: true, deposit: depositView(await creditDeposit(tx, deps, opened, given, extra)) };
}

/**
 * A bank payment recorded before: the deposit that recorded it, when it is the same payment (this deposit
 * or one opened for its reference, and the same amount); otherwise the operator is recording another
 * payment under a known bank id: 409, nothing credited.
 */
function repeated(
  row: repo.DepositRow,
  recorded: repo.DepositRow,
  amount: Decimal | undefined,
): repo.DepositRow {
  const sameReference =
    recorded.organisation_id === row.organisation_id &&
    recorded.instructions.reference === row.instructions.reference;
  if (sameReference && (amount === undefined || amount.eq(new Decimal(recorded.received_amount!))))
    return recorded;
  throw conflict(
    `The bank payment ${recorded.bank_transaction_id} is recorded already, as deposit ${recorded.id} of ` +
      `${formatAmount(recorded.received_amount!, recorded.currency)} ${recorded.currency} quoting ` +
      `${String(recorded.instructions.reference)}: check the payment`,
  );
}

const comparableReference = (reference: string): string => reference.replace(/\s+/g, '').toUpperCase();

/**
 * The operator's look-up of the deposit a bank payment's reference names (manual rail), as the payer wrote
 * it: capitals and spaces do not count. 404 when no deposit has it.
 */
export async function depositByReference(deps: AppDeps, reference: string): Promise<DepositView> {
  // NUL cannot be stored in text: no deposit has such a reference (PostgreSQL would refuse the query).
  const row = reference.includes('\u0000')
    ? undefined
    : await repo.findDepositByReference(deps.pool, comparableReference(reference));
  if (!row) throw notFound('No deposit has this reference');
  return depositView(row);
}

/** The operator's record of a deposit that will not arrive (D21). */
export async function failDeposit(
  deps: AppDeps,
  id: string,
  reason: string | undefined,
): Promise<DepositView> {
  return withTransaction(
    deps.pool,
    async (tx) => {
      const row = await lockedDeposit(tx, null, id);
      const failed = await moveDeposit(tx, deps, row, 'failed', {
        failure_reason: reason ?? null,
        failed_at: new Date(),
      });
      await cancelJob(tx, `${EXPIRE_DEPOSIT_KIND}:${row.id}`);
      return depositView(failed);
    },
    LOCK_ORDER_RETRIES,
  );
}

/**
 * A received deposit taken back by its bank or chain (D21): the amount is debited back from the available
 * balance, even below zero, since the money is gone whatever the balance.
 */
export async function reverseDeposit(deps: AppDeps, id: string): Promise<DepositView> {
  return withTransaction(
    deps.pool,
    async (tx) => {
      const row = await lockedDeposit(tx, null, id);
      if (row.status !== 'received')
        throw invalidState(`The deposit is ${row.status}; only a received deposit can be reversed`);
      const amount = new Decimal(row.received_amount!);
      await ledger.post(tx, {
        type: 'adjustment',
        resourceType: 'deposit',
        resourceId: row.id,
        postings: [
          {
            account: ledger.available(row.organisation_id, row.currency),
            amount: amount.negated(),
            mayOverdraw: true,
          },
          { account: ledger.platform(inboundRail(deps, row), row.currency), amount },
        ],
      });
      return depositView(await moveDeposit(tx, deps, row, 'reversed', { reversed_at: new Date() }));
    },
    LOCK_ORDER_RETRIES,
  );
}

/** The durable timer of a pending deposit (D21): at expires_at it expires, unless funds came first. */
export async function expireDeposit(tx: PoolClient, deps: AppDeps, id: string): Promise<void> {
  const row = await repo.lockDeposit(tx, null, id);
  if (row?.status !== 'pending') return;
  await moveDeposit(tx, deps, row, 'expired');
}
