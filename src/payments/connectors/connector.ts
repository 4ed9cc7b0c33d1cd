// Rails are connectors behind one interface (D21). A connector takes a payout over inside the transaction
// that moves the payout to `processing` and records the hand-off (payout_hand_offs, one row per payout):
// the hand-off and the state commit together, so a worker killed mid-way hands the payout over again
// from scratch, never twice. A connector that calls an outside rail over the network must not do so
// inside that transaction: it schedules the call as a job of its own and sends the payout id as the
// rail's idempotency key, so a repeat after a crash is the same instruction.
import type { PoolClient } from '../../db/pool.ts';
import type { AppDeps } from '../../platform/deps.ts';

export interface PayoutHandOff {
  id: string;
  organisationId: string;
  currency: string;
  amount: string;
  /** The beneficiary's account identifier (IBAN, account number, mobile number), as the rail needs it. */
  accountIdentifier: string;
}

export interface RailConnector {
  /** `sandbox` or `manual`; the platform ledger account of the rail is `rail:<name>`. */
  readonly name: string;
  /** Takes the payout over, in the caller's transaction. */
  submit(tx: PoolClient, payout: PayoutHandOff, deps: AppDeps): Promise<void>;
  /**
   * How long a payout of its own (not a transfer's leg) stays `pending` before the rail takes it; none
   * when absent.
   */
  pendingMs?(deps: AppDeps): number;
}
