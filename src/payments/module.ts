// Payments (D21): deposits and payouts through rail connectors (sandbox, manual), each money movement a
// ledger transaction; their expiries, hand-offs and sandbox steps are durable timers.
import type { Area, EventType } from '../platform/area.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { SANDBOX_STEP_KIND } from './connectors/sandbox.ts';
import { EXPIRE_DEPOSIT_KIND, expireDeposit } from './deposits.ts';
import {
  connectorNames,
  FX_POSITION,
  HAND_OFF_KIND,
  handOff,
  onScreeningReviewed,
  payoutGauges,
  railAccount,
  sandboxStep,
  TRANSFER_CLEARING,
} from './payouts.ts';
import { registerPaymentAdminRoutes, registerPaymentRoutes, registerPaymentSandboxRoutes } from './routes.ts';

const EVENT_TYPES: readonly EventType[] = [
  { code: 'deposit.created', description: 'A deposit was initiated.' },
  { code: 'deposit.detected', description: 'Incoming deposit funds were detected.' },
  { code: 'deposit.received', description: 'Deposit funds were received and credited.' },
  { code: 'deposit.failed', description: 'A deposit failed.' },
  { code: 'deposit.expired', description: 'A deposit expired before funds arrived.' },
  { code: 'deposit.reversed', description: 'A received deposit was reversed.' },
  { code: 'payout.created', description: 'A payout was initiated.' },
  { code: 'payout.processing', description: 'A payout is being processed.' },
  { code: 'payout.completed', description: 'A payout completed.' },
  { code: 'payout.failed', description: 'A payout failed.' },
  { code: 'payout.cancelled', description: 'A payout was cancelled.' },
  { code: 'payout.returned', description: 'A completed payout was returned by the receiving bank.' },
];

export const paymentsArea: Area = {
  name: 'payments',
  eventTypes: EVENT_TYPES,
  scopes: [PAYMENT_SCOPES.paymentsRead, PAYMENT_SCOPES.paymentsWrite],
  routes: registerPaymentRoutes,
  sandboxRoutes: registerPaymentSandboxRoutes,
  adminRoutes: registerPaymentAdminRoutes,
  // The transfers area's clearing and FX accounts are named here, beside the payout legs that use them.
  platformAccounts: () => [
    ...connectorNames().map((name) => railAccount(name)),
    TRANSFER_CLEARING,
    FX_POSITION,
  ],
  gauges: [payoutGauges],
  onScreeningReviewed: (tx, screening) => onScreeningReviewed(tx, screening),
  jobs: {
    [EXPIRE_DEPOSIT_KIND]: (tx, payload, deps) => expireDeposit(tx, deps, String(payload.deposit_id)),
    [HAND_OFF_KIND]: (tx, payload, deps) => handOff(tx, deps, String(payload.payout_id)),
    [SANDBOX_STEP_KIND]: (tx, payload, deps) => sandboxStep(tx, deps, payload),
  },
};
