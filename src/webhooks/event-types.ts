// Event types of the payment areas (D8), published in the catalogue ahead of the areas that emit them:
// integrators can subscribe before the first such event exists. Each area's codes move to its own
// module (its `eventTypes`) when the area lands; the catalogue is gathered from every area (src/areas.ts).
// `webhook.ping` (the D9 health probe) is sent by the platform but is not listed and cannot be
// subscribed to.
import type { EventType } from '../platform/area.ts';

export const PAYMENT_EVENT_TYPES: readonly EventType[] = [
  { code: 'transfer.created', description: 'A transfer was created from a confirmed quote.' },
  { code: 'transfer.in_review', description: 'A transfer is held for compliance review.' },
  { code: 'transfer.processing', description: 'A transfer is being processed.' },
  { code: 'transfer.completed', description: 'A transfer completed: the payout reached the beneficiary.' },
  { code: 'transfer.refunding', description: 'A transfer is being refunded to the sender.' },
  { code: 'transfer.refunded', description: 'A transfer was refunded to the sender.' },
  { code: 'transfer.rejected', description: 'A transfer was rejected.' },
  { code: 'transfer.cancelled', description: 'A transfer was cancelled.' },
  { code: 'transfer.expired', description: 'A transfer expired before it was funded.' },
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
  { code: 'beneficiary.created', description: 'A beneficiary was created.' },
  { code: 'beneficiary.updated', description: 'A beneficiary was updated.' },
  { code: 'beneficiary.in_review', description: 'A beneficiary is held for compliance review.' },
  { code: 'beneficiary.activated', description: 'A beneficiary became active and can receive payouts.' },
  { code: 'beneficiary.blocked', description: 'A beneficiary was blocked.' },
  { code: 'beneficiary.deleted', description: 'A beneficiary was deleted.' },
  { code: 'screening.completed', description: 'A sanctions screening completed.' },
  { code: 'screening.resolved', description: 'A sanctions screening hit was resolved by review.' },
];
