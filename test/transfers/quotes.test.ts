// Quotes (D20) through the real app on the sandbox's corridors and rates (D24).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { withTransaction } from '../../src/db/pool.ts';
import { expireQuoteJob } from '../../src/transfers/quotes.ts';
import { errorBody, startTestApp, TEST_ADMIN_KEY, type TestApp } from '../helpers/app.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';

const QUOTES = '/api/v1/transfers/quotes';
/** Sandbox USD -> EUR (DE): fee 1.00 + 0.50 %, markup 0.35 %, mid rate 0.92, limits 1.00..50,000.00. */
const USD_EUR = 'cor_0000SANDBX0000000000000001';
/** Sandbox USD -> INR: fee 2.00 + 0.50 %, markup 0.50 %, mid rate 84.00. */
const USD_INR = 'cor_0000SANDBX0000000000000005';

interface QuoteJson {
  id: string;
  corridor_id: string;
  amount_mode: string;
  source_amount: string;
  fee_amount: string;
  rate: string;
  mid_rate: string;
  destination_amount: string;
  status: string;
  expires_at: string;
  estimated_delivery_at: string;
  created_at: string;
}

describe('quotes (D20)', () => {
  let t: TestApp;
  let api: ApiClient;
  before(async () => {
    t = await startTestApp();
    api = apiClient(t, await t.tenant());
  });
  after(() => t.close());

  const quote = async (body: Record<string, unknown>) => {
    const response = await api.post(QUOTES, body);
    assert.equal(response.statusCode, 201, response.body);
    return response.json() as QuoteJson;
  };

  it("shows in the OpenAPI document's Quote and Transfer examples the prices a sandbox quote gives", async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      components: { schemas: Record<string, { examples: Record<string, unknown>[] }> };
    };
    const [example] = document.components.schemas.Quote!.examples;
    const [transfer] = document.components.schemas.Transfer!.examples as Record<string, unknown>[];
    const q = await quote({ corridor_id: example!.corridor_id, source_amount: example!.source_amount });
    const prices = (shown: Record<string, unknown>) =>
      ['source_amount', 'fee_amount', 'rate', 'destination_amount'].map((key) => shown[key]);
    assert.deepEqual(prices(example!), prices(q as unknown as Record<string, unknown>));
    assert.equal(example!.mid_rate, q.mid_rate);
    assert.deepEqual(prices(transfer!), prices(q as unknown as Record<string, unknown>));
    assert.equal((transfer!.payout as { amount: string }).amount, q.destination_amount);
  });

  it('prices source mode from the rate shown: 1000.00 USD buys 911.27 EUR', async () => {
    const q = await quote({ corridor_id: USD_EUR, source_amount: '1000.00' });
    assert.deepEqual(
      {
        amount_mode: q.amount_mode,
        source_amount: q.source_amount,
        fee_amount: q.fee_amount,
        rate: q.rate,
        mid_rate: q.mid_rate,
        destination_amount: q.destination_amount,
        status: q.status,
      },
      {
        amount_mode: 'source',
        source_amount: '1000.00',
        fee_amount: '6.00', // 1.00 + 1000.00 x 0.50 %
        rate: '0.91678', // 0.92 x (1 - 0.35 %)
        mid_rate: '0.92',
        destination_amount: '911.27', // 994.00 x 0.91678 = 911.27932, rounded down
        status: 'open',
      },
    );
    assert.match(q.id, /^qte_[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.equal(Date.parse(q.expires_at) - Date.parse(q.created_at), 900_000);
    assert.equal(Date.parse(q.estimated_delivery_at) - Date.parse(q.created_at), 86_400_000);
    assert.deepEqual((await api.get(`${QUOTES}/${q.id}`)).json(), q);
  });

  it('finds in destination mode the smallest source amount that delivers the amount asked', async () => {
    const q = await quote({ corridor_id: USD_EUR, destination_amount: '911.27' });
    // 999.99 pays a fee of 6.00 (4.99995 rounded up) and buys 993.99 x 0.91678 = 911.2701: enough; 999.98 is not.
    assert.deepEqual(
      [q.amount_mode, q.source_amount, q.fee_amount, q.destination_amount],
      ['destination', '999.99', '6.00', '911.27'],
    );
    const inr = await quote({ corridor_id: USD_INR, destination_amount: '10000.00' });
    assert.equal(inr.rate, '83.58');
    // 10000.00 INR needs 119.65 USD after the fee (119.64 x 83.58 = 9999.51): 122.27 pays 2.00 + 0.61135,
    // rounded up to 2.62, and leaves 119.65; 122.26 leaves 119.64.
    assert.deepEqual(
      [inr.source_amount, inr.fee_amount, inr.destination_amount],
      ['122.27', '2.62', '10000.00'],
    );
  });

  it('refuses both or neither amount, amounts outside the limits and amounts the fee eats, with 422', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ corridor_id: USD_EUR }, 'source_amount', /exactly one/],
      [
        { corridor_id: USD_EUR, source_amount: '10.00', destination_amount: '5.00' },
        'destination_amount',
        /exactly one/,
      ],
      [{ corridor_id: USD_EUR, source_amount: '50000.01' }, 'source_amount', /1\.00 to 50000\.00 USD/],
      // Below the limits: the message gives them (D14), though the fee would eat it too.
      [{ corridor_id: USD_EUR, source_amount: '0.50' }, 'source_amount', /1\.00 to 50000\.00 USD/],
      [{ corridor_id: USD_EUR, source_amount: '1.00' }, 'source_amount', /does not cover the fee/],
      [
        { corridor_id: USD_EUR, destination_amount: '46000.00' },
        'destination_amount',
        /1\.00 to 50000\.00 USD/,
      ],
      [{ corridor_id: USD_EUR, source_amount: '10.001' }, 'source_amount', /decimals/],
      [{ corridor_id: USD_EUR, destination_amount: '-3.00' }, 'destination_amount', /decimal string/],
    ];
    for (const [body, field, message] of cases) {
      const response = await api.post(QUOTES, body);
      assert.equal(response.statusCode, 422, JSON.stringify(body));
      const error = errorBody(response.body);
      assert.equal(error.field, field, JSON.stringify(body));
      assert.match(error.error, message);
    }
  });

  it('answers 404 for an unknown corridor or another organisation’s quote', async () => {
    const unknown = await api.post(QUOTES, {
      corridor_id: 'cor_00000000000000000000000000',
      source_amount: '10.00',
    });
    assert.equal(unknown.statusCode, 404);
    const q = await quote({ corridor_id: USD_EUR, source_amount: '10.00' });
    const other = apiClient(t, await t.tenant());
    assert.equal((await other.get(`${QUOTES}/${q.id}`)).statusCode, 404);
    assert.equal((await other.post(`/api/v1/sandbox/quotes/${q.id}/expire`)).statusCode, 404);
  });

  it('expires a quote by its timer or by the sandbox simulation', async () => {
    const timed = await quote({ corridor_id: USD_EUR, source_amount: '10.00' });
    const job = await t.db.pool.query<{ kind: string; payload: unknown; run_at: Date; dedupe_key: string }>(
      "SELECT kind, payload, run_at, dedupe_key FROM jobs WHERE payload->>'quote_id' = $1",
      [timed.id],
    );
    assert.deepEqual(job.rows, [
      {
        kind: 'transfers.expire_quote',
        payload: { quote_id: timed.id },
        run_at: new Date(timed.expires_at),
        dedupe_key: `transfers.expire_quote:${timed.id}`,
      },
    ]);
    await withTransaction(t.db.pool, (tx) => expireQuoteJob(tx, timed.id));
    assert.equal((await api.get(`${QUOTES}/${timed.id}`)).json().status, 'expired');
    const simulated = await quote({ corridor_id: USD_EUR, source_amount: '10.00' });
    const expired = await api.post(`/api/v1/sandbox/quotes/${simulated.id}/expire`);
    assert.equal(expired.statusCode, 200);
    assert.equal(expired.json().status, 'expired');
    // It expired now, not at the end of its 15 minutes: expires_at says when.
    const expiresAt = (expired.json() as QuoteJson).expires_at;
    assert.ok(Date.parse(expiresAt) < Date.parse(simulated.expires_at), `${expiresAt} moved forward`);
    assert.ok(Date.parse(expiresAt) <= Date.now(), `${expiresAt} is not in the future`);
    assert.equal((await api.get(`${QUOTES}/${simulated.id}`)).json().expires_at, expiresAt);
    // As every simulation a status does not allow (docs/integrator/sandbox.md).
    const again = await api.post(`/api/v1/sandbox/quotes/${simulated.id}/expire`);
    assert.equal(again.statusCode, 400);
    assert.deepEqual(
      [errorBody(again.body).code, errorBody(again.body).error],
      ['INVALID_STATE', 'The quote is expired; only an open quote can expire'],
    );
  });

  it('reads a quote expired once expires_at has passed, before its timer has run, and the timer then changes nothing', async () => {
    const q = await quote({ corridor_id: USD_EUR, source_amount: '10.00' });
    await t.db.pool.query("UPDATE quotes SET expires_at = now() - interval '1 second' WHERE id = $1", [q.id]);
    const read = (await api.get(`${QUOTES}/${q.id}`)).json() as QuoteJson & { updated_at: string };
    assert.equal(read.status, 'expired');
    const stored = await t.db.pool.query<{ status: string }>('SELECT status FROM quotes WHERE id = $1', [
      q.id,
    ]);
    assert.equal(stored.rows[0]!.status, 'expired');
    await withTransaction(t.db.pool, (tx) => expireQuoteJob(tx, q.id));
    assert.deepEqual((await api.get(`${QUOTES}/${q.id}`)).json(), read);
    // An open quote before its time reads open, and reading it writes nothing.
    const open = await quote({ corridor_id: USD_EUR, source_amount: '10.00' });
    assert.deepEqual((await api.get(`${QUOTES}/${open.id}`)).json(), open);
  });

  it('refuses a suspended corridor with 400 CORRIDOR_UNAVAILABLE, after a malformed amount (422)', async () => {
    const admin = (method: 'PATCH', url: string, body: unknown) =>
      t.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
    const gbp = 'cor_0000SANDBX0000000000000011';
    assert.equal(
      (await admin('PATCH', `/admin/v1/corridors/${gbp}`, { status: 'suspended' })).statusCode,
      200,
    );
    try {
      const refused = await api.post(QUOTES, { corridor_id: gbp, source_amount: '10.00' });
      assert.equal(refused.statusCode, 400);
      assert.equal(errorBody(refused.body).code, 'CORRIDOR_UNAVAILABLE');
      // A malformed amount is 422 on its field before the corridor is looked at (D5, D14), also for an
      // unknown corridor.
      for (const [corridor, body] of [
        [gbp, { source_amount: '-5' }],
        [gbp, { source_amount: 'abc' }],
        [gbp, { destination_amount: '1e3' }],
        ['cor_01JD0000000000000000000000', { source_amount: 'abc' }],
      ] as const) {
        const malformed = await api.post(QUOTES, { corridor_id: corridor, ...body });
        assert.equal(malformed.statusCode, 422, malformed.body);
        assert.deepEqual(
          [errorBody(malformed.body).code, errorBody(malformed.body).field],
          ['VALIDATION_FAILED', Object.keys(body)[0]],
        );
      }
    } finally {
      await admin('PATCH', `/admin/v1/corridors/${gbp}`, { status: 'active' });
    }
  });

  it('refuses with 400 CORRIDOR_UNAVAILABLE a corridor stored with a fee of 100 %, in both modes', async () => {
    const gbp = 'cor_0000SANDBX0000000000000011';
    const before = await t.db.pool.query<{ fee_percent: string }>(
      'SELECT fee_percent::text AS fee_percent FROM corridors WHERE id = $1',
      [gbp],
    );
    // The operator API refuses a fee of 100 %; a corridor row may still hold one.
    await t.db.pool.query('UPDATE corridors SET fee_percent = 100 WHERE id = $1', [gbp]);
    try {
      for (const amount of [{ source_amount: '10.00' }, { destination_amount: '10.00' }]) {
        const refused = await api.post(QUOTES, { corridor_id: gbp, ...amount });
        assert.equal(refused.statusCode, 400, refused.body);
        assert.equal(errorBody(refused.body).code, 'CORRIDOR_UNAVAILABLE');
      }
    } finally {
      await t.db.pool.query('UPDATE corridors SET fee_percent = $2 WHERE id = $1', [
        gbp,
        before.rows[0]!.fee_percent,
      ]);
    }
  });

  it('replays a quote request with the same Idempotency-Key', async () => {
    const first = await api.post(
      QUOTES,
      { corridor_id: USD_EUR, source_amount: '25.00' },
      { 'idempotency-key': 'q-1' },
    );
    const again = await api.post(
      QUOTES,
      { corridor_id: USD_EUR, source_amount: '25.00' },
      { 'idempotency-key': 'q-1' },
    );
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.json().id, first.json().id);
  });

  it('never creates a second quote for a key whose first request committed and lost its response', async () => {
    const body = { corridor_id: USD_EUR, source_amount: '26.00' };
    const first = await api.post(QUOTES, body, { 'idempotency-key': 'q-lost' });
    assert.equal(first.statusCode, 201, first.body);
    // As if the process died between the quote's commit and storing its response.
    await t.db.pool.query(
      `UPDATE idempotency_keys SET state = 'running', response_status = NULL, response_body = NULL,
         owner = gen_random_uuid(), locked_until = now() - interval '1 second' WHERE key = 'q-lost'`,
    );
    const retry = await api.post(QUOTES, body, { 'idempotency-key': 'q-lost' });
    assert.equal(retry.statusCode, 409, retry.body);
    assert.equal(errorBody(retry.body).code, 'IDEMPOTENCY_KEY_IN_USE');
    const quotes = await t.db.pool.query<{ id: string }>(
      "SELECT id FROM quotes WHERE organisation_id = (SELECT organisation_id FROM quotes WHERE id = $1) AND source_amount = '26.00'",
      [first.json().id],
    );
    assert.deepEqual(
      quotes.rows.map((row) => row.id),
      [first.json().id],
    );
  });
});

describe('quotes without a fresh rate (D15)', () => {
  it('answers 400 RATE_UNAVAILABLE in production without rates', async () => {
    const t = await startTestApp({ env: { APP_ENV: 'production', AUTH_REALM: 'sandbox' } });
    try {
      const created = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/corridors',
        headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
        payload: JSON.stringify({
          source_currency: 'USD',
          destination_country: 'DE',
          destination_currency: 'EUR',
          payout_method: 'bank_account',
          min_amount: '1.00',
          max_amount: '1000.00',
          fee_fixed: '1.00',
          fee_percent: '0.50',
          fx_markup_percent: '0.35',
          estimated_delivery_seconds: 3600,
        }),
      });
      assert.equal(created.statusCode, 201, created.body);
      const api = apiClient(t, await t.tenant());
      const refused = await api.post(QUOTES, { corridor_id: created.json().id, source_amount: '10.00' });
      assert.equal(refused.statusCode, 400);
      assert.equal(errorBody(refused.body).code, 'RATE_UNAVAILABLE');
    } finally {
      await t.close();
    }
  });
});
