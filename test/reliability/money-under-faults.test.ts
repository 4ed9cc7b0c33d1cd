// Money under process failures (issue 18; D20, D21, D24): a seeded random workload of concurrent operations
// over HTTP from several organisations (top-ups, payouts to accounts that complete, fail, return or hold,
// balance- and bank-funded transfers with exact, short and excess funding, cancels, expiries, screening hits
// reviewed by the operator, Idempotency-Key retries) while `worker` processes are killed with SIGKILL at
// random moments and replaced. A clean worker then drains what is due, and the books must hold: every
// transfer, deposit and payout rests in a final or resumable state and where the client's actions put it,
// no payout was handed over twice, each resource's money moved exactly as its state says, the ledger
// balances, every state change has its event, and every idempotent retry created nothing.
//
// The seed is printed; MONEY_FAULTS_SEED=<seed> replays the same operations and kill places (their timing
// and the interleaving still vary with the machine).
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type { LightMyRequestResponse } from 'fastify';
import { seededRandom } from '../../bench/lib/sanctions-list.ts';
import { ledgerViolations } from '../../src/balances/repository.ts';
import { SANDBOX_STEP_KIND } from '../../src/payments/connectors/sandbox.ts';
import { HAND_OFF_KIND } from '../../src/payments/payouts.ts';
import { Decimal } from '../../src/platform/money.ts';
import { bodyOf, createBeneficiary } from '../beneficiaries/fixtures.ts';
import { startTestApp, TEST_ADMIN_KEY, TEST_ENCRYPTION_KEY, type TestApp } from '../helpers/app.ts';
import { type ApiClient, apiClient, type Method } from '../helpers/http.ts';
import { type HttpsReceiver, startHttpsReceiver, testCertificate } from '../helpers/https-receiver.ts';
import {
  eventPathProblems,
  ledgerMismatches,
  ledgerTotals,
  MONEY_EVENT_CODES,
  type PayoutRow,
  readBooks,
  stranded,
} from '../helpers/money-books.ts';
import { type ServiceProcess, startService } from '../helpers/process.ts';
import { waitUntil } from '../helpers/wait.ts';
import { DEPOSITS, PAYOUTS } from '../payments/fixtures.ts';
import { activeSubscription, client } from '../webhooks/fixtures.ts';

const SEED = process.env.MONEY_FAULTS_SEED ? Number(process.env.MONEY_FAULTS_SEED) : randomInt(1, 2 ** 31);
const ORGANISATIONS = 3;
const LANES_PER_ORGANISATION = 2;
const OPERATIONS_PER_LANE = 60;
const WORKERS = 3;
/** Small but not zero: hand-offs, completions and returns are in flight when a worker dies. */
const STEP_DELAY_MS = '100';
/**
 * Kills during the workload, each after a random share (5% to 95%) of its operations and while every worker
 * is up (a replacement takes seconds to start): the lanes wait at that place until the kill has landed, so
 * all of them land within the workload, however fast the machine.
 */
const KILLS = 6;
/** A lane's pause after each operation, at most: a client's pace, so that the kills fall within the workload. */
const THINK_MS = 400;
const OPENING = new Decimal(1_000_000);

const QUOTES = '/api/v1/transfers/quotes';
const TRANSFERS = '/api/v1/transfers';
const USD_TO_DE = 'cor_0000SANDBX0000000000000001';
const GBP_TO_DE = 'cor_0000SANDBX0000000000000011';

/** The beneficiaries of each organisation, by what the sandbox rail does with their payouts (D24). */
const KINDS = ['plain', 'closed', 'invalid', 'returns', 'holds', 'lookalike'] as const;
type Kind = (typeof KINDS)[number];
const IBAN: Record<Kind, string> = {
  plain: 'DE89370400440532013000',
  closed: 'DE70370400440532011111', // fails account_closed
  invalid: 'DE46370400440532012222', // fails invalid_account
  returns: 'DE22370400440532013333', // completes, then is returned
  holds: 'DE95370400440532014444', // stays processing until simulated
  lookalike: 'DE89370400440532013000', // a name the sandbox list hits: every transfer to it is reviewed
};

/**
 * A beneficiary of the kind. A lookalike is cleared once, so that it is active: every transfer to it is
 * screened again and held (D20).
 */
async function newBeneficiary(api: ApiClient, kind: Kind): Promise<string> {
  const created = await createBeneficiary(
    api,
    bodyOf('DE', {
      account: { iban: IBAN[kind] },
      ...(kind === 'lookalike' ? { name: 'Lookalike Person' } : {}),
    }),
  );
  if (kind === 'lookalike') {
    assert.equal(created.status, 'in_review');
    const cleared = await api.post(`/api/v1/sandbox/screenings/${created.screening_id}/review`, {
      decision: 'cleared',
    });
    assert.equal(cleared.statusCode, 200, cleared.body);
  }
  return created.id;
}

/** What a funded transfer is, by its payout leg's status (D20): a failed or returned leg refunds it. */
const LEG_TO_TRANSFER: Readonly<Record<string, string>> = {
  pending: 'processing',
  processing: 'processing',
  completed: 'completed',
  failed: 'refunded',
  returned: 'refunded',
};

const note = (text: string) => process.stdout.write(`# ${text}\n`);

interface PayoutRecord {
  kind: Kind;
  transferId: string | null;
  cancelled: boolean;
  completed: boolean;
  failedWith: string | undefined;
  returned: boolean;
}

interface TransferRecord {
  kind: Kind;
  funding: 'balance' | 'bank_transfer';
  sourceAmount: string;
  screeningId: string | null;
  review: 'cleared' | 'confirmed_match' | undefined;
  cancelled: boolean;
  expired: boolean;
  /** Its funds were taken: at confirm (balance) or by a deposit of at least the source amount. */
  funded: boolean;
}

interface DepositRecord {
  expected: string | null;
  transferId: string | null;
}

interface Organisation {
  api: ApiClient;
  beneficiaries: Record<Kind, string>;
  kindOf: Map<string, Kind>;
  payouts: Map<string, PayoutRecord>;
  transfers: Map<string, TransferRecord>;
  deposits: Map<string, DepositRecord>;
  /** Resources the client created (first responses, never replays): what the database must hold. */
  created: { payouts: Set<string>; transfers: Set<string>; deposits: Set<string> };
  topUps: { currency: string; amount: string }[];
}

/** A decimal string of `cents` hundredths, built without floating point. */
const fromCents = (cents: number): string =>
  `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
describe('money under worker kills (D20, D21, D24)', () => {
  let t: TestApp;
  let receiver: HttpsReceiver;
  const processes: ServiceProcess[] = [];

  before(async () => {
    t = await startTestApp({ env: { PAYMENT_CONNECTOR: 'sandbox', SANDBOX_STEP_DELAY_MS: STEP_DELAY_MS } });
    receiver = await startHttpsReceiver();
  });
  after(async () => {
    for (const worker of processes) await worker.stop('SIGKILL').catch(() => {});
    await receiver.close();
    await t.close();
  });

  const startWorker = async (): Promise<ServiceProcess> => {
    const worker = await startService('worker', {
      DATABASE_URL: t.db.url,
      APP_ENV: 'sandbox',
      SECRETS_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      PAYMENT_CONNECTOR: 'sandbox',
      SANDBOX_STEP_DELAY_MS: STEP_DELAY_MS,
      DATABASE_POOL_SIZE: '5',
      // Events are delivered to a real HTTPS receiver, as they would be in production.
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      NODE_EXTRA_CA_CERTS: testCertificate().certPath,
    });
    processes.push(worker);
    return worker;
  };
  const count = async (sql: string, values: unknown[] = []): Promise<number> =>
    (await t.db.pool.query<{ n: number }>(sql, values)).rows[0]!.n;

  async function organisation(index: number): Promise<Organisation> {
    const tenant = await t.tenant();
    const api = apiClient(t, tenant);
    await activeSubscription(client(t, tenant), {
      endpoint_url: `${receiver.origin}/organisation-${index}`,
      event_type_codes: MONEY_EVENT_CODES,
    });
    const beneficiaries = {} as Record<Kind, string>;
    for (const kind of KINDS) beneficiaries[kind] = await newBeneficiary(api, kind);
    return {
      api,
      beneficiaries,
      kindOf: new Map(KINDS.map((kind) => [beneficiaries[kind], kind])),
      payouts: new Map(),
      transfers: new Map(),
      deposits: new Map(),
      created: { payouts: new Set(), transfers: new Set(), deposits: new Set() },
      topUps: [],
    };
  }

  /** Answers outside what an operation allows, each with what was sent: the run must have none. */
  const surprises: string[] = [];
  /** Outcomes per operation (`payout 201`, `cancel-transfer 400 INVALID_STATE`), for the run's summary. */
  const tally = new Map<string, number>();
  let replays = 0;
  /** Operations the lanes have finished: the kills are placed by it, whatever the machine's speed. */
  let operationsDone = 0;
  /** The place of the next kill: no lane starts an operation past it until the kill has landed. */
  let nextKillAt = Number.POSITIVE_INFINITY;

  /** For a 5xx: what the app logged under its error_id (the error's message, code and where it arose). */
  const loggedError = (response: LightMyRequestResponse): string => {
    if (response.statusCode < 500) return '';
    const errorId = (response.json() as { error_id?: string }).error_id;
    const line = t.logs.lines.find((logged) => errorId !== undefined && logged.includes(errorId));
    if (!line) return '';
    const err = (JSON.parse(line) as { err?: { message?: string; code?: string; stack?: string } }).err;
    const at =
      err?.stack
        ?.split('\n')
        .filter((frame) => frame.includes('/src/'))
        .slice(0, 4) ?? [];
    return ` [logged: ${err?.message} ${err?.code ?? ''} ${at.map((frame) => frame.trim()).join(' < ')}]`;
  };

  const outcomeOf = (response: LightMyRequestResponse): string =>
    response.statusCode < 400
      ? String(response.statusCode)
      : `${response.statusCode} ${(response.json() as { code?: string }).code ?? ''}`;

  /**
   * One lane of the workload: a sequence of operations of one organisation, drawn from its own generator
   * (so that a seed replays the same choices), concurrent with the other lanes.
   */
  async function lane(
    org: Organisation,
    name: string,
    random: () => number,
    operationCount: number | 'warm-up',
  ): Promise<void> {
    const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
    const chance = (p: number) => random() < p;
    const cents = (min: number, max: number) => min + Math.floor(random() * (max - min));
    let keys = 0;

    const expect = (
      label: string,
      sent: string,
      response: LightMyRequestResponse,
      allowed: readonly string[],
    ) => {
      const outcome = outcomeOf(response);
      tally.set(`${label} ${outcome}`, (tally.get(`${label} ${outcome}`) ?? 0) + 1);
      if (!allowed.includes(outcome))
        surprises.push(`${label}: ${sent} -> ${outcome} ${response.body}${loggedError(response)}`);
    };

    /**
     * Sends a request; with `keyed` it carries an Idempotency-Key and may be sent twice at once and/or
     * again afterwards: exactly one of them runs, a concurrent twin is told the key is in use or replays
     * it, and a later one replays its status and body (D14). Returns the response of the one that ran.
     */
    async function send(
      label: string,
      method: Method,
      url: string,
      body: unknown,
      allowed: readonly string[],
      keyed = chance(0.4),
    ): Promise<LightMyRequestResponse> {
      const sent = `${method} ${url} ${JSON.stringify(body ?? null)}`;
      if (!keyed) {
        const response = await org.api.request(method, url, body);
        expect(label, sent, response, allowed);
        return response;
      }
      const headers = { 'idempotency-key': `${SEED}-${name}-${++keys}` };
      const mode = pick(['once', 'again', 'twins'] as const);
      const replayed = (response: LightMyRequestResponse) =>
        response.headers['idempotent-replayed'] === 'true';
      let first: LightMyRequestResponse;
      if (mode === 'twins') {
        const twins = await Promise.all([0, 1].map(() => org.api.request(method, url, body, headers)));
        const ran = twins.filter(
          (response) => !replayed(response) && outcomeOf(response) !== '409 IDEMPOTENCY_KEY_IN_USE',
        );
        if (ran.length !== 1)
          surprises.push(`${label}: ${ran.length} of two concurrent requests with one key ran: ${sent}`);
        first = ran[0] ?? twins[0]!;
        for (const twin of twins) {
          if (twin === first || outcomeOf(twin) === '409 IDEMPOTENCY_KEY_IN_USE') continue;
          if (twin.statusCode !== first.statusCode || twin.body !== first.body)
            surprises.push(`${label}: a concurrent replay differs: ${twin.body} vs ${first.body}`);
          replays++;
        }
      } else {
        first = await org.api.request(method, url, body, headers);
      }
      expect(label, sent, first, allowed);
      if (mode !== 'once') {
        const again = await org.api.request(method, url, body, headers);
        if (!replayed(again) || again.statusCode !== first.statusCode || again.body !== first.body)
          surprises.push(`${label}: a retry with the key did not replay: ${outcomeOf(again)} ${again.body}`);
        replays++;
      }
      return first;
    }

    const operator = async (label: string, url: string, body: unknown, allowed: readonly string[]) => {
      const response = await t.app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
      expect(label, `POST ${url}`, response, allowed);
      return response;
    };

    const recordPayout = (id: string, kind: Kind, transferId: string | null) => {
      if (!org.payouts.has(id))
        org.payouts.set(id, {
          kind,
          transferId,
          cancelled: false,
          completed: false,
          failedWith: undefined,
          returned: false,
        });
    };
    const recordLegs = (
      transferId: string,
      view: { payout: { id: string } | null; deposit: { id: string; expected_amount: string } | null },
    ) => {
      const transfer = org.transfers.get(transferId)!;
      if (view.payout) recordPayout(view.payout.id, transfer.kind, transferId);
      if (view.deposit && !org.deposits.has(view.deposit.id))
        org.deposits.set(view.deposit.id, { expected: view.deposit.expected_amount, transferId });
    };
    /** A transfer the lane believes still open; mostly one still waiting for its funds. */
    const someTransfer = () => {
      const open = [...org.transfers.entries()].filter(
        ([, transfer]) => !transfer.cancelled && !transfer.expired,
      );
      const unfunded = open.filter(
        ([, transfer]) => transfer.funding === 'bank_transfer' && !transfer.funded,
      );
      const candidates = unfunded.length > 0 && chance(0.8) ? unfunded : open;
      return candidates.length === 0 ? undefined : pick(candidates);
    };

    async function payout(): Promise<void> {
      const kind = pick(KINDS);
      const response = await send(
        'payout',
        'POST',
        PAYOUTS,
        { beneficiary_id: org.beneficiaries[kind], currency: 'EUR', amount: fromCents(cents(100, 30_000)) },
        ['201'],
      );
      if (response.statusCode !== 201) return;
      const id = (response.json() as { id: string }).id;
      org.created.payouts.add(id);
      recordPayout(id, kind, null);
      // Now and then cancelled at once, racing its hand-off.
      if (chance(0.25)) await cancelPayout(id);
    }

    async function cancelPayout(chosen?: string): Promise<void> {
      const id = chosen ?? (org.payouts.size > 0 ? pick([...org.payouts.keys()]) : undefined);
      if (id === undefined) return;
      const record = org.payouts.get(id)!;
      // A transfer's payout leg moves with its transfer only.
      const allowed = record.transferId === null ? ['200', '400 INVALID_STATE'] : ['400 INVALID_STATE'];
      const response = await send('cancel-payout', 'POST', `${PAYOUTS}/${id}/cancel`, undefined, allowed);
      if (response.statusCode === 200) record.cancelled = true;
    }

    async function simulatePayout(): Promise<void> {
      const records = [...org.payouts.entries()];
      const held = records.filter(([, record]) => record.kind === 'holds' && !record.cancelled);
      const returnable = records.filter(
        ([, record]) => (record.kind === 'plain' || record.completed) && !record.cancelled,
      );
      if (chance(0.5) && held.length > 0) {
        const [id, record] = pick(held);
        if (chance(0.5)) {
          const response = await send(
            'complete-payout',
            'POST',
            `/api/v1/sandbox/payouts/${id}/complete`,
            {},
            ['200', '400 INVALID_STATE'],
          );
          if (response.statusCode === 200) record.completed = true;
        } else {
          const reason = pick(['rejected_by_bank', 'compliance']);
          const response = await send(
            'fail-payout',
            'POST',
            `/api/v1/sandbox/payouts/${id}/fail`,
            { failure_reason: reason },
            ['200', '400 INVALID_STATE'],
          );
          if (response.statusCode === 200) record.failedWith = reason;
        }
      } else if (returnable.length > 0) {
        const [id, record] = pick(returnable);
        const response = await send('return-payout', 'POST', `/api/v1/sandbox/payouts/${id}/return`, {}, [
          '200',
          '400 INVALID_STATE',
        ]);
        if (response.statusCode === 200) record.returned = true;
      }
    }

    async function quote(
      corridor = chance(0.7) ? USD_TO_DE : GBP_TO_DE,
    ): Promise<{ id: string; source_amount: string } | undefined> {
      const response = await send(
        'quote',
        'POST',
        QUOTES,
        { corridor_id: corridor, source_amount: fromCents(cents(1_000, 50_000)) },
        ['201'],
        chance(0.2),
      );
      return response.statusCode === 201
        ? (response.json() as { id: string; source_amount: string })
        : undefined;
    }

    async function transfer(
      funding: TransferRecord['funding'],
      corridor?: string,
      kind: Kind = pick(KINDS),
    ): Promise<void> {
      const quoted = await quote(corridor);
      if (!quoted) return;
      // A lookalike of its own: a confirmed review of the transfer blocks the beneficiary it names (D18).
      const beneficiary =
        kind === 'lookalike' ? await newBeneficiary(org.api, kind) : org.beneficiaries[kind];
      if (kind === 'lookalike') org.kindOf.set(beneficiary, kind);
      const response = await send(
        'confirm',
        'POST',
        `${QUOTES}/${quoted.id}/confirm`,
        { beneficiary_id: beneficiary, funding_method: funding, reference: `lane ${name}` },
        ['201'],
        chance(0.5),
      );
      if (response.statusCode !== 201) return;
      const view = response.json() as {
        id: string;
        status: string;
        screening_id: string | null;
        payout: { id: string } | null;
        deposit: { id: string; expected_amount: string } | null;
      };
      org.created.transfers.add(view.id);
      org.transfers.set(view.id, {
        kind,
        funding,
        sourceAmount: quoted.source_amount,
        screeningId: view.screening_id,
        review: undefined,
        cancelled: false,
        expired: false,
        funded: funding === 'balance',
      });
      const first =
        kind === 'lookalike' ? 'in_review' : funding === 'balance' ? 'processing' : 'awaiting_deposit';
      if (view.status !== first)
        surprises.push(`confirm: transfer ${view.id} began ${view.status}, not ${first}`);
      recordLegs(view.id, view);
    }

    async function fundTransfer(): Promise<void> {
      const found = someTransfer();
      if (!found) return;
      const [id, record] = found;
      const source = new Decimal(record.sourceAmount);
      const how = pick(['exact', 'stated', 'short', 'excess'] as const);
      const amount =
        how === 'exact'
          ? undefined
          : how === 'stated'
            ? record.sourceAmount
            : how === 'short'
              ? source.minus(fromCents(cents(1, 500))).toFixed(2) // quotes are of 10.00 and more
              : source.plus(fromCents(cents(1, 10_000))).toFixed(2);
      const response = await send(
        'fund-transfer',
        'POST',
        `/api/v1/sandbox/transfers/${id}/fund`,
        amount === undefined ? {} : { amount },
        ['200', '400 INVALID_STATE'],
      );
      if (response.statusCode !== 200) return;
      const view = response.json() as Parameters<typeof recordLegs>[1] & { status: string };
      const wanted = how === 'short' ? 'awaiting_deposit' : 'processing';
      if (view.status !== wanted)
        surprises.push(`fund-transfer (${how}): transfer ${id} is ${view.status}, not ${wanted}`);
      if (view.status === 'processing') record.funded = true;
      recordLegs(id, view);
    }

    async function cancelTransfer(): Promise<void> {
      const found = someTransfer();
      if (!found) return;
      const [id, record] = found;
      const response = await send('cancel-transfer', 'POST', `${TRANSFERS}/${id}/cancel`, undefined, [
        '200',
        '400 INVALID_STATE',
      ]);
      if (response.statusCode === 200) record.cancelled = true;
    }

    async function expireTransfer(): Promise<void> {
      const found = someTransfer();
      if (!found) return;
      const [id, record] = found;
      const response = await send(
        'expire-transfer',
        'POST',
        `/api/v1/sandbox/transfers/${id}/expire`,
        undefined,
        ['200', '400 INVALID_STATE'],
      );
      if (response.statusCode === 200) record.expired = true;
    }

    async function confirmExpiredQuote(): Promise<void> {
      const quoted = await quote();
      if (!quoted) return;
      await send('expire-quote', 'POST', `/api/v1/sandbox/quotes/${quoted.id}/expire`, undefined, ['200']);
      await send(
        'confirm-expired',
        'POST',
        `${QUOTES}/${quoted.id}/confirm`,
        { beneficiary_id: org.beneficiaries.plain, funding_method: 'balance' },
        ['400 QUOTE_EXPIRED'],
      );
    }

    async function review(): Promise<void> {
      const waiting = [...org.transfers.values()].filter(
        (record) => record.kind === 'lookalike' && record.review === undefined && record.screeningId !== null,
      );
      if (waiting.length === 0) return;
      const record = pick(waiting);
      const decision = chance(0.6) ? 'cleared' : 'confirmed_match';
      const response = chance(0.5)
        ? await operator(
            'operator-review',
            `/admin/v1/screenings/${record.screeningId}/review`,
            {
              decision,
              note: `reviewed by lane ${name}`,
            },
            ['200', '400 INVALID_STATE'],
          )
        : await send(
            'sandbox-review',
            'POST',
            `/api/v1/sandbox/screenings/${record.screeningId}/review`,
            { decision },
            ['200', '400 INVALID_STATE'],
          );
      if (response.statusCode === 200) record.review = decision;
    }

    async function deposit(
      currency = pick(['USD', 'EUR', 'GBP']),
      expected = chance(0.7) ? fromCents(cents(100, 100_000)) : null,
    ): Promise<string | undefined> {
      const response = await send(
        'deposit',
        'POST',
        DEPOSITS,
        { currency, method: 'bank_transfer', ...(expected === null ? {} : { expected_amount: expected }) },
        ['201'],
      );
      if (response.statusCode !== 201) return undefined;
      const id = (response.json() as { id: string }).id;
      org.created.deposits.add(id);
      org.deposits.set(id, { expected, transferId: null });
      return id;
    }

    async function receiveDeposit(chosen?: string): Promise<void> {
      if (org.deposits.size === 0) return;
      const [id, record] =
        chosen === undefined ? pick([...org.deposits.entries()]) : [chosen, org.deposits.get(chosen)!];
      const amount =
        chosen !== undefined || (record.expected !== null && chance(0.5))
          ? undefined
          : fromCents(cents(100, 100_000));
      await send(
        'receive-deposit',
        'POST',
        `/api/v1/sandbox/deposits/${id}/receive`,
        amount === undefined ? {} : { amount },
        ['200', '400 INVALID_STATE'],
      );
    }

    async function topUp(): Promise<void> {
      const currency = pick(['USD', 'EUR', 'GBP']);
      const amount = fromCents(cents(10_000, 500_000));
      const response = await send('top-up', 'POST', '/api/v1/sandbox/balances/top-up', { currency, amount }, [
        '200',
      ]);
      if (response.statusCode === 200) org.topUps.push({ currency, amount });
    }

    async function beyondBalance(): Promise<void> {
      await send(
        'payout-beyond-balance',
        'POST',
        PAYOUTS,
        { beneficiary_id: org.beneficiaries.plain, currency: 'EUR', amount: '5000000.00' },
        ['400 INSUFFICIENT_FUNDS'],
      );
    }

    const operations: [number, () => Promise<void>][] = [
      [8, topUp],
      [18, payout],
      [5, () => cancelPayout()],
      [8, simulatePayout],
      [14, () => transfer('balance')],
      [10, () => transfer('bank_transfer')],
      [10, fundTransfer],
      [5, cancelTransfer],
      [4, expireTransfer],
      [3, confirmExpiredQuote],
      [8, review],
      [5, () => deposit().then(() => {})],
      [5, () => receiveDeposit()],
      [2, beyondBalance],
    ];
    if (operationCount === 'warm-up') {
      // A service process creates the platform's ledger accounts when it starts (ensurePlatformAccounts);
      // this test's API is an in-process app that does not, so the first movement in each currency, which
      // creates them, runs alone before the workload (two first creations racing can deadlock).
      for (const currency of ['USD', 'EUR', 'GBP']) {
        const id = await deposit(currency, '10.00');
        if (id !== undefined) await receiveDeposit(id);
      }
      for (const corridor of [USD_TO_DE, GBP_TO_DE]) await transfer('balance', corridor, 'plain');
      return;
    }
    const total = operations.reduce((sum, [weight]) => sum + weight, 0);
    for (let index = 0; index < operationCount; index++) {
      let roll = random() * total;
      for (const [weight, operation] of operations) {
        roll -= weight;
        if (roll >= 0) continue;
        await waitUntil(() => operationsDone < nextKillAt, 'the kill planned here', 120_000);
        await operation();
        operationsDone++;
        await delay(random() * THINK_MS);
        break;
      }
    }
  }

  it('rests every transfer, deposit and payout where it may, hands each payout over once, and keeps the books', async () => {
    note(`seed ${SEED} (replay the operations with MONEY_FAULTS_SEED=${SEED})`);
    const started = Date.now();
    const orgs = await Promise.all(Array.from({ length: ORGANISATIONS }, (_, index) => organisation(index)));
    await lane(orgs[0]!, 'warm-up', seededRandom(SEED - 1), 'warm-up');
    const live = await Promise.all(Array.from({ length: WORKERS }, () => startWorker()));

    // The workload, and meanwhile a random worker killed with SIGKILL every few seconds and replaced.
    let kills = 0;
    let lanesDone = false;
    const handOffsAtKill: number[] = [];
    const workloadStarted = Date.now();
    const lanes = Promise.all(
      orgs.flatMap((org, orgIndex) =>
        Array.from({ length: LANES_PER_ORGANISATION }, (_, laneIndex) =>
          lane(
            org,
            `${orgIndex}.${laneIndex}`,
            seededRandom(SEED + 1 + orgIndex * 16 + laneIndex),
            OPERATIONS_PER_LANE,
          ),
        ),
      ),
    );
    // A replacement starts in the background (a second or more on a busy machine), so that the kills keep
    // to their places, and a kill may land while another worker's replacement is still starting.
    const replacements: Promise<void>[] = [];
    const killer = (async () => {
      const random = seededRandom(SEED);
      const operations = ORGANISATIONS * LANES_PER_ORGANISATION * OPERATIONS_PER_LANE;
      const places = Array.from({ length: KILLS }, () => Math.floor(operations * (0.05 + 0.9 * random())));
      for (const place of places.sort((a, b) => a - b)) {
        nextKillAt = place;
        await waitUntil(
          () => lanesDone || (operationsDone >= place && live.length === WORKERS),
          `operation ${place} with every worker up`,
          120_000,
        );
        if (lanesDone) break;
        const [victim] = live.splice(Math.floor(random() * live.length), 1);
        await victim!.stop('SIGKILL');
        kills++;
        handOffsAtKill.push(await count('SELECT count(*)::int AS n FROM payout_hand_offs'));
        replacements.push(startWorker().then((worker) => void live.push(worker)));
      }
      nextKillAt = Number.POSITIVE_INFINITY;
    })();
    await Promise.all([
      lanes.finally(() => {
        lanesDone = true;
      }),
      killer,
    ]);
    await Promise.all(replacements);
    const workloadMs = Date.now() - workloadStarted;

    // The last workers die at once, whatever they hold; a clean one finishes what is due.
    for (const worker of live) await worker.stop('SIGKILL');
    const clean = await startWorker();
    await waitUntil(
      async () =>
        (await count('SELECT count(*)::int AS n FROM jobs WHERE run_at <= now() OR kind = ANY($1)', [
          [HAND_OFF_KIND, SANDBOX_STEP_KIND],
        ])) === 0,
      'nothing due and no hand-off or rail step pending',
      60_000,
    );
    assert.equal(await clean.stop('SIGTERM'), 0);
    const deadlocks = processes.reduce(
      (sum, worker) => sum + (worker.stdout().match(/deadlock/g)?.length ?? 0),
      0,
    );
    note(
      `${orgs.length * LANES_PER_ORGANISATION} lanes x ${OPERATIONS_PER_LANE} operations in ${workloadMs} ms; ` +
        `${kills} workers killed during the workload and ${WORKERS} at its end (hand-offs done at each kill: ${handOffsAtKill.join(', ')}); ` +
        `${replays} idempotent replays; worker logs mention a deadlock ${deadlocks} time(s)`,
    );
    note(
      [...tally.entries()]
        .sort()
        .map(([outcome, n]) => `${outcome}: ${n}`)
        .join('; '),
    );

    assert.deepEqual(surprises, [], 'every answer is one the operation allows');
    assert.equal(kills, KILLS, 'every planned kill landed during the workload');
    const failedJobs = await t.db.pool.query('SELECT kind, last_error FROM jobs WHERE attempts > 0');
    assert.deepEqual(failedJobs.rows, [], 'no job is waiting to be retried after a failure');

    const books = await readBooks(
      t.db.pool,
      t.deps.secretBox,
      orgs.map((org) => org.api.tenant.organisationId),
    );
    const kindOf = (payout: PayoutRow): Kind => {
      const org = orgs.find((candidate) => candidate.api.tenant.organisationId === payout.organisation_id)!;
      return org.kindOf.get(payout.beneficiary_id)!;
    };

    // Every resource rests in a final state or one it can leave (money-books.ts states which).
    assert.deepEqual(
      stranded(books, (payout) => kindOf(payout) === 'holds'),
      [],
    );

    // Each payout is where its account and the client's actions put it (D24's magic endings).
    const payoutMismatches: string[] = [];
    for (const row of books.payouts) {
      const org = orgs.find((candidate) => candidate.api.tenant.organisationId === row.organisation_id)!;
      const record = org.payouts.get(row.id);
      const kind = kindOf(row);
      const byRail: Record<Kind, [string, string | null]> = {
        plain: ['completed', null],
        lookalike: ['completed', null],
        closed: ['failed', 'account_closed'],
        invalid: ['failed', 'invalid_account'],
        returns: ['returned', 'returned'],
        holds: ['processing', null],
      };
      const expected: [string, string | null] = record?.cancelled
        ? ['cancelled', null]
        : record?.returned
          ? ['returned', 'returned']
          : record?.failedWith !== undefined
            ? ['failed', record.failedWith]
            : record?.completed
              ? ['completed', null]
              : byRail[kind];
      if (row.status !== expected[0] || row.failure_reason !== expected[1])
        payoutMismatches.push(
          `payout ${row.id} (${kind}) is ${row.status}/${row.failure_reason}, not ${expected.join('/')}`,
        );
    }
    assert.deepEqual(payoutMismatches, []);

    // Each transfer is where its leg and the client's actions put it (D20).
    const payoutsById = new Map(books.payouts.map((row) => [row.id, row]));
    const transferMismatches: string[] = [];
    for (const row of books.transfers) {
      const org = orgs.find((candidate) => candidate.api.tenant.organisationId === row.organisation_id)!;
      const record = org.transfers.get(row.id)!;
      const leg = row.payout_id === null ? undefined : payoutsById.get(row.payout_id);
      const expected = record.cancelled
        ? 'cancelled'
        : record.expired
          ? 'expired'
          : record.review === 'confirmed_match'
            ? 'rejected'
            : leg
              ? (LEG_TO_TRANSFER[leg.status] ?? `a transfer whose leg is ${leg.status}`)
              : record.kind === 'lookalike' && record.review === undefined
                ? 'in_review'
                : 'awaiting_deposit';
      if (row.status !== expected)
        transferMismatches.push(
          `transfer ${row.id} (${record.funding}, ${record.kind}) is ${row.status}, not ${expected}`,
        );
    }
    assert.deepEqual(transferMismatches, []);

    // No payout was handed over twice: one hand-off, one payout.processing event and (ledger below) one rail
    // posting for each payout that left pending for its rail, none for the others.
    const processingEvents = new Map<string, number>();
    for (const event of books.events)
      if (event.event_type_code === 'payout.processing')
        processingEvents.set(event.source_object_id, (processingEvents.get(event.source_object_id) ?? 0) + 1);
    const handOffMismatches = books.payouts.flatMap((row) => {
      const handedOver = ['processing', 'completed', 'failed', 'returned'].includes(row.status) ? 1 : 0;
      const events = processingEvents.get(row.id) ?? 0;
      return row.hand_offs === handedOver && events === handedOver
        ? []
        : [
            `payout ${row.id} (${row.status}): ${row.hand_offs} hand-offs, ${events} payout.processing events`,
          ];
    });
    assert.deepEqual(handOffMismatches, []);

    // Money: each resource's entries are exactly what its state says, nothing else moved money, every
    // balance is the sum of its entries, and every currency sums to zero over the whole ledger.
    assert.deepEqual(ledgerMismatches(books, 'rail:sandbox'), []);
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
    const totals = await ledgerTotals(t.db.pool);
    assert.deepEqual(
      Object.entries(totals).filter(([, total]) => total !== '0'),
      [],
      `money per currency: ${JSON.stringify(totals)}`,
    );

    // Each organisation's balances are what its resources' states and its top-ups make them.
    for (const org of orgs) {
      const organisationId = org.api.tenant.organisationId;
      const available = new Map<string, Decimal>(
        ['USD', 'EUR', 'GBP', 'USDC'].map((code) => [code, OPENING]),
      );
      const held = new Map<string, Decimal>();
      const add = (map: Map<string, Decimal>, currency: string, amount: Decimal | string) =>
        map.set(currency, (map.get(currency) ?? new Decimal(0)).plus(amount));
      for (const topUp of org.topUps) add(available, topUp.currency, topUp.amount);
      for (const row of books.deposits)
        if (row.organisation_id === organisationId && row.status === 'received')
          add(available, row.currency, row.received_amount!);
      for (const row of books.payouts) {
        if (row.organisation_id !== organisationId || row.transfer_id !== null) continue;
        if (['pending', 'processing', 'completed'].includes(row.status))
          add(available, row.currency, new Decimal(row.amount).negated());
        if (['pending', 'processing'].includes(row.status)) add(held, row.currency, row.amount);
      }
      for (const row of books.transfers) {
        if (row.organisation_id !== organisationId) continue;
        const holdsMoney =
          ['processing', 'completed'].includes(row.status) ||
          (row.status === 'in_review' && row.funding_method === 'balance');
        if (holdsMoney) add(available, row.source_currency, new Decimal(row.source_amount).negated());
      }
      const balances = (await org.api.get('/api/v1/balances')).json() as {
        currency: string;
        available: string;
        held: string;
      }[];
      assert.deepEqual(
        balances.map((entry) => [
          entry.currency,
          new Decimal(entry.available).toFixed(),
          new Decimal(entry.held).toFixed(),
        ]),
        balances.map((entry) => [
          entry.currency,
          (available.get(entry.currency) ?? new Decimal(0)).toFixed(),
          (held.get(entry.currency) ?? new Decimal(0)).toFixed(),
        ]),
        `balances of organisation ${organisationId}`,
      );
    }

    // Every state change published its event, in an order its state machine allows, none twice.
    assert.deepEqual(eventPathProblems(books), []);

    // Idempotent retries created one resource each: the database holds exactly what the client was told
    // it created, and one top-up per top-up that ran.
    for (const org of orgs) {
      const organisationId = org.api.tenant.organisationId;
      const sorted = (values: Iterable<string>) => [...values].sort();
      assert.deepEqual(
        sorted(
          books.payouts
            .filter((row) => row.organisation_id === organisationId && row.transfer_id === null)
            .map((row) => row.id),
        ),
        sorted(org.created.payouts),
      );
      assert.deepEqual(
        sorted(books.transfers.filter((row) => row.organisation_id === organisationId).map((row) => row.id)),
        sorted(org.created.transfers),
      );
      assert.deepEqual(
        sorted(
          books.deposits
            .filter((row) => row.organisation_id === organisationId && row.transfer_id === null)
            .map((row) => row.id),
        ),
        sorted(org.created.deposits),
      );
      assert.equal(
        await count(
          `SELECT count(*)::int AS n FROM ledger_entries
           WHERE organisation_id = $1 AND type = 'top_up' AND resource_id IS NULL`,
          [organisationId],
        ),
        org.topUps.length,
      );
    }
    note(
      `${books.transfers.length} transfers, ${books.deposits.length} deposits, ${books.payouts.length} payouts, ` +
        `${books.events.length} events checked in ${Date.now() - started} ms`,
    );
  });
});
