// Inbound crypto funds (D22): what a chain indexer posts, or the sandbox simulates. A notification is
// recorded once per (network, tx hash, log index); a repeat only advances its confirmations. A deposit is
// `detected` until it has the network's confirmations (CRYPTO_CONFIRMATIONS), then `received`, which
// credits the ledger. A deposit to a disabled address is still recorded and credited.
import { randomBytes } from 'node:crypto';
import {
  LOCK_ORDER_RETRIES,
  PG_UNIQUE_VIOLATION,
  type PoolClient,
  pgConstraint,
  pgErrorCode,
  withTransaction,
} from '../db/pool.ts';
import { creditDeposit, depositView, moveDeposit, openDeposit } from '../payments/deposits.ts';
import * as payments from '../payments/repository.ts';
import type { DepositView } from '../payments/schemas.ts';
import type { AppDeps } from '../platform/deps.ts';
import { conflict, invalidState, notFound, validationFailed } from '../platform/errors.ts';
import { scheduleJob } from '../platform/jobs/runner.ts';
import { Decimal, parseAmount } from '../platform/money.ts';
import { carries, isNetworkCode, NETWORKS_IN_D22_ORDER, type NetworkCode } from './networks.ts';
import { findAddressByNetworkAndAddress } from './service.ts';

export const SANDBOX_CONFIRM_KIND = 'crypto.sandbox_confirm';

/** The unique index that records a chain notification once (payments migration 030). */
const CHAIN_UNIQUE_INDEX = 'deposits_chain_uniq';

export interface ChainNotification {
  network: string;
  address: string;
  asset: string;
  amount: string;
  tx_hash: string;
  log_index?: number;
  confirmations: number;
}

/** A deposit created or advanced, and whether this call created it. */
export interface RecordedDeposit {
  created: boolean;
  deposit: DepositView;
}

/**
 * `whenDetected` runs in the transaction that records a new deposit still short of its confirmations,
 * so that what follows it up (the sandbox chain's next block) commits with it or not at all.
 */
export async function recordChainDeposit(
  deps: AppDeps,
  input: ChainNotification,
  onlyOrganisation: string | null = null,
  whenDetected?: (tx: PoolClient) => Promise<unknown>,
): Promise<RecordedDeposit> {
  if (!isNetworkCode(input.network)) throw validationFailed('network', `Unknown network ${input.network}`);
  if (!carries(input.network, input.asset)) {
    throw validationFailed('asset', `asset ${input.asset} is not carried on ${input.network}`);
  }
  const amount = parseAmount(input.amount, input.asset, 'amount');
  const match = await findAddressByNetworkAndAddress(deps.pool, input.network, input.address);
  if (!match || (onlyOrganisation !== null && match.organisationId !== onlyOrganisation)) {
    throw notFound('No deposit address matches address on this network');
  }
  const required = deps.config.cryptoConfirmations[input.network];
  const txHash = chainTransactionId(input.tx_hash);
  if (txHash === '') throw validationFailed('tx_hash', 'tx_hash must not be blank');
  const address = match.depositAddress.address;
  const record = async (tx: PoolClient): Promise<RecordedDeposit> => {
    const logIndex = input.log_index ?? null;
    const output = logIndex === null ? txHash : `${txHash} (log_index ${logIndex})`;
    const outputName = `The output ${output} on ${input.network}`;
    const seen = await payments.lockDepositByChain(tx, input.network, txHash, logIndex);
    if (seen) {
      // A repeat names the same output; one that differs is another output of the transaction (a batch
      // paying several addresses) or a mistake, and never passes for the recorded one.
      if (seen.address !== address || seen.currency !== input.asset || !amount.eq(seen.received_amount!)) {
        throw conflict(
          `${outputName} is recorded as ${seen.received_amount} ${seen.currency} to ${seen.address}: a ` +
            'repeat must name the same address, asset and amount, and each output of a transaction that pays ' +
            'several needs its own log_index (on bitcoin, the output index)',
        );
      }
      if (seen.status === 'failed' || seen.status === 'reversed') {
        // The operator decided this output's fate: a report of it is neither swallowed as a repeat nor
        // credited again (a reversal may have sent the money back). The indexer's post fails so that
        // someone looks (docs/operator/crypto.md).
        throw invalidState(
          `${outputName} is recorded on deposit ${seen.id}, which is ${seen.status}: it is not recorded or ` +
            'credited again',
        );
      }
      return {
        created: false,
        deposit: depositView(await advance(tx, deps, seen, input.confirmations, required)),
      };
    }
    let row =
      (await payments.lockPendingDepositAt(tx, input.network, address, input.asset)) ??
      (await openDeposit(tx, deps, {
        organisationId: match.organisationId,
        method: 'crypto',
        currency: input.asset,
        ...(await awaitedAt(deps, tx, match.organisationId, input.network, address, input.asset)),
        externalId: null,
        network: input.network,
        address,
        expiresAt: new Date(Date.now() + deps.config.depositTtlSeconds * 1000),
      }));
    row = await payments.updateDeposit(tx, row.id, {
      tx_hash: txHash,
      log_index: logIndex,
      received_amount: amount.toFixed(),
      confirmations: input.confirmations,
    });
    if (input.confirmations >= required)
      return { created: true, deposit: depositView(await creditDeposit(tx, deps, row, amount)) };
    const detected = await moveDeposit(tx, deps, row, 'detected', { detected_at: new Date() });
    await whenDetected?.(tx);
    return { created: true, deposit: depositView(detected) };
  };
  try {
    return await withTransaction(deps.pool, record, LOCK_ORDER_RETRIES);
  } catch (error) {
    // The same notification delivered twice at once: both transactions find no deposit for it (the second
    // may have waited for the pending deposit the first then took) and record one, and the unique index
    // lets only the first commit; the other fails when it sets the tx hash.
    // Running it again in a new transaction finds the committed deposit and answers as a repeat does
    // (200, confirmations advanced, no second credit). Once is enough: that deposit stays committed.
    if (pgErrorCode(error) !== PG_UNIQUE_VIOLATION || pgConstraint(error) !== CHAIN_UNIQUE_INDEX) throw error;
    return withTransaction(deps.pool, record, LOCK_ORDER_RETRIES);
  }
}

/**
 * A transaction id as every indexer writes it: hex ids (EVM `0x…`, Bitcoin and Tron txids) are
 * case-insensitive, so they are kept in lower case; surrounding spaces are dropped. The same transaction
 * then always finds its recorded deposit, however the indexer spelled it.
 */
export function chainTransactionId(raw: string): string {
  const trimmed = raw.trim();
  return /^(0x)?[0-9a-f]+$/i.test(trimmed) ? trimmed.toLowerCase() : trimmed;
}

/**
 * Whom a transaction that found no pending deposit is for. Each on-chain transaction is a deposit of its
 * own. One to the address a transfer still awaiting its deposit shows (its leg's transaction came first)
 * is a deposit of that transfer, for the amount its instructions ask: the payer sent it where the transfer
 * said (D20, D22). Any other is the organisation's, credited to its balance.
 */
async function awaitedAt(
  deps: AppDeps,
  tx: PoolClient,
  organisationId: string,
  network: string,
  address: string,
  currency: string,
): Promise<{ transferId: string | null; expectedAmount: Decimal | null }> {
  for (const area of deps.areas) {
    const awaited = await area.depositAwaitedAt?.(tx, { organisationId, network, address, currency });
    if (awaited) {
      return {
        transferId: awaited.transferId,
        expectedAmount: awaited.expectedAmount === null ? null : new Decimal(awaited.expectedAmount),
      };
    }
  }
  return { transferId: null, expectedAmount: null };
}

/** A repeated notification: more confirmations may make a detected deposit received; nothing else changes. */
async function advance(
  tx: PoolClient,
  deps: AppDeps,
  row: payments.DepositRow,
  confirmations: number,
  required: number,
): Promise<payments.DepositRow> {
  if (row.status !== 'detected' && row.status !== 'pending') return row;
  const updated = await payments.updateDeposit(tx, row.id, {
    confirmations: Math.max(row.confirmations ?? 0, confirmations),
  });
  if ((updated.confirmations ?? 0) < required) return updated;
  return creditDeposit(tx, deps, updated, new Decimal(updated.received_amount!));
}

/**
 * Sandbox (D24): funds arrive on one of the organisation's addresses with one confirmation (or as many as
 * given); the rest come after SANDBOX_STEP_DELAY_MS, as a chain would bring them.
 */
export async function simulateChainDeposit(
  deps: AppDeps,
  organisationId: string,
  input: { address: string; asset: string; amount: string; network?: string; confirmations?: number },
): Promise<DepositView> {
  const candidates: NetworkCode[] =
    input.network !== undefined ? [input.network as NetworkCode] : [...NETWORKS_IN_D22_ORDER];
  let network: NetworkCode | undefined;
  for (const code of candidates) {
    if (!isNetworkCode(code)) throw validationFailed('network', `Unknown network ${code}`);
    const match = await findAddressByNetworkAndAddress(deps.pool, code, input.address);
    if (match?.organisationId === organisationId) {
      network = input.network !== undefined ? code : (match.depositAddress.network as NetworkCode);
      break;
    }
  }
  if (network === undefined) throw notFound('No deposit address of the organisation matches address');
  const notification: ChainNotification = {
    network,
    address: input.address,
    asset: input.asset,
    amount: input.amount,
    tx_hash: `0xsandbox${randomBytes(28).toString('hex')}`,
    confirmations: input.confirmations ?? 1,
  };
  const { deposit } = await recordChainDeposit(deps, notification, organisationId, (tx) =>
    scheduleJob(tx, {
      kind: SANDBOX_CONFIRM_KIND,
      payload: { ...notification, confirmations: deps.config.cryptoConfirmations[network] },
      runAt: new Date(Date.now() + deps.config.sandboxStepDelayMs),
      dedupeKey: `${SANDBOX_CONFIRM_KIND}:${notification.tx_hash}`,
    }),
  );
  return deposit;
}

/** The sandbox chain's next block: the notification again, with every confirmation it needs. */
export async function sandboxConfirm(
  tx: PoolClient,
  deps: AppDeps,
  payload: Record<string, unknown>,
): Promise<void> {
  const network = String(payload.network);
  const row = await payments.lockDepositByChain(tx, network, String(payload.tx_hash), null);
  if (!row) return;
  await advance(
    tx,
    deps,
    row,
    Number(payload.confirmations),
    deps.config.cryptoConfirmations[network as NetworkCode],
  );
}
