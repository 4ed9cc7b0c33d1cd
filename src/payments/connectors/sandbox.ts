// The sandbox rail (D24): pays out by itself after SANDBOX_STEP_DELAY_MS, unless the beneficiary's account
// identifier ends in one of the magic endings.
import { scheduleJob } from '../../platform/jobs/runner.ts';
import type { FailureReason } from '../schemas.ts';
import type { RailConnector } from './connector.ts';

export const SANDBOX_STEP_KIND = 'payments.sandbox_payout_step';

/**
 * The magic endings of a payout's account identifier (D24) and what the sandbox rail does with them:
 * fail with that reason, complete then `return`, or `hold` in processing until a simulation settles it.
 * Every other ending completes. docs/integrator/sandbox.md lists them (test/docs/sandbox-page.test.ts).
 */
export const SANDBOX_PAYOUT_ENDINGS: Readonly<Record<string, 'return' | 'hold' | FailureReason>> = {
  '1111': 'account_closed',
  '2222': 'invalid_account',
  '3333': 'return',
  '4444': 'hold',
};

/** What the sandbox does with a payout to this account, by its last four characters (D24). */
export function sandboxOutcome(accountIdentifier: string): 'complete' | 'return' | 'hold' | FailureReason {
  return SANDBOX_PAYOUT_ENDINGS[accountIdentifier.slice(-4)] ?? 'complete';
}

export const sandboxConnector: RailConnector = {
  name: 'sandbox',
  // One simulated step (D24), so that an integrator can try the cancel that only a pending payout takes
  // (D21).
  pendingMs: (deps) => deps.config.sandboxStepDelayMs,
  async submit(tx, payout, deps) {
    const outcome = sandboxOutcome(payout.accountIdentifier);
    if (outcome === 'hold') return; // stays processing until POST /api/v1/sandbox/payouts/{id}/complete|fail
    const step =
      outcome === 'complete' || outcome === 'return'
        ? { action: 'complete', then_return: outcome === 'return' }
        : { action: 'fail', failure_reason: outcome };
    await scheduleJob(tx, {
      kind: SANDBOX_STEP_KIND,
      payload: { payout_id: payout.id, ...step },
      runAt: new Date(Date.now() + deps.config.sandboxStepDelayMs),
      dedupeKey: `${SANDBOX_STEP_KIND}:${payout.id}:${step.action}`,
    });
  },
};
