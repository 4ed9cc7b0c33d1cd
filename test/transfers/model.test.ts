// A stateful model-based test of transfers (D20, D21, D24): random sequences of client and sandbox actions
// drive the real app (HTTP through app.inject, the real job runner, the sandbox rail and the beneficiaries
// and sanctions areas), and after every command the service must agree with a small model: each transfer's
// status, its deposit and payout legs, its events with their previous_status, and the available balance in
// integer minor units. A command the current state does not allow must be refused with the status and code
// the docs give, and change nothing. Payouts go to an account ending 4444 (the sandbox holds it processing)
// and SANDBOX_STEP_DELAY_MS is an hour, so nothing moves unless a command moves it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { ledgerViolations } from '../../src/balances/repository.ts';
import type { JobRunner } from '../../src/platform/jobs/runner.ts';
import { fromMinorUnits, toMinorUnits } from '../../src/platform/money.ts';
import { VALID } from '../beneficiaries/bodies.ts';
import { errorBody, startTestApp, type TestApp } from '../helpers/app.ts';
import { storedEnvelope } from '../helpers/event-payloads.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { waitUntil } from '../helpers/wait.ts';
import { runJobs } from '../payments/fixtures.ts';
import { activeSubscription } from '../webhooks/fixtures.ts';
import { ANNOUNCED, type Status, TRANSFER_EVENTS } from './fixtures.ts';

const QUOTES = '/api/v1/transfers/quotes';
const TRANSFERS = '/api/v1/transfers';
const PAYOUTS = '/api/v1/payments/payouts';
const DEPOSITS = '/api/v1/payments/deposits';
const USD_EUR = 'cor_0000SANDBX0000000000000001';
const HOLD_IBAN = 'DE95370400440532014444';
/** What the organisation keeps available after its own payout takes the rest, so that funds can run short. */
const START_MINOR = 300_000n;
const OPENING_MINOR = 100_000_000n;

interface ModelTransfer {
  quoteId: string;
  id: string;
  funding: 'balance' | 'bank_transfer';
  sourceMinor: bigint;
  destinationAmount: string;
  status: Status;
  /** Balance funding taken and not given back. */
  funded: boolean;
  screening: 'none' | 'pending' | 'reviewed';
  screeningId: string | null;
  /** To the beneficiary with the magic name, the one a sanctions review may block. */
  toSanctioned: boolean;
  /** The deposit legs in creation order; the last is the transfer's `deposit`. */
  deposits: { status: 'pending' | 'received'; receivedMinor: bigint | null }[];
  payout: { status: 'processing' | 'completed' | 'failed' | 'returned'; failureReason: string | null } | null;
  /** Each event: [status entered, previous status]; `created` has null. */
  events: [Status, Status | null][];
}

interface Model {
  availableMinor: bigint;
  heldMinor: bigint;
  transfers: ModelTransfer[];
  /** The beneficiary with the magic name was blocked by a sanctions review (confirmed_match). */
  blocked: boolean;
}

interface Real {
  t: TestApp;
  api: ApiClient;
  plain: string;
  sanctioned: string;
  /** Idempotency keys sent so far, for the next key. */
  keys: number;
  /** The last state-changing request and its answer, for the replay command. */
  last?: { url: string; body: unknown; key: string; status: number; answer: string };
}

interface TransferJson {
  id: string;
  status: Status;
  status_reason: string | null;
  source_amount: string;
  destination_amount: string;
  screening_id: string | null;
  deposit: { id: string; status: string; received_amount: string | null } | null;
  payout: { id: string; status: string; amount: string; failure_reason: string | null } | null;
}

const usd = (minor: bigint): string => fromMinorUnits(minor, 'USD').toFixed(2);

/** Every response of the run goes through here: no 5xx, ever. */
async function send(response: Promise<LightMyRequestResponse>): Promise<LightMyRequestResponse> {
  const answered = await response;
  assert.ok(answered.statusCode < 500, `${answered.statusCode}: ${answered.body}`);
  return answered;
}

/** A state-changing POST, with an Idempotency-Key of its own (D14), remembered for the replay command. */
async function post(real: Real, url: string, body?: unknown): Promise<LightMyRequestResponse> {
  const key = `model-${++real.keys}`;
  const response = await send(real.api.post(url, body, { 'idempotency-key': key }));
  real.last = { url, body, key, status: response.statusCode, answer: response.body };
  return response;
}

function expectOk(response: LightMyRequestResponse, status = 200): void {
  assert.equal(response.statusCode, status, response.body);
}

function expectRefused(response: LightMyRequestResponse, status: number, code: string, field?: string): void {
  assert.equal(response.statusCode, status, response.body);
  const body = errorBody(response.body);
  assert.equal(body.code, code, response.body);
  assert.equal(body.field, field, response.body);
}

function addEvent(transfer: ModelTransfer, to: Status): void {
  if (ANNOUNCED.has(to)) transfer.events.push([to, transfer.status]);
  transfer.status = to;
}

const payoutIdOf = async (real: Real, transfer: ModelTransfer): Promise<string> => {
  const view = (await send(real.api.get(`${TRANSFERS}/${transfer.id}`))).json() as TransferJson;
  assert.ok(view.payout, `transfer ${transfer.id} has a payout leg`);
  return view.payout.id;
};

/** The payout leg was created in the command's transaction; the job runner hands it to the rail. */
async function handedOff(real: Real, transfer: ModelTransfer): Promise<void> {
  const payoutId = await payoutIdOf(real, transfer);
  await waitUntil(
    async () => (await send(real.api.get(`${PAYOUTS}/${payoutId}`))).json().status === 'processing',
    `payout ${payoutId} handed off`,
    10_000,
  );
}

/** A new payout leg, processing on the sandbox rail (the 4444 account holds it). */
async function startPayout(real: Real, transfer: ModelTransfer, from: Status): Promise<void> {
  transfer.status = from;
  addEvent(transfer, 'processing');
  transfer.payout = { status: 'processing', failureReason: null };
  await handedOff(real, transfer);
}

/** The service agrees with the model: statuses, legs, events, balance, ledger. */
async function verify(model: Model, real: Real): Promise<void> {
  const { api, t } = real;
  const page = (
    await send(
      api.post(`${TRANSFERS}/search`, { page_size: 100, sort_by: 'created_at', sort_direction: 'asc' }),
    )
  ).json() as { total: number; items: TransferJson[] };
  assert.equal(page.total, model.transfers.length, 'one transfer per successful confirm');
  const views = new Map(page.items.map((item) => [item.id, item]));
  const deposits = (
    await send(
      api.post(`${DEPOSITS}/search`, { page_size: 100, sort_by: 'created_at', sort_direction: 'asc' }),
    )
  ).json() as {
    items: { id: string; transfer_id: string | null; status: string; received_amount: string | null }[];
  };
  const payouts = (await send(api.post(`${PAYOUTS}/search`, { page_size: 100 }))).json() as {
    items: {
      id: string;
      transfer_id: string | null;
      status: string;
      amount: string;
      failure_reason: string | null;
    }[];
  };
  const events = await t.db.pool.query<{
    source_object_id: string;
    event_type_code: string;
    payload: string;
  }>(
    'SELECT source_object_id, event_type_code, payload FROM webhook_events WHERE source_object_id = ANY($1) ORDER BY id',
    [model.transfers.map((transfer) => transfer.id)],
  );
  for (const transfer of model.transfers) {
    const view = views.get(transfer.id);
    assert.ok(view, `transfer ${transfer.id} is found`);
    assert.equal(view.status, transfer.status, `status of ${transfer.id}`);
    assert.equal(toMinorUnits(view.source_amount, 'USD'), transfer.sourceMinor);
    const legs = deposits.items.filter((deposit) => deposit.transfer_id === transfer.id);
    assert.deepEqual(
      legs.map((deposit) => [
        deposit.status,
        deposit.received_amount === null ? null : toMinorUnits(deposit.received_amount, 'USD'),
      ]),
      transfer.deposits.map((deposit) => [deposit.status, deposit.receivedMinor]),
      `deposit legs of ${transfer.id}`,
    );
    assert.equal(view.deposit?.id ?? null, legs.at(-1)?.id ?? null, `current deposit leg of ${transfer.id}`);
    const payoutLegs = payouts.items.filter((payout) => payout.transfer_id === transfer.id);
    assert.deepEqual(
      payoutLegs.map((payout) => [payout.status, payout.failure_reason, payout.amount]),
      transfer.payout
        ? [[transfer.payout.status, transfer.payout.failureReason, transfer.destinationAmount]]
        : [],
      `payout leg of ${transfer.id}`,
    );
    assert.equal(view.payout?.id ?? null, payoutLegs[0]?.id ?? null);
    const seen = events.rows
      .filter((row) => row.source_object_id === transfer.id)
      .map((row) => {
        const { data } = storedEnvelope<{ data: { object: { status: string }; previous_status: unknown } }>(
          t.deps,
          row.payload,
        );
        return [row.event_type_code, data.object.status, data.previous_status];
      });
    assert.deepEqual(
      seen,
      transfer.events.map(([status, previous], index) => [
        index === 0 ? 'transfer.created' : `transfer.${status}`,
        status,
        previous,
      ]),
      `events of ${transfer.id}`,
    );
  }
  const balances = (await send(api.get('/api/v1/balances'))).json() as {
    currency: string;
    available: string;
    held: string;
  }[];
  const balance = balances.find((entry) => entry.currency === 'USD')!;
  assert.equal(toMinorUnits(balance.available, 'USD'), model.availableMinor, 'USD available');
  assert.equal(toMinorUnits(balance.held, 'USD'), model.heldMinor, 'USD held');
  assert.deepEqual(await ledgerViolations(t.db.pool), []);
}

type Command = fc.AsyncCommand<Model, Real>;

/** A command that always runs: it reads the model to know whether the service must carry it out or refuse it. */
abstract class AlwaysRun implements Command {
  check = () => true;
  abstract run(model: Model, real: Real): Promise<void>;
}

/** A command on the model's transfer at `index` (of those it picks from, modulo their count). */
abstract class OnTransfer extends AlwaysRun {
  readonly index: number;
  constructor(index: number) {
    super();
    this.index = index;
  }
}

/**
 * Picks a transfer among those `filter` keeps, by a drawn index; undefined when there is none. An even
 * index prefers those the command may act on (`allowed`), so that short sequences reach deep states; an
 * odd one takes any, so that refusals are tried as often.
 */
function pick(
  model: Model,
  index: number,
  filter: (transfer: ModelTransfer) => boolean,
  allowed: (transfer: ModelTransfer) => boolean,
): ModelTransfer | undefined {
  const candidates = model.transfers.filter(filter);
  const preferred = candidates.filter(allowed);
  const from = index % 2 === 0 && preferred.length > 0 ? preferred : candidates;
  return from.length === 0 ? undefined : from[Math.floor(index / 2) % from.length];
}

const any = () => true;
const waiting = (transfer: ModelTransfer) => transfer.status === 'awaiting_deposit';

/** A well-formed id nothing has. */
const UNKNOWN = (prefix: string): string => `${prefix}_${'0'.repeat(26)}`;
const CONFIRM_BODY = (real: Real) => ({ beneficiary_id: real.plain, funding_method: 'bank_transfer' });

/** A command without a target in the model yet acts on an unknown id instead: 404 NOT_FOUND, nothing changes. */
async function unknown(model: Model, real: Real, url: string, body?: unknown): Promise<void> {
  expectRefused(await post(real, url, body), 404, 'NOT_FOUND');
  return verify(model, real);
}

async function quote(real: Real, sourceMinor: bigint): Promise<{ id: string; destination_amount: string }> {
  const response = await send(post(real, QUOTES, { corridor_id: USD_EUR, source_amount: usd(sourceMinor) }));
  expectOk(response, 201);
  return response.json() as { id: string; destination_amount: string };
}

class Confirm extends AlwaysRun {
  readonly funding: 'balance' | 'bank_transfer';
  readonly sourceMinor: bigint;
  readonly sanctioned: boolean;
  constructor(funding: 'balance' | 'bank_transfer', sourceMinor: bigint, sanctioned: boolean) {
    super();
    this.funding = funding;
    this.sourceMinor = sourceMinor;
    this.sanctioned = sanctioned;
  }
  override async run(model: Model, real: Real): Promise<void> {
    const q = await quote(real, this.sourceMinor);
    const response = await send(
      post(real, `${QUOTES}/${q.id}/confirm`, {
        beneficiary_id: this.sanctioned ? real.sanctioned : real.plain,
        funding_method: this.funding,
      }),
    );
    if (this.sanctioned && model.blocked) {
      expectRefused(response, 400, 'BENEFICIARY_NOT_ACTIVE');
      assert.equal((await send(real.api.get(`${QUOTES}/${q.id}`))).json().status, 'open');
      return verify(model, real);
    }
    if (this.funding === 'balance' && model.availableMinor < this.sourceMinor) {
      expectRefused(response, 400, 'INSUFFICIENT_FUNDS');
      assert.equal(
        (await send(real.api.get(`${QUOTES}/${q.id}`))).json().status,
        'open',
        'the quote stays open',
      );
      return verify(model, real);
    }
    expectOk(response, 201);
    const view = response.json() as TransferJson;
    const first: Status = this.sanctioned
      ? 'in_review'
      : this.funding === 'balance'
        ? 'processing'
        : 'awaiting_deposit';
    const transfer: ModelTransfer = {
      quoteId: q.id,
      id: view.id,
      funding: this.funding,
      sourceMinor: this.sourceMinor,
      destinationAmount: q.destination_amount,
      status: first,
      funded: this.funding === 'balance',
      screening: this.sanctioned ? 'pending' : 'none',
      screeningId: view.screening_id,
      toSanctioned: this.sanctioned,
      deposits: first === 'awaiting_deposit' ? [{ status: 'pending', receivedMinor: null }] : [],
      payout: first === 'processing' ? { status: 'processing', failureReason: null } : null,
      // transfer.created, then the first status's own event when it has a code (D8).
      events: ANNOUNCED.has(first)
        ? [
            [first, null],
            [first, null],
          ]
        : [[first, null]],
    };
    model.transfers.push(transfer);
    if (this.funding === 'balance') model.availableMinor -= this.sourceMinor;
    if (first === 'processing') await handedOff(real, transfer);
    return verify(model, real);
  }
  override toString = () =>
    `confirm(${this.funding}, ${usd(this.sourceMinor)}${this.sanctioned ? ', sanctioned' : ''})`;
}

/** A second confirm of a quote a transfer accepted: 400 INVALID_STATE (D20). */
class ConfirmAgain extends OnTransfer {
  override async run(model: Model, real: Real): Promise<void> {
    const transfer = pick(model, this.index, any, any);
    if (!transfer) return unknown(model, real, `${QUOTES}/${UNKNOWN('qte')}/confirm`, CONFIRM_BODY(real));
    const response = await send(
      post(real, `${QUOTES}/${transfer.quoteId}/confirm`, {
        beneficiary_id: real.plain,
        funding_method: 'bank_transfer',
      }),
    );
    expectRefused(response, 400, 'INVALID_STATE');
    return verify(model, real);
  }
  override toString = () => `confirmAgain(#${this.index})`;
}

/** A quote expired by the sandbox: its confirm is 400 QUOTE_EXPIRED, nothing created (D20, D24). */
class ConfirmExpiredQuote extends AlwaysRun {
  readonly funding: 'balance' | 'bank_transfer';
  constructor(funding: 'balance' | 'bank_transfer') {
    super();
    this.funding = funding;
  }
  override async run(model: Model, real: Real): Promise<void> {
    const q = await quote(real, 10_000n);
    expectOk(await post(real, `/api/v1/sandbox/quotes/${q.id}/expire`));
    const response = await send(
      post(real, `${QUOTES}/${q.id}/confirm`, {
        beneficiary_id: real.plain,
        funding_method: this.funding,
      }),
    );
    expectRefused(response, 400, 'QUOTE_EXPIRED');
    return verify(model, real);
  }
  override toString = () => `confirmExpiredQuote(${this.funding})`;
}

class Cancel extends OnTransfer {
  override async run(model: Model, real: Real): Promise<void> {
    const transfer = pick(model, this.index, any, (candidate) =>
      ['awaiting_deposit', 'in_review'].includes(candidate.status),
    );
    if (!transfer) return unknown(model, real, `${TRANSFERS}/${UNKNOWN('trf')}/cancel`);
    const response = await post(real, `${TRANSFERS}/${transfer.id}/cancel`);
    if (transfer.status !== 'awaiting_deposit' && transfer.status !== 'in_review') {
      expectRefused(response, 400, 'INVALID_STATE');
      return verify(model, real);
    }
    expectOk(response);
    if (transfer.funded) model.availableMinor += transfer.sourceMinor;
    transfer.funded = false;
    addEvent(transfer, 'cancelled');
    return verify(model, real);
  }
  override toString = () => `cancel(#${this.index})`;
}

/**
 * Money arrived on a deposit leg of the transfer: it is credited to the balance; on the current leg of a
 * transfer awaiting it, at least the source amount funds the transfer (its payout starts), less leaves
 * it waiting on a new leg for the whole amount (D20).
 */
async function arrived(
  model: Model,
  real: Real,
  transfer: ModelTransfer,
  leg: number,
  amount: bigint,
): Promise<void> {
  model.availableMinor += amount;
  transfer.deposits[leg] = { status: 'received', receivedMinor: amount };
  if (transfer.status !== 'awaiting_deposit' || leg !== transfer.deposits.length - 1) return;
  // Its beneficiary was blocked since the confirm: rejected, the money stays on the balance (D20).
  if (transfer.toSanctioned && model.blocked) {
    addEvent(transfer, 'rejected');
    return;
  }
  if (amount < transfer.sourceMinor) {
    transfer.deposits.push({ status: 'pending', receivedMinor: null });
    return;
  }
  model.availableMinor -= transfer.sourceMinor;
  transfer.funded = true;
  await startPayout(real, transfer, transfer.status);
}

/** The amount of a simulated arrival: the source amount (by default or given), less, or more. */
function arrival(kind: 'default' | 'exact' | 'under' | 'over', source: bigint, delta: bigint): bigint {
  if (kind === 'under') return 1n + (delta % (source - 1n));
  return kind === 'over' ? source + delta : source;
}

/** The sandbox's deposit for the transfer: the exact amount (default or given), less, or more (D20, D24). */
class Fund extends OnTransfer {
  readonly kind: 'default' | 'exact' | 'under' | 'over';
  readonly deltaMinor: bigint;
  constructor(index: number, kind: 'default' | 'exact' | 'under' | 'over', deltaMinor: bigint) {
    super(index);
    this.kind = kind;
    this.deltaMinor = deltaMinor;
  }
  override async run(model: Model, real: Real): Promise<void> {
    const transfer = pick(model, this.index, any, waiting);
    if (!transfer) return unknown(model, real, `/api/v1/sandbox/transfers/${UNKNOWN('trf')}/fund`);
    const amount = arrival(this.kind, transfer.sourceMinor, this.deltaMinor);
    const body = this.kind === 'default' ? undefined : { amount: usd(amount) };
    const response = await post(real, `/api/v1/sandbox/transfers/${transfer.id}/fund`, body);
    if (transfer.status !== 'awaiting_deposit') {
      expectRefused(response, 400, 'INVALID_STATE');
      return verify(model, real);
    }
    expectOk(response);
    await arrived(model, real, transfer, transfer.deposits.length - 1, amount);
    return verify(model, real);
  }
  override toString = () => `fund(#${this.index}, ${this.kind}, ${this.deltaMinor})`;
}

class Expire extends OnTransfer {
  override async run(model: Model, real: Real): Promise<void> {
    const transfer = pick(model, this.index, any, waiting);
    if (!transfer) return unknown(model, real, `/api/v1/sandbox/transfers/${UNKNOWN('trf')}/expire`);
    const response = await post(real, `/api/v1/sandbox/transfers/${transfer.id}/expire`);
    if (transfer.status !== 'awaiting_deposit') {
      expectRefused(response, 400, 'INVALID_STATE');
      return verify(model, real);
    }
    expectOk(response);
    // The deposit leg keeps waiting past the transfer's deadline (its own expires_at).
    addEvent(transfer, 'expired');
    return verify(model, real);
  }
  override toString = () => `expire(#${this.index})`;
}

const FAILURES = [undefined, 'account_closed', 'invalid_account', 'rejected_by_bank', 'compliance'] as const;

/** The sandbox rail's outcome for a transfer's payout leg (D21, D24). */
class Settle extends OnTransfer {
  readonly outcome: 'complete' | 'fail' | 'return';
  readonly reason: (typeof FAILURES)[number];
  constructor(index: number, outcome: 'complete' | 'fail' | 'return', reason: (typeof FAILURES)[number]) {
    super(index);
    this.outcome = outcome;
    this.reason = reason;
  }
  override async run(model: Model, real: Real): Promise<void> {
    const from = this.outcome === 'return' ? 'completed' : 'processing';
    const transfer = pick(
      model,
      this.index,
      (candidate) => candidate.payout !== null,
      (candidate) => candidate.payout?.status === from,
    );
    if (!transfer) return unknown(model, real, `/api/v1/sandbox/payouts/${UNKNOWN('pyt')}/${this.outcome}`);
    const payout = transfer.payout!;
    const payoutId = await payoutIdOf(real, transfer);
    const body = this.reason === undefined ? undefined : { failure_reason: this.reason };
    const response = await post(real, `/api/v1/sandbox/payouts/${payoutId}/${this.outcome}`, body);
    if (this.outcome === 'complete' && this.reason !== undefined) {
      expectRefused(response, 422, 'VALIDATION_FAILED', 'failure_reason');
      return verify(model, real);
    }
    if (payout.status !== from) {
      expectRefused(response, 400, 'INVALID_STATE');
      return verify(model, real);
    }
    expectOk(response);
    if (this.outcome === 'complete') {
      payout.status = 'completed';
      addEvent(transfer, 'completed');
    } else {
      payout.status = this.outcome === 'fail' ? 'failed' : 'returned';
      payout.failureReason = this.reason ?? (this.outcome === 'fail' ? 'rejected_by_bank' : 'returned');
      addEvent(transfer, 'refunding');
      addEvent(transfer, 'refunded');
      model.availableMinor += transfer.sourceMinor;
      transfer.funded = false;
    }
    return verify(model, real);
  }
  override toString = () => `${this.outcome}Payout(#${this.index}${this.reason ? `, ${this.reason}` : ''})`;
}

/** The operator's review of a transfer's screening hit, as the sandbox simulates it (D18, D20, D24). */
class Review extends OnTransfer {
  readonly decision: 'cleared' | 'confirmed_match';
  constructor(index: number, decision: 'cleared' | 'confirmed_match') {
    super(index);
    this.decision = decision;
  }
  override async run(model: Model, real: Real): Promise<void> {
    const transfer = pick(
      model,
      this.index,
      (candidate) => candidate.screening !== 'none',
      (candidate) => candidate.screening === 'pending',
    );
    if (!transfer) {
      return unknown(model, real, `/api/v1/sandbox/screenings/${UNKNOWN('scr')}/review`, {
        decision: this.decision,
      });
    }
    const response = await send(
      post(real, `/api/v1/sandbox/screenings/${transfer.screeningId}/review`, { decision: this.decision }),
    );
    if (transfer.screening === 'reviewed') {
      expectRefused(response, 400, 'INVALID_STATE');
      return verify(model, real);
    }
    expectOk(response);
    transfer.screening = 'reviewed';
    // The confirmed name is the sanctioned beneficiary's: it is blocked, whatever its transfer's status.
    if (this.decision === 'confirmed_match') model.blocked = true;
    // A review of a transfer no longer in review (cancelled meanwhile) moves nothing.
    if (transfer.status !== 'in_review') return verify(model, real);
    // Cleared, but its beneficiary was blocked since: rejected all the same, the money back (D20).
    if (this.decision === 'confirmed_match' || (transfer.toSanctioned && model.blocked)) {
      if (transfer.funded) model.availableMinor += transfer.sourceMinor;
      transfer.funded = false;
      addEvent(transfer, 'rejected');
    } else if (transfer.funding === 'balance') {
      await startPayout(real, transfer, 'in_review');
    } else {
      addEvent(transfer, 'awaiting_deposit');
      transfer.deposits.push({ status: 'pending', receivedMinor: null });
    }
    return verify(model, real);
  }
  override toString = () => `review(#${this.index}, ${this.decision})`;
}

/**
 * The money of one of the transfer's deposit legs arrives through the deposit simulation: the current leg
 * as the transfer's own funding; a leg of a transfer that no longer waits (cancelled, expired) is credited
 * to the balance and moves nothing; a leg already received is 400 INVALID_STATE (D20, D21, D24).
 */
class ReceiveDeposit extends OnTransfer {
  readonly leg: number;
  readonly kind: 'default' | 'exact' | 'under' | 'over';
  readonly deltaMinor: bigint;
  constructor(index: number, leg: number, kind: ReceiveDeposit['kind'], deltaMinor: bigint) {
    super(index);
    this.leg = leg;
    this.kind = kind;
    this.deltaMinor = deltaMinor;
  }
  override async run(model: Model, real: Real): Promise<void> {
    const transfer = pick(
      model,
      this.index,
      (candidate) => candidate.deposits.length > 0,
      (candidate) => candidate.deposits.some((deposit) => deposit.status === 'pending'),
    );
    if (!transfer) return unknown(model, real, `/api/v1/sandbox/deposits/${UNKNOWN('dep')}/receive`);
    // An even draw takes the current leg, an odd one any.
    const leg = this.leg % 2 === 0 ? transfer.deposits.length - 1 : this.leg % transfer.deposits.length;
    const legs = (
      await send(
        real.api.post(`${DEPOSITS}/search`, {
          filters: { transfer_id: [transfer.id] },
          sort_by: 'created_at',
          sort_direction: 'asc',
        }),
      )
    ).json() as { items: { id: string }[] };
    const amount = arrival(this.kind, transfer.sourceMinor, this.deltaMinor);
    const body = this.kind === 'default' ? undefined : { amount: usd(amount) };
    const response = await post(real, `/api/v1/sandbox/deposits/${legs.items[leg]!.id}/receive`, body);
    if (transfer.deposits[leg]!.status !== 'pending') {
      expectRefused(response, 400, 'INVALID_STATE');
      return verify(model, real);
    }
    expectOk(response);
    await arrived(model, real, transfer, leg, amount);
    return verify(model, real);
  }
  override toString = () =>
    `receiveDeposit(#${this.index}, leg ${this.leg}, ${this.kind}, ${this.deltaMinor})`;
}

/** The sandbox's expiry of a quote a transfer accepted: 400 INVALID_STATE (D24). */
class ExpireAcceptedQuote extends OnTransfer {
  override async run(model: Model, real: Real): Promise<void> {
    const transfer = pick(model, this.index, any, any);
    if (!transfer) return unknown(model, real, `/api/v1/sandbox/quotes/${UNKNOWN('qte')}/expire`);
    expectRefused(
      await post(real, `/api/v1/sandbox/quotes/${transfer.quoteId}/expire`),
      400,
      'INVALID_STATE',
    );
    return verify(model, real);
  }
  override toString = () => `expireAcceptedQuote(#${this.index})`;
}

/** The client's cancel of a transfer's payout leg: 400 INVALID_STATE, it moves with its transfer (D21). */
class CancelPayoutLeg extends OnTransfer {
  override async run(model: Model, real: Real): Promise<void> {
    const transfer = pick(model, this.index, (candidate) => candidate.payout !== null, any);
    if (!transfer) return unknown(model, real, `${PAYOUTS}/${UNKNOWN('pyt')}/cancel`);
    const payoutId = await payoutIdOf(real, transfer);
    expectRefused(await post(real, `${PAYOUTS}/${payoutId}/cancel`), 400, 'INVALID_STATE');
    return verify(model, real);
  }
  override toString = () => `cancelPayoutLeg(#${this.index})`;
}

/**
 * The last state-changing request again with its Idempotency-Key (D14): the same body replays the first
 * answer (a 422 is not kept: it answers again the same), another path with the key is 422
 * IDEMPOTENCY_KEY_REUSED; either way nothing changes.
 */
class Replay extends AlwaysRun {
  readonly otherPath: boolean;
  constructor(otherPath: boolean) {
    super();
    this.otherPath = otherPath;
  }
  override async run(model: Model, real: Real): Promise<void> {
    const last = real.last;
    if (!last) return verify(model, real);
    const headers = { 'idempotency-key': last.key };
    if (this.otherPath && last.status !== 422) {
      const other = [
        `${TRANSFERS}/${UNKNOWN('trf')}/cancel`,
        `/api/v1/sandbox/transfers/${UNKNOWN('trf')}/expire`,
      ].find((url) => url !== last.url)!;
      const response = await send(real.api.post(other, undefined, headers));
      expectRefused(response, 422, 'IDEMPOTENCY_KEY_REUSED', 'Idempotency-Key');
      return verify(model, real);
    }
    const response = await send(real.api.post(last.url, last.body, headers));
    assert.equal(response.statusCode, last.status, response.body);
    // A 422 runs again: the same answer but for its own error_id.
    const withoutId = (body: string) => ({ ...JSON.parse(body), error_id: undefined });
    if (last.status === 422) assert.deepEqual(withoutId(response.body), withoutId(last.answer));
    else assert.equal(response.body, last.answer);
    assert.equal(response.headers['idempotent-replayed'], last.status === 422 ? undefined : 'true');
    return verify(model, real);
  }
  override toString = () => `replay(${this.otherPath ? 'another path' : 'same request'})`;
}

/**
 * The beneficiary with the magic name is renamed (to another magic name: it is screened again and held in
 * review) and the review confirms the match: it is blocked. A blocked beneficiary cannot be changed: 400
 * INVALID_STATE (D19).
 */
class BlockBeneficiary extends AlwaysRun {
  override async run(model: Model, real: Real): Promise<void> {
    const renamed = await send(
      real.api.patch(`/api/v1/beneficiaries/${real.sanctioned}`, { name: 'Paula Sanctioned' }),
    );
    if (model.blocked) {
      expectRefused(renamed, 400, 'INVALID_STATE');
      return verify(model, real);
    }
    expectOk(renamed);
    const held = renamed.json() as { status: string; screening_id: string };
    assert.equal(held.status, 'in_review');
    expectOk(
      await post(real, `/api/v1/sandbox/screenings/${held.screening_id}/review`, {
        decision: 'confirmed_match',
      }),
    );
    assert.equal(
      (await send(real.api.get(`/api/v1/beneficiaries/${real.sanctioned}`))).json().status,
      'blocked',
    );
    model.blocked = true;
    return verify(model, real);
  }
  override toString = () => 'blockBeneficiary()';
}

class TopUp extends AlwaysRun {
  readonly minor: bigint;
  constructor(minor: bigint) {
    super();
    this.minor = minor;
  }
  override async run(model: Model, real: Real): Promise<void> {
    expectOk(
      await send(post(real, '/api/v1/sandbox/balances/top-up', { currency: 'USD', amount: usd(this.minor) })),
    );
    model.availableMinor += this.minor;
    return verify(model, real);
  }
  override toString = () => `topUp(${usd(this.minor)})`;
}

// From 2.00 USD: 1.00 has nothing left after the fee of 1.00 + 0.50 % (422 on source_amount).
const amount = fc.bigInt({ min: 200n, max: 250_000n });
const index = fc.nat({ max: 50 });
const funding = fc.constantFrom<'balance' | 'bank_transfer'>('balance', 'bank_transfer');
const fund = fc
  .tuple(
    index,
    fc.constantFrom<Fund['kind']>('default', 'exact', 'under', 'over'),
    fc.bigInt({ min: 1n, max: 50_000n }),
  )
  .map(([value, kind, delta]) => new Fund(value, kind, delta));
// A completion with a reason is the 422 case: drawn when the reason drawn is `compliance`.
const settle = fc
  .tuple(
    index,
    fc.constantFrom<Settle['outcome']>('complete', 'fail', 'return'),
    fc.constantFrom(...FAILURES),
  )
  .map(
    ([value, outcome, reason]) =>
      new Settle(value, outcome, outcome === 'complete' && reason !== 'compliance' ? undefined : reason),
  );
/** The commands, weighted so that most sequences create transfers and then move them. */
const commands = [
  fc.oneof(
    {
      weight: 5,
      arbitrary: fc
        .tuple(funding, amount, fc.nat({ max: 2 }))
        .map(([method, minor, hit]) => new Confirm(method, minor, hit === 0)),
    },
    { weight: 1, arbitrary: index.map((value) => new ConfirmAgain(value)) },
    { weight: 1, arbitrary: funding.map((method) => new ConfirmExpiredQuote(method)) },
    { weight: 2, arbitrary: index.map((value) => new Cancel(value)) },
    { weight: 3, arbitrary: fund },
    { weight: 1, arbitrary: index.map((value) => new Expire(value)) },
    { weight: 4, arbitrary: settle },
    {
      weight: 2,
      arbitrary: fc
        .tuple(index, fc.constantFrom<Review['decision']>('cleared', 'confirmed_match'))
        .map(([value, decision]) => new Review(value, decision)),
    },
    { weight: 1, arbitrary: fc.bigInt({ min: 1n, max: 100_000n }).map((minor) => new TopUp(minor)) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          index,
          index,
          fc.constantFrom<Fund['kind']>('default', 'exact', 'under', 'over'),
          fc.bigInt({ min: 1n, max: 50_000n }),
        )
        .map(([value, leg, kind, delta]) => new ReceiveDeposit(value, leg, kind, delta)),
    },
    { weight: 1, arbitrary: index.map((value) => new ExpireAcceptedQuote(value)) },
    { weight: 1, arbitrary: index.map((value) => new CancelPayoutLeg(value)) },
    { weight: 2, arbitrary: fc.boolean().map((otherPath) => new Replay(otherPath)) },
    { weight: 1, arbitrary: fc.constant(null).map(() => new BlockBeneficiary()) },
  ),
];

describe('transfers against a model (D20, D21, D24)', () => {
  let t: TestApp;
  let jobs: JobRunner;
  before(async () => {
    // An hour per sandbox step (the most it takes): nothing moves by itself during a run.
    t = await startTestApp({ env: { SANDBOX_STEP_DELAY_MS: '3600000' } });
    jobs = runJobs(t);
  });
  after(async () => {
    await jobs.stop();
    await t.close();
  });

  /** A new organisation per run: subscribed to the transfer events, two beneficiaries, most money spent. */
  async function world(): Promise<{ model: Model; real: Real }> {
    const api = apiClient(t, await t.tenant());
    await activeSubscription(api, { event_type_codes: TRANSFER_EVENTS });
    const create = async (body: Record<string, unknown>) => {
      const response = await send(api.post('/api/v1/beneficiaries', body));
      expectOk(response, 201);
      return response.json() as { id: string; status: string; screening_id: string };
    };
    const plain = await create({ ...VALID.DE, account: { iban: HOLD_IBAN } });
    assert.equal(plain.status, 'active');
    // A magic name: cleared once, it is still a hit at every confirm (D24).
    const sanctioned = await create({ ...VALID.DE, name: 'Peter Sanctioned', account: { iban: HOLD_IBAN } });
    assert.equal(sanctioned.status, 'in_review');
    expectOk(
      await send(
        api.post(`/api/v1/sandbox/screenings/${sanctioned.screening_id}/review`, { decision: 'cleared' }),
      ),
    );
    // A payout of the organisation's own, held processing, leaves START_MINOR available.
    const drain = await create({
      ...VALID.US,
      account: { account_number: '000044444444', routing_number: '021000021', account_type: 'checking' },
    });
    expectOk(
      await send(
        api.post(PAYOUTS, {
          beneficiary_id: drain.id,
          currency: 'USD',
          amount: usd(OPENING_MINOR - START_MINOR),
        }),
      ),
      201,
    );
    return {
      model: {
        availableMinor: START_MINOR,
        heldMinor: OPENING_MINOR - START_MINOR,
        transfers: [],
        blocked: false,
      },
      real: { t, api, plain: plain.id, sanctioned: sanctioned.id, keys: 0 },
    };
  }

  it('agrees with the model after every command of random sequences', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 20, size: 'max' }), async (sequence) => {
        const { model, real } = await world();
        await verify(model, real);
        await fc.asyncModelRun(() => ({ model, real }), sequence);
      }),
      // Deep states (a payout completed, then returned) take a transfer and several commands on it.
      { numRuns: 40 },
    );
  });
});
