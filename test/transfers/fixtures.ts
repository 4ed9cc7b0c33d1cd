// What the transfer model tests (model.test.ts, races.test.ts) share: the events a transfer publishes
// (D8's catalogue, written out as the spec gives it) and the statuses that announce themselves.
export type { TransferStatus as Status } from '../../src/transfers/transfer-schemas.ts';

export const TRANSFER_EVENTS = [
  'transfer.created',
  'transfer.in_review',
  'transfer.processing',
  'transfer.completed',
  'transfer.refunding',
  'transfer.refunded',
  'transfer.rejected',
  'transfer.cancelled',
  'transfer.expired',
];

/** Statuses with a catalogue code (D8): entering awaiting_deposit after a review publishes nothing. */
export const ANNOUNCED: ReadonlySet<string> = new Set(
  TRANSFER_EVENTS.map((code) => code.slice('transfer.'.length)),
);
