// Tenant isolation of the payment areas (issue 18, D14): two organisations, each with one of every payment
// resource made through the API and the real job runner. Organisation B's reads of A's resources, and every
// action on them (confirm, cancel, sandbox simulations, PATCH, DELETE), answer exactly as an id that does not
// exist (404 in the same envelope) and change nothing; A's ids inside B's own requests are unknown ids; B's
// searches return B's rows only, whatever the filter or free text; an Idempotency-Key of A's never replays
// A's answer to B; and A's events are delivered to A's subscriptions only.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { newPublicId } from '../../src/platform/ids.ts';
import { errorBody, startTestApp, type TestApp } from '../helpers/app.ts';
import type { Method } from '../helpers/http.ts';
import { DEPOSITS, PAYOUTS } from '../payments/fixtures.ts';
import { EVENTS } from '../webhooks/fixtures.ts';
import {
  ADDRESSES,
  type PaymentWorld,
  paymentWorld,
  QUOTES,
  SCREENINGS,
  TRANSFERS,
  USD_EUR,
} from './payment-world.ts';

const SANDBOX = '/api/v1/sandbox';

interface Probe {
  method: Method;
  /** The URL with the resource id in it. */
  url: (id: string) => string;
  /** The resource of A's it acts on, and the prefix of an id that names nothing. */
  target: (w: PaymentWorld) => string;
  prefix: string;
  /** The body, from the caller's own world (B's beneficiary to confirm A's quote with, say). */
  body?: (own: PaymentWorld) => unknown;
  /** What the owner gets for the same request: the action is possible, so B's 404 is isolation. */
  ownerStatus: number;
}

const PROBES: Probe[] = [
  {
    method: 'GET',
    url: (id) => `/api/v1/beneficiaries/${id}`,
    target: (w) => w.beneficiary,
    prefix: 'ben',
    ownerStatus: 200,
  },
  {
    method: 'PATCH',
    url: (id) => `/api/v1/beneficiaries/${id}`,
    target: (w) => w.patchBeneficiary,
    prefix: 'ben',
    body: () => ({ name: 'Mallory Attacker', email: 'mallory@example.com' }),
    ownerStatus: 200,
  },
  {
    method: 'DELETE',
    url: (id) => `/api/v1/beneficiaries/${id}`,
    target: (w) => w.deleteBeneficiary,
    prefix: 'ben',
    ownerStatus: 200,
  },
  {
    method: 'GET',
    url: (id) => `${SCREENINGS}/${id}`,
    target: (w) => w.screening,
    prefix: 'scr',
    ownerStatus: 200,
  },
  {
    method: 'POST',
    url: (id) => `${SANDBOX}/screenings/${id}/review`,
    target: (w) => w.screening,
    prefix: 'scr',
    body: () => ({ decision: 'cleared', note: 'Cleared by someone else' }),
    ownerStatus: 200,
  },
  { method: 'GET', url: (id) => `${QUOTES}/${id}`, target: (w) => w.quote, prefix: 'qte', ownerStatus: 200 },
  {
    method: 'POST',
    url: (id) => `${QUOTES}/${id}/confirm`,
    target: (w) => w.quote,
    prefix: 'qte',
    body: (own) => ({ beneficiary_id: own.beneficiary, funding_method: 'balance' }),
    ownerStatus: 201,
  },
  {
    method: 'POST',
    url: (id) => `${SANDBOX}/quotes/${id}/expire`,
    target: (w) => w.expireQuote,
    prefix: 'qte',
    ownerStatus: 200,
  },
  {
    method: 'GET',
    url: (id) => `${TRANSFERS}/${id}`,
    target: (w) => w.transfer,
    prefix: 'trf',
    ownerStatus: 200,
  },
  {
    method: 'POST',
    url: (id) => `${TRANSFERS}/${id}/cancel`,
    target: (w) => w.cancelTransfer,
    prefix: 'trf',
    ownerStatus: 200,
  },
  {
    method: 'POST',
    url: (id) => `${SANDBOX}/transfers/${id}/fund`,
    target: (w) => w.transfer,
    prefix: 'trf',
    body: () => ({}),
    ownerStatus: 200,
  },
  {
    method: 'POST',
    url: (id) => `${SANDBOX}/transfers/${id}/expire`,
    target: (w) => w.expireTransfer,
    prefix: 'trf',
    ownerStatus: 200,
  },
  {
    method: 'GET',
    url: (id) => `${DEPOSITS}/${id}`,
    target: (w) => w.deposit,
    prefix: 'dep',
    ownerStatus: 200,
  },
  {
    method: 'POST',
    url: (id) => `${SANDBOX}/deposits/${id}/receive`,
    target: (w) => w.deposit,
    prefix: 'dep',
    body: () => ({ amount: '250.00' }),
    ownerStatus: 200,
  },
  {
    method: 'GET',
    url: (id) => `${PAYOUTS}/${id}`,
    target: (w) => w.payout,
    prefix: 'pyt',
    ownerStatus: 200,
  },
  {
    method: 'POST',
    url: (id) => `${PAYOUTS}/${id}/cancel`,
    target: (w) => w.cancelPayout,
    prefix: 'pyt',
    ownerStatus: 200,
  },
  {
    method: 'POST',
    url: (id) => `${SANDBOX}/payouts/${id}/complete`,
    target: (w) => w.processingPayout,
    prefix: 'pyt',
    body: () => ({}),
    ownerStatus: 200,
  },
  {
    method: 'POST',
    url: (id) => `${SANDBOX}/payouts/${id}/fail`,
    target: (w) => w.failPayout,
    prefix: 'pyt',
    body: () => ({ failure_reason: 'account_closed' }),
    ownerStatus: 200,
  },
  {
    method: 'POST',
    url: (id) => `${SANDBOX}/payouts/${id}/return`,
    target: (w) => w.completedPayout,
    prefix: 'pyt',
    body: () => ({}),
    ownerStatus: 200,
  },
  {
    method: 'GET',
    url: (id) => `${ADDRESSES}/${id}`,
    target: (w) => w.address.id,
    prefix: 'dad',
    ownerStatus: 200,
  },
  {
    method: 'POST',
    url: (id) => `${ADDRESSES}/${id}/disable`,
    target: (w) => w.disableAddress,
    prefix: 'dad',
    ownerStatus: 200,
  },
];

describe('payment isolation between organisations (issue 18)', () => {
  let t: TestApp;
  let a: PaymentWorld;
  let b: PaymentWorld;

  before(async () => {
    t = await startTestApp({ env: { SANDBOX_STEP_DELAY_MS: '0' } });
    // B's subscription to every event type exists before A makes anything.
    b = await paymentWorld(t, await t.tenant());
    a = await paymentWorld(t, await t.tenant());
  });
  after(() => t.close());

  const organisationOf = (w: PaymentWorld) => w.api.tenant.organisationId;

  /**
   * Every row of the organisation in every table that has an organisation_id, plus every job, event and ledger
   * row of any organisation: JSON per table.
   */
  const snapshot = async (w: PaymentWorld): Promise<Record<string, string>> => {
    const tables = await t.db.pool.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.columns
        WHERE column_name = 'organisation_id' AND table_schema = current_schema() AND table_name <> 'idempotency_keys'
        ORDER BY table_name`,
    );
    const rows: Record<string, string> = {};
    for (const { table_name: table } of tables.rows) {
      const result = await t.db.pool.query(`SELECT * FROM ${table} WHERE organisation_id = $1 ORDER BY 1`, [
        organisationOf(w),
      ]);
      rows[table] = JSON.stringify(result.rows);
    }
    for (const table of ['jobs', 'webhook_events', 'ledger_entries', 'ledger_transactions'])
      rows[`all ${table}`] = JSON.stringify(
        (await t.db.pool.query(`SELECT * FROM ${table} ORDER BY 1`)).rows,
      );
    assert.ok(rows.transfers!.length > 100 && rows.payouts!.length > 100, 'the snapshot holds the rows');
    return rows;
  };
  /** The tables whose rows differ between two snapshots. */
  const changed = (before: Record<string, string>, after: Record<string, string>) =>
    Object.keys(before).filter((table) => before[table] !== after[table]);

  /** The error without its error_id, with the id it names replaced: what tells one 404 from another. */
  const seen = (response: LightMyRequestResponse, id: string) => {
    const { error_id: _id, ...rest } = errorBody(response.body);
    return JSON.parse(JSON.stringify(rest).replaceAll(id, '<id>')) as Record<string, unknown>;
  };

  const send = (
    w: PaymentWorld,
    method: Method,
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ) => w.api.request(method, url, body, headers);

  it("answers A's resources to B exactly as ids that do not exist (404), for reads and every action, and changes nothing", async () => {
    const before = await snapshot(a);
    for (const probe of PROBES) {
      const foreign = probe.target(a);
      const missing = newPublicId(probe.prefix);
      const label = `${probe.method} ${probe.url(foreign)}`;
      const response = await send(b, probe.method, probe.url(foreign), probe.body?.(b));
      const control = await send(b, probe.method, probe.url(missing), probe.body?.(b));
      assert.equal(response.statusCode, 404, `${label}: ${response.body}`);
      assert.equal(control.statusCode, 404, `${label} (an id that does not exist): ${control.body}`);
      assert.deepEqual(
        seen(response, foreign),
        seen(control, missing),
        `${label}: indistinguishable from a missing id`,
      );
      assert.equal(seen(response, foreign).code, 'NOT_FOUND', label);
      assert.ok(!response.body.includes(organisationOf(a)), `${label} names no organisation`);
    }
    assert.deepEqual(
      changed(before, await snapshot(a)),
      [],
      "A's rows, and every job and event, are untouched",
    );

    // The owner can do each of them: B's 404 is isolation, not a state that refuses the action.
    for (const probe of PROBES) {
      const response = await send(a, probe.method, probe.url(probe.target(a)), probe.body?.(a));
      assert.equal(
        response.statusCode,
        probe.ownerStatus,
        `owner ${probe.method} ${probe.url(probe.target(a))}: ${response.body}`,
      );
    }
  });

  it("treats A's ids inside B's own requests as ids that do not exist, and changes nothing of A's", async () => {
    const quote = await b.api.post(QUOTES, { corridor_id: USD_EUR, source_amount: '50.00' });
    assert.equal(quote.statusCode, 201, quote.body);
    const before = await snapshot(a);
    const cases: Array<{
      label: string;
      method: Method;
      url: string;
      body: (id: string) => unknown;
      foreign: string;
      missing: string;
    }> = [
      {
        label: "a payout to A's beneficiary",
        method: 'POST',
        url: PAYOUTS,
        body: (id) => ({ beneficiary_id: id, currency: 'EUR', amount: '10.00' }),
        foreign: a.beneficiary,
        missing: newPublicId('ben'),
      },
      {
        label: "B's quote confirmed for A's beneficiary",
        method: 'POST',
        url: `${QUOTES}/${(quote.json() as { id: string }).id}/confirm`,
        body: (id) => ({ beneficiary_id: id, funding_method: 'balance' }),
        foreign: a.beneficiary,
        missing: newPublicId('ben'),
      },
      {
        label: "crypto funds simulated on A's deposit address",
        method: 'POST',
        url: `${SANDBOX}/crypto/deposits`,
        body: (address) => ({ address, asset: 'USDC', amount: '5.000000', network: 'ethereum' }),
        foreign: a.address.address,
        missing: `0x${'7'.repeat(40)}`,
      },
    ];
    for (const { label, method, url, body, foreign, missing } of cases) {
      const response = await send(b, method, url, body(foreign));
      const control = await send(b, method, url, body(missing));
      assert.ok(response.statusCode >= 400 && response.statusCode < 500, `${label}: ${response.body}`);
      assert.equal(response.statusCode, control.statusCode, `${label}: ${response.body} / ${control.body}`);
      assert.deepEqual(
        seen(response, foreign),
        seen(control, missing),
        `${label}: indistinguishable from a missing id`,
      );
    }
    assert.deepEqual(changed(before, await snapshot(a)), []);
  });

  it("never replays A's answer to B for the same Idempotency-Key, path and body", async () => {
    const topUp = { currency: 'USD', amount: '1.00' };
    const key = { 'idempotency-key': 'isolation-shared-key' };
    const mine = await send(a, 'POST', `${SANDBOX}/balances/top-up`, topUp, key);
    assert.equal(mine.statusCode, 200, mine.body);
    const balanceOf = async (w: PaymentWorld) =>
      ((await w.api.get('/api/v1/balances')).json() as { currency: string; available: string }[]).find(
        (entry) => entry.currency === 'USD',
      )!.available;
    const aBefore = await balanceOf(a);
    const bBefore = await balanceOf(b);
    const theirs = await send(b, 'POST', `${SANDBOX}/balances/top-up`, topUp, key);
    assert.equal(theirs.statusCode, 200, theirs.body);
    assert.equal(theirs.headers['idempotent-replayed'], undefined, 'B ran its own request');
    assert.notEqual(theirs.body, mine.body);
    assert.equal(await balanceOf(a), aBefore, "A's balance is untouched");
    assert.notEqual(await balanceOf(b), bBefore, "B's own top-up ran");
    const again = await send(a, 'POST', `${SANDBOX}/balances/top-up`, topUp, key);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body, mine.body, "A's key still replays A's answer");
  });

  it("never returns A's rows in B's searches, whatever the filter or free text", async () => {
    const ids = async (table: string, w: PaymentWorld) =>
      new Set(
        (
          await t.db.pool.query<{ id: string }>(`SELECT id FROM ${table} WHERE organisation_id = $1`, [
            organisationOf(w),
          ])
        ).rows.map((row) => String(row.id)),
      );
    const searches: Array<[string, string, unknown[]]> = [
      [
        '/api/v1/beneficiaries/search',
        'beneficiaries',
        [
          {},
          { search: 'Anna' },
          { filters: { status: ['active', 'deleted', 'in_review', 'blocked'] } },
          { filters: { destination_country: ['DE', 'FR', 'ES', 'US'] } },
        ],
      ],
      [
        `${SCREENINGS}/search`,
        'sanctions_screenings',
        [
          {},
          { search: 'Sanctioned' },
          { filters: { match_status: ['potential_match', 'cleared', 'no_match'] } },
          { filters: { source_object_id: [a.beneficiary, a.patchBeneficiary] } },
        ],
      ],
      [
        `${TRANSFERS}/search`,
        'transfers',
        [
          {},
          { search: a.transfer },
          { filters: { beneficiary_id: [a.beneficiary] } },
          { filters: { quote_id: [a.quote, a.expireQuote] } },
          { filters: { status: ['awaiting_deposit', 'processing', 'cancelled', 'expired'] } },
        ],
      ],
      [
        `${PAYOUTS}/search`,
        'payouts',
        [
          {},
          { filters: { beneficiary_id: [a.beneficiary] } },
          { filters: { status: ['pending', 'processing', 'completed', 'cancelled', 'failed', 'returned'] } },
          { filters: { currency: ['EUR', 'USD'] } },
        ],
      ],
      [
        `${DEPOSITS}/search`,
        'deposits',
        [
          {},
          { filters: { status: ['pending', 'received', 'failed'] } },
          { filters: { method: ['bank_transfer'] } },
        ],
      ],
      [
        `${ADDRESSES}/search`,
        'crypto_deposit_addresses',
        [
          {},
          { search: a.address.address },
          { search: '0x' },
          { filters: { network: ['ethereum'], asset: ['USDC'] } },
        ],
      ],
      [
        '/api/v1/balances/transactions/search',
        'ledger_entries',
        [
          {},
          { filters: { resource_id: [a.completedPayout, a.payout, a.deposit] } },
          { filters: { currency: ['USD', 'EUR'], type: ['payout', 'deposit', 'top_up'] } },
        ],
      ],
    ];
    let checked = 0;
    for (const [url, table, bodies] of searches) {
      const theirs = await ids(table, a);
      const own = await ids(table, b);
      for (const body of bodies) {
        const response = await b.api.post(url, { ...(body as object), page_size: 100 });
        assert.equal(response.statusCode, 200, `${url} ${JSON.stringify(body)}: ${response.body}`);
        const page = response.json() as { items: { id: string }[]; total: number };
        assert.equal(page.total, page.items.length, `${url} ${JSON.stringify(body)}: total`);
        for (const item of page.items) {
          assert.ok(!theirs.has(item.id), `${url} ${JSON.stringify(body)} returned A's ${item.id}`);
          assert.ok(own.has(item.id), `${url} ${JSON.stringify(body)} returned ${item.id}, not B's`);
          checked++;
        }
      }
    }
    assert.ok(checked > 20, `the searches returned B's own rows (${checked})`);
  });

  it("delivers A's events to A's subscriptions only", async () => {
    const crossed = await t.db.pool.query(
      `SELECT d.id FROM webhook_deliveries d
         JOIN webhook_events e ON e.id = d.event_id
         JOIN webhook_subscriptions s ON s.id = d.subscription_id
        WHERE e.organisation_id <> s.organisation_id OR d.organisation_id <> e.organisation_id`,
    );
    assert.deepEqual(crossed.rows, [], 'no delivery crosses organisations');
    const toA = await t.db.pool.query<{ n: string }>(
      'SELECT count(*) AS n FROM webhook_deliveries WHERE subscription_id = $1',
      [a.subscription.id],
    );
    assert.ok(Number(toA.rows[0]!.n) > 20, `A's own subscription received A's events (${toA.rows[0]!.n})`);
    const aIds = [
      a.beneficiary,
      a.transfer,
      a.payout,
      a.deposit,
      a.screening,
      a.address.id,
      a.completedPayout,
    ];
    const bEvents = await b.api.post(`${EVENTS}/search`, {
      filters: { source_object_id: aIds },
      page_size: 100,
    });
    assert.equal(bEvents.statusCode, 200, bEvents.body);
    assert.deepEqual(bEvents.json(), { items: [], total: 0, page: 1, page_size: 100 });
    const bTypes = await b.api.post(`${EVENTS}/search`, { search: a.transfer });
    assert.equal((bTypes.json() as { total: number }).total, 0);
  });
});
