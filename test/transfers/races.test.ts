// Races between conflicting actions on one transfer or its legs, sent at the same moment over real HTTP
// (D20, D21, D24). Who wins may vary from round to round; what may not: no 5xx, each action either takes
// effect or is refused as the docs say, and the end state (the transfer's status, its events with their
// previous_status, the organisation's available and held balances in integer minor units, the ledger) is
// the one of some serial order of the actions: the round is linearizable. The check runs every order of
// the round's actions through a small model and accepts the round when one order explains all it saw.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it, type TestContext } from 'node:test';
import { ledgerViolations } from '../../src/balances/repository.ts';
import { createPool, withTransaction } from '../../src/db/pool.ts';
import type { JobRunner } from '../../src/platform/jobs/runner.ts';
import { fromMinorUnits, toMinorUnits } from '../../src/platform/money.ts';
import { expireTransferJob } from '../../src/transfers/transfers.ts';
import { VALID } from '../beneficiaries/bodies.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { storedEnvelope } from '../helpers/event-payloads.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { waitUntil } from '../helpers/wait.ts';
import { runJobs } from '../payments/fixtures.ts';
import { activeSubscription } from '../webhooks/fixtures.ts';
import { ANNOUNCED, type Status, TRANSFER_EVENTS } from './fixtures.ts';

const ROUNDS = 20;
const QUOTES = '/api/v1/transfers/quotes';
const TRANSFERS = '/api/v1/transfers';
const USD_EUR = 'cor_0000SANDBX0000000000000001';
const USDC_MXN = 'cor_0000SANDBX0000000000000012';
const HOLD_IBAN = 'DE95370400440532014444';

/** The model of one transfer and its organisation's balance in the transfer's currency. */
interface State {
  status: Status;
  funding: 'balance' | 'bank_transfer' | 'crypto';
  sourceMinor: bigint;
  funded: boolean;
  screening: 'none' | 'pending' | 'reviewed';
  payout: 'processing' | 'completed' | 'failed' | 'returned' | null;
  /** The transfer's current deposit leg, when it has one. */
  leg: 'pending' | 'received' | null;
  /** The leg an under-payment of the first opens: the transfer waits on it for the whole amount. */
  nextLeg: 'pending' | 'received' | null;
  availableMinor: bigint;
  heldMinor: bigint;
  /** [status entered, previous status]. */
  events: [Status, Status | null][];
}

/** What an action answered: the status and, for a refusal, its code. */
type Answer = [number, string | null];

/** A racing action: how to send it, and what it does to the model when it runs at that point of an order. */
interface Action {
  name: string;
  send(): Promise<Answer>;
  apply(state: State): Answer;
}

const OK: Answer = [200, null];
const INVALID: Answer = [400, 'INVALID_STATE'];

function enter(state: State, to: Status): void {
  if (ANNOUNCED.has(to)) state.events.push([to, state.status]);
  state.status = to;
}

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, index) =>
    permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [item, ...rest]),
  );
}

const clone = (state: State): State => ({
  ...state,
  events: state.events.map((event) => [...event]) as State['events'],
});

/**
 * Money just credited on the transfer's current leg: at least the source amount funds a transfer that
 * waits; less leaves it waiting on a new leg.
 */
function takes(state: State, minor: bigint): void {
  if (state.status !== 'awaiting_deposit') return;
  if (minor < state.sourceMinor) {
    state.nextLeg = 'pending';
    return;
  }
  state.availableMinor -= state.sourceMinor;
  state.funded = true;
  state.payout = 'processing';
  enter(state, 'processing');
}

/** The model's moves, as D20, D21 and D24 describe them. */
const moves = {
  cancel(state: State): Answer {
    if (state.status !== 'awaiting_deposit' && state.status !== 'in_review') return INVALID;
    if (state.funded) state.availableMinor += state.sourceMinor;
    state.funded = false;
    enter(state, 'cancelled');
    return OK;
  },
  /** The sandbox's expiry: only from awaiting_deposit. */
  expireNow(state: State): Answer {
    if (state.status !== 'awaiting_deposit') return INVALID;
    enter(state, 'expired');
    return OK;
  },
  /** The durable timer at the deadline: an unfunded transfer awaiting its deposit or in review expires. */
  expireJob(state: State): Answer {
    if (!state.funded && (state.status === 'awaiting_deposit' || state.status === 'in_review')) {
      enter(state, 'expired');
    }
    return OK;
  },
  /** A deposit of `minor` for the transfer's current leg (at least the source amount). */
  fund(state: State, minor: bigint): Answer {
    if (state.status !== 'awaiting_deposit') return INVALID;
    state.leg = 'received';
    state.availableMinor += minor - state.sourceMinor;
    state.funded = true;
    state.payout = 'processing';
    enter(state, 'processing');
    return OK;
  },
  /**
   * The deposit simulation on the transfer's leg: credited to the balance whatever the transfer's status;
   * it funds the transfer only while the transfer waits for it.
   */
  receiveLeg(state: State, minor: bigint): Answer {
    if (state.leg !== 'pending') return INVALID;
    state.leg = 'received';
    state.availableMinor += minor;
    takes(state, minor);
    return OK;
  },
  /**
   * Money at the transfer's first crypto address: its leg while that waits, else a deposit of its own (the
   * leg an under-payment opens has an address of its own).
   */
  arrive(state: State, minor: bigint): Answer {
    if (state.leg === 'pending') moves.receiveLeg(state, minor);
    else state.availableMinor += minor;
    return [201, null];
  },
  review(state: State, decision: 'cleared' | 'confirmed_match'): Answer {
    if (state.screening !== 'pending') return INVALID;
    state.screening = 'reviewed';
    if (state.status !== 'in_review') return OK;
    if (decision === 'confirmed_match') {
      if (state.funded) state.availableMinor += state.sourceMinor;
      state.funded = false;
      enter(state, 'rejected');
    } else if (state.funding === 'balance') {
      state.payout = 'processing';
      enter(state, 'processing');
    } else {
      state.leg = 'pending';
      enter(state, 'awaiting_deposit');
    }
    return OK;
  },
  settle(state: State, outcome: 'complete' | 'fail' | 'return'): Answer {
    if (state.payout !== (outcome === 'return' ? 'completed' : 'processing')) return INVALID;
    if (outcome === 'complete') {
      state.payout = 'completed';
      enter(state, 'completed');
      return OK;
    }
    state.payout = outcome === 'fail' ? 'failed' : 'returned';
    enter(state, 'refunding');
    enter(state, 'refunded');
    state.availableMinor += state.sourceMinor;
    state.funded = false;
    return OK;
  },
};

describe('races between conflicting actions on one transfer (D20, D21, D24)', () => {
  let t: TestApp;
  let jobs: JobRunner;
  let second: TestApp;
  /** The two processes' addresses; each request goes to the next, in turn. */
  let bases: string[];
  let sent = 0;
  let api: ApiClient;
  let plain: string;
  let mexican: string;
  const create = async (body: Record<string, unknown>) => {
    const response = await api.post('/api/v1/beneficiaries', body);
    assert.equal(response.statusCode, 201, response.body);
    return response.json() as { id: string; status: string; screening_id: string };
  };
  /**
   * A beneficiary of a magic name, cleared once: it is still a hit at every confirm (D24). One per transfer,
   * as a confirmed match on its transfer blocks it.
   */
  const sanctionedBeneficiary = async (): Promise<string> => {
    const held = await create({ ...VALID.DE, name: 'Peter Sanctioned', account: { iban: HOLD_IBAN } });
    const cleared = await api.post(`/api/v1/sandbox/screenings/${held.screening_id}/review`, {
      decision: 'cleared',
    });
    assert.equal(cleared.statusCode, 200, cleared.body);
    return held.id;
  };

  before(async () => {
    // An hour per sandbox step: nothing moves by itself during a round.
    const env = { SANDBOX_STEP_DELAY_MS: '3600000', RATE_LIMIT_MAX: '1000000' };
    t = await startTestApp({ env });
    // A second process on the same database, with a pool (and so transaction groups) of its own: the
    // racing requests go to both, so that they meet only in PostgreSQL, as between two API processes.
    second = await startTestApp({ env, db: { ...t.db, pool: createPool(t.db.url, 10, 'races:second') } });
    jobs = runJobs(t);
    bases = [];
    for (const app of [t.app, second.app]) {
      await app.listen({ port: 0, host: '127.0.0.1' });
      bases.push(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
    }
    api = apiClient(t, await t.tenant());
    await activeSubscription(api, { event_type_codes: TRANSFER_EVENTS });
    plain = (await create({ ...VALID.DE, account: { iban: HOLD_IBAN } })).id;
    mexican = (await create(VALID.MX)).id;
  });
  after(async () => {
    await jobs.stop();
    await second.close();
    await second.db.pool.end();
    await t.close();
  });

  /** One request over the real listener; a 5xx fails the round at once. */
  async function send(path: string, body?: unknown): Promise<Answer> {
    // A little apart at random, so that each action wins some rounds.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 4));
    const response = await fetch(`${bases[sent++ % bases.length]}${path}`, {
      method: 'POST',
      headers: {
        ...api.tenant.auth,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    assert.ok(response.status < 500, `${path}: ${response.status} ${text}`);
    return [response.status, response.status < 300 ? null : (JSON.parse(text) as { code: string }).code];
  }

  async function balance(currency: string): Promise<{ available: bigint; held: bigint }> {
    const entries = (await api.get('/api/v1/balances')).json() as {
      currency: string;
      available: string;
      held: string;
    }[];
    const entry = entries.find((candidate) => candidate.currency === currency)!;
    return { available: toMinorUnits(entry.available, currency), held: toMinorUnits(entry.held, currency) };
  }

  interface Round {
    id: string;
    depositId: string | null;
    quoteId: string;
    payoutId: string | null;
    screeningId: string | null;
    address: string | null;
    state: State;
    currency: string;
  }

  /** A new transfer of `minor` in the given set-up, and its model. */
  async function transfer(
    funding: State['funding'],
    minor: bigint,
    options: { toSanctioned?: boolean } = {},
  ): Promise<Round> {
    const currency = funding === 'crypto' ? 'USDC' : 'USD';
    const q = await api.post(QUOTES, {
      corridor_id: funding === 'crypto' ? USDC_MXN : USD_EUR,
      source_amount: fromMinorUnits(minor, currency).toFixed(currency === 'USDC' ? 6 : 2),
    });
    assert.equal(q.statusCode, 201, q.body);
    const before = await balance(currency);
    const confirmed = await api.post(`${QUOTES}/${q.json().id}/confirm`, {
      beneficiary_id:
        funding === 'crypto' ? mexican : options.toSanctioned ? await sanctionedBeneficiary() : plain,
      funding_method: funding,
      ...(funding === 'crypto' ? { network: 'ethereum' } : {}),
    });
    assert.equal(confirmed.statusCode, 201, confirmed.body);
    const view = confirmed.json() as {
      id: string;
      status: Status;
      screening_id: string | null;
      deposit_instructions: { address?: string } | null;
      deposit: { id: string } | null;
    };
    const state: State = {
      status: view.status,
      funding,
      sourceMinor: minor,
      funded: funding === 'balance',
      screening: options.toSanctioned ? 'pending' : 'none',
      payout: view.status === 'processing' ? 'processing' : null,
      leg: view.status === 'awaiting_deposit' ? 'pending' : null,
      nextLeg: null,
      availableMinor: before.available - (funding === 'balance' ? minor : 0n),
      heldMinor: before.held,
      // transfer.created, then the first status's own event when it has a code (D8).
      events: ANNOUNCED.has(view.status)
        ? [
            [view.status, null],
            [view.status, null],
          ]
        : [[view.status, null]],
    };
    return {
      id: view.id,
      depositId: view.deposit?.id ?? null,
      quoteId: q.json().id,
      payoutId: null,
      screeningId: view.screening_id,
      address: view.deposit_instructions?.address ?? null,
      state,
      currency,
    };
  }

  /** The transfer's payout leg, once the job runner handed it to the rail (the 4444 account holds it). */
  async function handedOff(round: Round): Promise<string> {
    let payoutId = '';
    await waitUntil(
      async () => {
        const payout = (await api.get(`${TRANSFERS}/${round.id}`)).json().payout as {
          id: string;
          status: string;
        } | null;
        payoutId = payout?.id ?? '';
        return payout?.status === 'processing';
      },
      `payout of ${round.id} handed off`,
      10_000,
    );
    return payoutId;
  }

  /** What the service shows of the round's transfer, in the model's terms. */
  async function observe(
    round: Round,
  ): Promise<Omit<State, 'funding' | 'sourceMinor' | 'screening' | 'funded'>> {
    const view = (await api.get(`${TRANSFERS}/${round.id}`)).json() as {
      status: Status;
      payout: { status: string } | null;
      deposit: { id: string; status: string } | null;
    };
    // The leg the round began with, when it had one: a cleared review opens the first.
    const legId = round.depositId ?? view.deposit?.id ?? null;
    const leg = legId
      ? ((await api.get(`/api/v1/payments/deposits/${legId}`)).json() as { status: State['leg'] }).status
      : null;
    const events = await t.db.pool.query<{ event_type_code: string; payload: string }>(
      'SELECT event_type_code, payload FROM webhook_events WHERE source_object_id = $1 ORDER BY id',
      [round.id],
    );
    const { available, held } = await balance(round.currency);
    const next = view.deposit && view.deposit.id !== legId ? (view.deposit.status as State['nextLeg']) : null;
    return {
      nextLeg: next,
      status: view.status,
      // A leg just opened waits pending for its hand-off to the rail: processing, to the transfer.
      leg,
      payout: (view.payout?.status === 'pending'
        ? 'processing'
        : (view.payout?.status ?? null)) as State['payout'],
      availableMinor: available,
      heldMinor: held,
      events: events.rows.map((row, index) => {
        const { data } = storedEnvelope<{
          data: { object: { status: Status }; previous_status: Status | null };
        }>(t.deps, row.payload);
        // The code names the status the object shows (created for the first).
        assert.equal(
          row.event_type_code,
          index === 0 ? 'transfer.created' : `transfer.${data.object.status}`,
        );
        return [data.object.status, data.previous_status];
      }),
    };
  }

  const view = (state: State, answers: Answer[]) =>
    JSON.stringify({
      answers,
      status: state.status,
      payout: state.payout,
      leg: state.leg,
      nextLeg: state.nextLeg,
      availableMinor: state.availableMinor.toString(),
      heldMinor: state.heldMinor.toString(),
      events: state.events,
    });

  /**
   * Sends the actions at once, then checks that some serial order of them, run through the model from the
   * round's state, answers as they answered and ends where the service ended. Returns the winner's name.
   */
  async function race(round: Round, actions: Action[]): Promise<string> {
    return check(round, actions, await Promise.all(actions.map((action) => action.send())));
  }

  /** The check of `race`, for actions already sent and answered. */
  async function check(round: Round, actions: Action[], answers: Answer[]): Promise<string> {
    // The last step's job (a payout leg's hand-off) may still run; it changes nothing the check reads.
    const seen = await observe(round);
    const observed = view({ ...round.state, ...seen } as State, answers);
    const orders = permutations(actions.map((_, index) => index));
    for (const order of orders) {
      const state = clone(round.state);
      const modelled: Answer[] = new Array(actions.length);
      for (const index of order) modelled[index] = actions[index]!.apply(state);
      if (view(state, modelled) === observed) {
        assert.deepEqual(await ledgerViolations(t.db.pool), []);
        const outcome = actions.map((action, index) => `${action.name} ${answers[index]![0]}`).join(', ');
        return `${outcome} -> ${seen.status}`;
      }
    }
    const explanations = orders.map((order) => {
      const state = clone(round.state);
      const modelled: Answer[] = new Array(actions.length);
      for (const index of order) modelled[index] = actions[index]!.apply(state);
      return `${order.map((index) => actions[index]!.name).join(' < ')}: ${view(state, modelled)}`;
    });
    assert.fail(
      `no serial order explains the round of ${round.id}:\nseen ${observed}\n${explanations.join('\n')}`,
    );
  }

  const cancel = (round: Round): Action => ({
    name: 'cancel',
    send: () => send(`${TRANSFERS}/${round.id}/cancel`),
    apply: moves.cancel,
  });
  const expireNow = (round: Round): Action => ({
    name: 'expire',
    send: () => send(`/api/v1/sandbox/transfers/${round.id}/expire`),
    apply: moves.expireNow,
  });
  const expireJob = (round: Round): Action => ({
    name: 'expiryTimer',
    send: async () => {
      // About as late as a request's way through HTTP, so that it wins some rounds and loses others.
      await new Promise((resolve) => setTimeout(resolve, 1 + Math.random() * 6));
      await withTransaction(t.deps.pool, (tx) => expireTransferJob(tx, t.deps, round.id));
      return OK;
    },
    apply: moves.expireJob,
  });
  const fund = (round: Round, minor: bigint, name = 'fund'): Action => ({
    name,
    send: () =>
      send(`/api/v1/sandbox/transfers/${round.id}/fund`, { amount: fromMinorUnits(minor, 'USD').toFixed(2) }),
    apply: (state) => moves.fund(state, minor),
  });
  const review = (round: Round, decision: 'cleared' | 'confirmed_match' = 'cleared'): Action => ({
    name: decision,
    send: () => send(`/api/v1/sandbox/screenings/${round.screeningId}/review`, { decision }),
    apply: (state) => moves.review(state, decision),
  });
  const receiveLeg = (round: Round, minor: bigint): Action => ({
    name: 'receive',
    send: () =>
      send(`/api/v1/sandbox/deposits/${round.depositId}/receive`, {
        amount: fromMinorUnits(minor, 'USD').toFixed(2),
      }),
    apply: (state) => moves.receiveLeg(state, minor),
  });
  const settle = (round: Round, outcome: 'complete' | 'fail' | 'return'): Action => ({
    name: outcome,
    send: () => send(`/api/v1/sandbox/payouts/${round.payoutId}/${outcome}`),
    apply: (state) => moves.settle(state, outcome),
  });
  const arrive = (round: Round, minor: bigint, name: string): Action => ({
    name,
    send: () =>
      send('/api/v1/sandbox/crypto/deposits', {
        address: round.address,
        asset: 'USDC',
        amount: fromMinorUnits(minor, 'USDC').toFixed(6),
        confirmations: 1000,
      }),
    apply: (state) => moves.arrive(state, minor),
  });

  /** Runs ROUNDS rounds and reports who won how often (the outcomes vary; the invariants may not). */
  async function rounds(
    context: TestContext,
    setup: () => Promise<Round>,
    actions: (round: Round) => Action[],
  ): Promise<void> {
    const winners = new Map<string, number>();
    for (let index = 0; index < ROUNDS; index++) {
      const round = await setup();
      const order = await race(round, actions(round));
      winners.set(order, (winners.get(order) ?? 0) + 1);
    }
    context.diagnostic(JSON.stringify(Object.fromEntries(winners)));
  }

  it('client cancel against a deposit arriving, on a transfer awaiting it', async (context) => {
    await rounds(
      context,
      () => transfer('bank_transfer', 10_000n),
      (round) => [cancel(round), fund(round, 10_537n)],
    );
  });

  it("the deposit simulation on the transfer's leg against the client cancel, the expiry and the funding", async (context) => {
    await rounds(
      context,
      () => transfer('bank_transfer', 10_000n),
      (round) => [receiveLeg(round, 10_000n), cancel(round), expireNow(round), fund(round, 10_000n)],
    );
  });

  it("client cancel against the sandbox's expiry", async (context) => {
    await rounds(
      context,
      () => transfer('bank_transfer', 10_000n),
      (round) => [cancel(round), expireNow(round)],
    );
  });

  it("a deposit arriving against the sandbox's expiry and the expiry timer", async (context) => {
    await rounds(
      context,
      () => transfer('bank_transfer', 10_000n),
      (round) => [fund(round, 10_000n), expireNow(round), expireJob(round)],
    );
  });

  it('two exact deposits at once: one funds the transfer, the other is refused', async (context) => {
    await rounds(
      context,
      () => transfer('bank_transfer', 10_000n),
      (round) => [fund(round, 10_000n, 'fundA'), fund(round, 10_000n, 'fundB')],
    );
  });

  it("two exact crypto deposits at the transfer's address: one funds it, the other goes to the balance", async (context) => {
    await rounds(
      context,
      () => transfer('crypto', 25_000_000n),
      (round) => [arrive(round, 25_000_000n, 'arriveA'), arrive(round, 25_000_000n, 'arriveB')],
    );
  });

  it("an under-payment and an exact deposit at the transfer's address at once: whichever is first takes the leg", async (context) => {
    await rounds(
      context,
      () => transfer('crypto', 25_000_000n),
      (round) => [arrive(round, 5_000_000n, 'under'), arrive(round, 25_000_000n, 'exact')],
    );
  });

  it('a cleared review against the client cancel and the expiries, balance funded, in review', async (context) => {
    await rounds(
      context,
      () => transfer('balance', 10_000n, { toSanctioned: true }),
      (round) => [review(round), cancel(round), expireNow(round), expireJob(round)],
    );
  });

  it('a cleared review against the client cancel and the expiries, bank transfer, in review', async (context) => {
    await rounds(
      context,
      () => transfer('bank_transfer', 10_000n, { toSanctioned: true }),
      (round) => [review(round), cancel(round), expireNow(round), expireJob(round)],
    );
  });

  it('a confirmed match against the client cancel, balance funded, in review: the money back once', async (context) => {
    await rounds(
      context,
      () => transfer('balance', 10_000n, { toSanctioned: true }),
      (round) => [review(round, 'confirmed_match'), cancel(round), expireJob(round)],
    );
  });

  it('payout outcomes two at a time on a held payout leg', async (context) => {
    const pairs: ['complete' | 'fail' | 'return', 'complete' | 'fail' | 'return'][] = [
      ['fail', 'complete'],
      ['fail', 'return'],
      ['complete', 'return'],
      ['fail', 'fail'],
      ['complete', 'complete'],
    ];
    for (const [first, second] of pairs) {
      await rounds(
        context,
        async () => {
          const round = await transfer('balance', 10_000n);
          round.payoutId = await handedOff(round);
          return round;
        },
        (round) => [settle(round, first), { ...settle(round, second), name: `${second}'` }],
      );
    }
  });

  it('two confirms of one quote at once without an Idempotency-Key: exactly one transfer', async () => {
    for (let index = 0; index < ROUNDS; index++) {
      const q = await api.post(QUOTES, { corridor_id: USD_EUR, source_amount: '100.00' });
      assert.equal(q.statusCode, 201, q.body);
      const before = await balance('USD');
      const body = { beneficiary_id: plain, funding_method: 'balance' };
      const answers = await Promise.all([1, 2].map(() => send(`${QUOTES}/${q.json().id}/confirm`, body)));
      assert.deepEqual(answers.map(([status]) => status).sort(), [201, 400], JSON.stringify(answers));
      assert.ok(
        answers.some(([, code]) => code === 'INVALID_STATE'),
        JSON.stringify(answers),
      );
      const found = (
        await api.post(`${TRANSFERS}/search`, { filters: { quote_id: [q.json().id] } })
      ).json() as {
        total: number;
      };
      assert.equal(found.total, 1);
      assert.deepEqual(await balance('USD'), { available: before.available - 10_000n, held: before.held });
      assert.deepEqual(await ledgerViolations(t.db.pool), []);
    }
  });
});
