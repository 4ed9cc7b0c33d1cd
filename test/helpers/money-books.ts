// The books of the payment areas after a run (D20, D21), for tests that drive transfers, deposits and
// payouts through faults: every resource rests in a final state or in one it can leave (a durable job is
// pending for it, or it waits on someone outside: funds, a review, the rail), its money moved exactly as
// its state says and nothing else moved money, every payout was handed over at most once, and its events
// tell a path of its state machine. The state machines are written here from D20 and D21, not taken from
// the code under test.
import type { Queryable } from '../../src/db/pool.ts';
import { Decimal } from '../../src/platform/money.ts';
import type { SecretBox } from '../../src/platform/secrets.ts';
import { storedEnvelope } from './event-payloads.ts';

export type ResourceType = 'transfer' | 'deposit' | 'payout';

/** What each status may become (D20 transfers, D21 deposits and payouts). */
export const MOVES: Readonly<Record<ResourceType, Readonly<Record<string, readonly string[]>>>> = {
  transfer: {
    // expired: unfunded at expires_at, also while held in review; rejected from awaiting_deposit: its money
    // came for a beneficiary a sanctions review blocked since the confirm (D19, D20).
    in_review: ['awaiting_deposit', 'processing', 'rejected', 'cancelled', 'expired'],
    awaiting_deposit: ['processing', 'expired', 'cancelled', 'rejected'],
    processing: ['completed', 'refunding'],
    completed: ['refunding'],
    refunding: ['refunded'],
    rejected: [],
    cancelled: [],
    expired: [],
    refunded: [],
  },
  deposit: {
    pending: ['detected', 'received', 'expired', 'failed'],
    detected: ['received', 'failed'],
    received: ['reversed'],
    expired: [],
    failed: [],
    reversed: [],
  },
  payout: {
    pending: ['processing', 'cancelled', 'failed'],
    processing: ['completed', 'failed'],
    completed: ['returned'],
    failed: [],
    cancelled: [],
    returned: [],
  },
};

/** Statuses with an event code of their own (D8); a move into another status publishes nothing. */
const ANNOUNCED: Readonly<Record<ResourceType, readonly string[]>> = {
  transfer: [
    'in_review',
    'processing',
    'completed',
    'refunding',
    'refunded',
    'rejected',
    'cancelled',
    'expired',
  ],
  deposit: ['detected', 'received', 'failed', 'expired', 'reversed'],
  payout: ['processing', 'completed', 'failed', 'cancelled', 'returned'],
};

/** Every event code of the three resources: a subscription to these records every event of theirs. */
export const MONEY_EVENT_CODES: readonly string[] = (['transfer', 'deposit', 'payout'] as const).flatMap(
  (type) => [`${type}.created`, ...ANNOUNCED[type].map((status) => `${type}.${status}`)],
);

export interface TransferRow {
  id: string;
  organisation_id: string;
  status: string;
  funding_method: string;
  source_currency: string;
  source_amount: string;
  fee_amount: string;
  destination_currency: string;
  destination_amount: string;
  deposit_id: string | null;
  payout_id: string | null;
  screening_id: string | null;
}

export interface DepositRow {
  id: string;
  organisation_id: string;
  status: string;
  currency: string;
  received_amount: string | null;
  transfer_id: string | null;
}

export interface PayoutRow {
  id: string;
  organisation_id: string;
  beneficiary_id: string;
  status: string;
  failure_reason: string | null;
  currency: string;
  amount: string;
  connector: string;
  transfer_id: string | null;
  hand_offs: number;
}

export interface EntryRow {
  resource_id: string | null;
  organisation_id: string | null;
  account_name: string;
  currency: string;
  type: string;
  amount: string;
}

export interface EventRow {
  source_object_type: string;
  source_object_id: string;
  event_type_code: string;
  previous_status: string | null;
  object_id: string;
  object_status: string;
}

/** Everything the checks read, for the organisations of a run. */
export interface Books {
  transfers: TransferRow[];
  deposits: DepositRow[];
  payouts: PayoutRow[];
  /** Pending jobs by the id of the resource they act on: kinds. */
  jobs: Map<string, string[]>;
  /** Screenings' match_status by id. */
  screenings: Map<string, string>;
  /** The organisations' ledger entries and every platform entry. */
  entries: EntryRow[];
  /** Events of the three resources, oldest first. */
  events: EventRow[];
}

/** `secretBox` opens the events' payloads, sealed at rest (D13). */
export async function readBooks(
  db: Queryable,
  secretBox: Pick<SecretBox, 'decrypt'>,
  organisationIds: string[],
): Promise<Books> {
  const orgs = [organisationIds];
  const transfers = await db.query<TransferRow>(
    `SELECT id, organisation_id, status, funding_method, source_currency, source_amount::text, fee_amount::text,
            destination_currency, destination_amount::text, deposit_id, payout_id, screening_id
     FROM transfers WHERE organisation_id = ANY($1) ORDER BY id`,
    orgs,
  );
  const deposits = await db.query<DepositRow>(
    `SELECT id, organisation_id, status, currency, received_amount::text, transfer_id
     FROM deposits WHERE organisation_id = ANY($1) ORDER BY id`,
    orgs,
  );
  const payouts = await db.query<PayoutRow>(
    `SELECT p.id, p.organisation_id, p.beneficiary_id, p.status, p.failure_reason, p.currency, p.amount::text,
            p.connector, p.transfer_id,
            (SELECT count(*)::int FROM payout_hand_offs h WHERE h.payout_id = p.id) AS hand_offs
     FROM payouts p WHERE p.organisation_id = ANY($1) ORDER BY p.id`,
    orgs,
  );
  const jobs = new Map<string, string[]>();
  const jobRows = await db.query<{ kind: string; resource_id: string | null }>(
    `SELECT kind, coalesce(payload->>'payout_id', payload->>'transfer_id', payload->>'deposit_id',
                           payload->>'quote_id') AS resource_id FROM jobs`,
  );
  for (const row of jobRows.rows) {
    if (row.resource_id !== null) jobs.set(row.resource_id, [...(jobs.get(row.resource_id) ?? []), row.kind]);
  }
  const screenings = await db.query<{ id: string; match_status: string }>(
    'SELECT id, match_status FROM sanctions_screenings WHERE organisation_id = ANY($1)',
    orgs,
  );
  const entries = await db.query<EntryRow>(
    `SELECT resource_id, organisation_id, account_name, currency, type, amount::text FROM ledger_entries
     WHERE organisation_id = ANY($1) OR organisation_id IS NULL ORDER BY id`,
    orgs,
  );
  const storedEvents = await db.query<
    Omit<EventRow, 'previous_status' | 'object_id' | 'object_status'> & { payload: string }
  >(
    `SELECT source_object_type, source_object_id, event_type_code, payload
     FROM webhook_events
     WHERE organisation_id = ANY($1) AND source_object_type IN ('transfer', 'deposit', 'payout') ORDER BY id`,
    orgs,
  );
  const events = storedEvents.rows.map(({ payload, ...row }): EventRow => {
    const { data } = storedEnvelope<{
      data: { object: { id: string; status: string }; previous_status: string | null };
    }>({ secretBox }, payload);
    return {
      ...row,
      previous_status: data.previous_status,
      object_id: data.object.id,
      object_status: data.object.status,
    };
  });
  return {
    transfers: transfers.rows,
    deposits: deposits.rows,
    payouts: payouts.rows,
    jobs,
    screenings: new Map(screenings.rows.map((row) => [row.id, row.match_status])),
    entries: entries.rows,
    events,
  };
}

const HAND_OFF = 'payments.hand_off';
const SANDBOX_STEP = 'payments.sandbox_payout_step';
const EXPIRE_TRANSFER = 'transfers.expire_transfer';
const EXPIRE_DEPOSIT = 'payments.expire_deposit';

/**
 * Where each resource rests, or why it may not rest there. Final: no move is left but the rail's return of
 * a completed payout (and with it the refund of its completed transfer). Resumable:
 *   - payout `pending`: its hand-off job is pending; `processing`: a sandbox step job is pending, or the
 *     rail holds it until someone outside settles it (`railHolds`: the sandbox's 4444 accounts, the manual
 *     rail);
 *   - deposit `pending`: its expiry job is pending (until then it waits for the funds); `detected`: waits for
 *     the chain's confirmations;
 *   - transfer `processing`: its payout leg is resumable; `awaiting_deposit`: its deposit leg is pending and
 *     its expiry job too; `in_review`: its screening waits for the operator's review (`potential_match`).
 * `refunding` never rests: the refund commits with it. Returns one line per resource that rests nowhere.
 */
export function stranded(books: Books, railHolds: (payout: PayoutRow) => boolean): string[] {
  const problems: string[] = [];
  const has = (id: string, kind: string) => books.jobs.get(id)?.includes(kind) === true;
  const payouts = new Map(books.payouts.map((row) => [row.id, row]));
  const deposits = new Map(books.deposits.map((row) => [row.id, row]));
  const payoutResumable = (row: PayoutRow): boolean =>
    (row.status === 'pending' && has(row.id, HAND_OFF)) ||
    (row.status === 'processing' && (has(row.id, SANDBOX_STEP) || railHolds(row)));
  for (const row of books.payouts) {
    if (['completed', 'failed', 'cancelled', 'returned'].includes(row.status)) continue;
    if (!payoutResumable(row)) problems.push(`payout ${row.id} rests ${row.status} with nothing to move it`);
  }
  for (const row of books.deposits) {
    if (['received', 'expired', 'failed', 'reversed', 'detected'].includes(row.status)) continue;
    if (!(row.status === 'pending' && has(row.id, EXPIRE_DEPOSIT)))
      problems.push(`deposit ${row.id} rests ${row.status} without its expiry`);
  }
  for (const row of books.transfers) {
    if (['completed', 'refunded', 'rejected', 'cancelled', 'expired'].includes(row.status)) continue;
    const payout = row.payout_id === null ? undefined : payouts.get(row.payout_id);
    const deposit = row.deposit_id === null ? undefined : deposits.get(row.deposit_id);
    const resumable =
      (row.status === 'processing' && payout !== undefined && payoutResumable(payout)) ||
      (row.status === 'awaiting_deposit' && deposit?.status === 'pending' && has(row.id, EXPIRE_TRANSFER)) ||
      (row.status === 'in_review' &&
        row.screening_id !== null &&
        books.screenings.get(row.screening_id) === 'potential_match');
    if (!resumable)
      problems.push(
        `transfer ${row.id} rests ${row.status} (payout ${payout?.status ?? 'none'}, deposit ${deposit?.status ?? 'none'}) with nothing to move it`,
      );
  }
  return problems;
}

/** `<account> <currency> <type> <amount>`, the amount without trailing zeros: one ledger entry. */
const entry = (account: string, currency: string, type: string, amount: Decimal | string): string =>
  `${account} ${currency} ${type} ${new Decimal(amount).toFixed()}`;

const CLEARING = 'transfers_clearing';
const FX = 'fx';
const FEES = 'fees';

/** The entries a transfer's state says it posted (D20): funding, the payout leg's conversion, a refund. */
export function transferEntries(row: TransferRow): string[] {
  const source = row.source_currency;
  const fee = new Decimal(row.fee_amount);
  const net = new Decimal(row.source_amount).minus(fee);
  const funding = [
    entry('available', source, 'transfer_funding', net.negated()),
    entry(CLEARING, source, 'transfer_funding', net),
    ...(fee.gt(0) ? [entry('available', source, 'fee', fee.negated()), entry(FEES, source, 'fee', fee)] : []),
  ];
  const leg = [
    entry(CLEARING, source, 'transfer_funding', net.negated()),
    entry(FX, source, 'transfer_funding', net),
    entry(FX, row.destination_currency, 'transfer_funding', new Decimal(row.destination_amount).negated()),
    entry(CLEARING, row.destination_currency, 'transfer_funding', row.destination_amount),
  ];
  const refund = (from: string) => [
    entry(from, source, 'transfer_refund', net.negated()),
    entry('available', source, 'transfer_refund', net),
    ...(fee.gt(0)
      ? [
          entry(FEES, source, 'transfer_refund', fee.negated()),
          entry('available', source, 'transfer_refund', fee),
        ]
      : []),
  ];
  // Balance funding is taken at confirm, also while a screening hit holds the transfer in review; other
  // methods are funded only on their way to processing.
  const fundedAtConfirm = row.funding_method === 'balance';
  switch (row.status) {
    case 'processing':
    case 'completed':
      return [...funding, ...leg];
    case 'refunded':
      return [...funding, ...leg, ...refund(FX)];
    case 'in_review':
      return fundedAtConfirm ? funding : [];
    case 'cancelled':
    case 'rejected':
    case 'expired':
      return fundedAtConfirm ? [...funding, ...refund(CLEARING)] : [];
    default:
      return [];
  }
}

/**
 * The entries a payout's state says it posted (D21): a payout of its own is held from the available
 * balance at create; a transfer's leg waits on the transfers clearing account and goes back to the FX
 * position. Completion sends it to the rail, a failure or cancel brings it back, a return brings it back
 * from the rail.
 */
export function payoutEntries(row: PayoutRow): string[] {
  const rail = `rail:${row.connector}`;
  const own = row.transfer_id === null;
  const waiting = own ? 'held' : CLEARING;
  const back = own ? 'available' : FX;
  const amount = new Decimal(row.amount);
  const move = (type: string, from: string, into: string) => [
    entry(from, row.currency, type, amount.negated()),
    entry(into, row.currency, type, amount),
  ];
  const held = own ? move('payout', 'available', 'held') : [];
  switch (row.status) {
    case 'pending':
    case 'processing':
      return held;
    case 'completed':
      return [...held, ...move('payout', waiting, rail)];
    case 'failed':
    case 'cancelled':
      return [...held, ...move('payout_reversal', waiting, back)];
    case 'returned':
      return [...held, ...move('payout', waiting, rail), ...move('payout_reversal', rail, back)];
    default:
      return [];
  }
}

/** A received bank deposit came from the rail into the available balance (D21). */
export function depositEntries(row: DepositRow, rail: string): string[] {
  if (row.status !== 'received') return [];
  return [
    entry(rail, row.currency, 'deposit', new Decimal(row.received_amount!).negated()),
    entry('available', row.currency, 'deposit', row.received_amount!),
  ];
}

/**
 * Compares every resource's ledger entries with what its state says (sorted lists, exact), and returns one
 * line per difference; also every entry that belongs to no resource and is not a top-up.
 */
export function ledgerMismatches(books: Books, depositRail: string): string[] {
  const posted = new Map<string, string[]>();
  const unattributed: string[] = [];
  const known = new Set([...books.transfers, ...books.deposits, ...books.payouts].map((row) => row.id));
  for (const row of books.entries) {
    if (row.resource_id !== null && known.has(row.resource_id)) {
      posted.set(row.resource_id, [
        ...(posted.get(row.resource_id) ?? []),
        entry(row.account_name, row.currency, row.type, row.amount),
      ]);
    } else if (row.type !== 'top_up') {
      unattributed.push(
        `entry of no known resource: ${entry(row.account_name, row.currency, row.type, row.amount)} (${row.resource_id})`,
      );
    }
  }
  const problems = [...unattributed];
  const compare = (id: string, status: string, expected: string[]) => {
    const actual = (posted.get(id) ?? []).sort();
    const wanted = [...expected].sort();
    if (JSON.stringify(actual) !== JSON.stringify(wanted))
      problems.push(
        `${id} (${status}): posted ${JSON.stringify(actual)}, its state says ${JSON.stringify(wanted)}`,
      );
  };
  for (const row of books.transfers) compare(row.id, row.status, transferEntries(row));
  for (const row of books.payouts) compare(row.id, row.status, payoutEntries(row));
  for (const row of books.deposits) compare(row.id, row.status, depositEntries(row, depositRail));
  return problems;
}

/**
 * Each resource's events against its state machine: one `<type>.created` first (previous_status null), then
 * one event per announced status, each naming the status it left (the one the event before announced, or a
 * status reached from it without an event of its own), each move allowed, no code twice, every payload's
 * object the resource and in the status its code names, and the last announced status leading to the
 * resource's current one. Returns one line per problem.
 */
export function eventPathProblems(books: Books): string[] {
  const problems: string[] = [];
  const byResource = new Map<string, EventRow[]>();
  for (const event of books.events)
    byResource.set(event.source_object_id, [...(byResource.get(event.source_object_id) ?? []), event]);
  const resources: [ResourceType, { id: string; status: string }[]][] = [
    ['transfer', books.transfers],
    ['deposit', books.deposits],
    ['payout', books.payouts],
  ];
  const known = new Set(resources.flatMap(([, rows]) => rows.map((row) => row.id)));
  for (const id of byResource.keys())
    if (!known.has(id)) problems.push(`events of an unknown resource ${id}`);
  for (const [type, rows] of resources) {
    const moves = MOVES[type];
    // A status reached from `from` without an event: one the catalogue does not announce.
    const silently = (from: string, to: string) => !ANNOUNCED[type].includes(to) && moves[from]?.includes(to);
    for (const row of rows) {
      const events = byResource.get(row.id) ?? [];
      const where = `${type} ${row.id}`;
      const first = events[0];
      if (!first || first.event_type_code !== `${type}.created` || first.previous_status !== null) {
        problems.push(
          `${where}: does not start with ${type}.created (${JSON.stringify(events.map((e) => e.event_type_code))})`,
        );
        continue;
      }
      let at = first.object_status;
      const codes = new Set<string>();
      for (const event of events) {
        if (codes.has(event.event_type_code)) problems.push(`${where}: ${event.event_type_code} twice`);
        codes.add(event.event_type_code);
        if (event.source_object_type !== type || event.object_id !== row.id)
          problems.push(`${where}: an event about ${event.source_object_type} ${event.object_id}`);
        if (event === first) continue;
        if (event.event_type_code !== `${type}.${event.object_status}`)
          problems.push(`${where}: ${event.event_type_code} carries the status ${event.object_status}`);
        // The created event's own status may follow it at once, with no previous status (D8).
        if (
          event === events[1] &&
          event.previous_status === null &&
          event.object_status === first.object_status
        )
          continue;
        const from = event.previous_status ?? '(null)';
        if (from !== at && !silently(at, from))
          problems.push(
            `${where}: ${event.event_type_code} says it left ${from}, but the last status was ${at}`,
          );
        if (!moves[from]?.includes(event.object_status))
          problems.push(`${where}: ${from} -> ${event.object_status} is no move of D20/D21`);
        at = event.object_status;
      }
      if (row.status !== at && !silently(at, row.status))
        problems.push(`${where}: is ${row.status}, but its last event announced ${at}`);
    }
  }
  return problems;
}

/** Sum of every ledger entry per currency, over the whole ledger: zero in each, as double entry promises. */
export async function ledgerTotals(db: Queryable): Promise<Record<string, string>> {
  const result = await db.query<{ currency: string; total: string }>(
    'SELECT currency, sum(amount)::text AS total FROM ledger_entries GROUP BY currency ORDER BY currency',
  );
  return Object.fromEntries(result.rows.map((row) => [row.currency, new Decimal(row.total).toFixed()]));
}
