// Quotes and transfers (D20): pricing a corridor, and a transfer from confirmation to payout.
import type { Area, EventType } from '../platform/area.ts';
import { PAYMENT_SCOPES } from '../platform/scopes.ts';
import { EXPIRE_QUOTE_KIND, expireQuoteJob } from './quotes.ts';
import { registerTransferRoutes, registerTransferSandboxRoutes } from './routes.ts';
import {
  depositAwaitedAt,
  EXPIRE_TRANSFER_KIND,
  expireTransferJob,
  FEES,
  onDepositReceived,
  onPayoutMoved,
  onScreeningReviewed,
} from './transfers.ts';

const EVENT_TYPES: readonly EventType[] = [
  { code: 'transfer.created', description: 'A transfer was created from a confirmed quote.' },
  { code: 'transfer.in_review', description: 'A transfer is held for compliance review.' },
  { code: 'transfer.processing', description: 'A transfer is being processed.' },
  { code: 'transfer.completed', description: 'A transfer completed: the payout reached the beneficiary.' },
  { code: 'transfer.refunding', description: 'A transfer is being refunded to the sender.' },
  { code: 'transfer.refunded', description: 'A transfer was refunded to the sender.' },
  { code: 'transfer.rejected', description: 'A transfer was rejected.' },
  { code: 'transfer.cancelled', description: 'A transfer was cancelled.' },
  { code: 'transfer.expired', description: 'A transfer expired before it was funded.' },
];

export const transfersArea: Area = {
  name: 'transfers',
  scopes: [PAYMENT_SCOPES.transfersRead, PAYMENT_SCOPES.transfersWrite],
  eventTypes: EVENT_TYPES,
  routes: registerTransferRoutes,
  platformAccounts: () => [FEES],
  sandboxRoutes: registerTransferSandboxRoutes,
  jobs: {
    [EXPIRE_QUOTE_KIND]: (tx, payload) => expireQuoteJob(tx, String(payload.quote_id)),
    [EXPIRE_TRANSFER_KIND]: (tx, payload, deps) => expireTransferJob(tx, deps, String(payload.transfer_id)),
  },
  depositAwaitedAt,
  onDepositReceived: (tx, deposit, deps) => onDepositReceived(tx, deps, deposit),
  onPayoutMoved: (tx, payout, deps) => onPayoutMoved(tx, deps, payout),
  onScreeningReviewed: (tx, screening, deps) => onScreeningReviewed(tx, deps, screening),
};
