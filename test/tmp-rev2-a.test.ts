// Scratch review tests (to be deleted).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ledgerViolations } from '../src/balances/repository.ts';
import type { JobRunner } from '../src/platform/jobs/runner.ts';
import { bodyOf, createBeneficiary } from './beneficiaries/fixtures.ts';
import { startTestApp, TEST_ADMIN_KEY, type TestApp } from './helpers/app.ts';
import { type ApiClient, apiClient } from './helpers/http.ts';
import { waitUntil } from './helpers/wait.ts';
import { eventsOf, PAYOUTS, runJobs } from './payments/fixtures.ts';
import { activeSubscription } from './webhooks/fixtures.ts';

const USD_EUR = 'cor_0000SANDBX0000000000000001';

describe('rev2 scratch', () => {
  let t: TestApp;
  let jobs: JobRunner | undefined;
  before(async () => {
    t = await startTestApp({ env: { SANDBOX_STEP_DELAY_MS: '0' } });
  });
  after(async () => {
    await jobs?.stop();
    await t.close();
  });
  const startJobs = () => {
    jobs ??= runJobs(t);
  };
  const stopJobs = async () => {
    await jobs?.stop();
    jobs = undefined;
  };
  const ok = async (request: Promise<{ statusCode: number; body: string }>, status = 200) => {
    const response = await request;
    assert.equal(response.statusCode, status, response.body);
    return JSON.parse(response.body) as Record<string, any>;
  };
  const admin = (method: 'GET' | 'POST', url: string, body?: unknown) =>
    t.app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${TEST_ADMIN_KEY}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
  const newBeneficiary = async (api: ApiClient, extra: Record<string, unknown> = {}) => {
    const created = await createBeneficiary(api, bodyOf('DE', { name: 'Ada Lovelace', ...extra }));
    return created.id as string;
  };
  const rename = async (api: ApiClient, id: string, name = 'Paula Sanctioned') => {
    const renamed = await ok(api.patch(`/api/v1/beneficiaries/${id}`, { name }));
    return renamed as { status: string; screening_id: string };
  };
  const review = (api: ApiClient, screeningId: string, decision: 'cleared' | 'confirmed_match') =>
    ok(api.post(`/api/v1/sandbox/screenings/${screeningId}/review`, { decision }));
  const payout = async (api: ApiClient, id: string) => ok(api.get(`${PAYOUTS}/${id}`));
  const jobOf = async (id: string) =>
    (await t.db.pool.query('SELECT 1 FROM jobs WHERE dedupe_key = $1', [`payments.hand_off:${id}`])).rowCount;
  const subscribe = (api: ApiClient) =>
    activeSubscription(api, {
      event_type_codes: [
        'payout.created',
        'payout.processing',
        'payout.completed',
        'payout.failed',
        'transfer.created',
        'transfer.processing',
        'transfer.completed',
        'transfer.refunding',
        'transfer.refunded',
        'transfer.rejected',
      ],
    });

  it('A: a payout whose beneficiary is deleted while its new name waits is paid before the review', async () => {
    await stopJobs();
    const api = apiClient(t, await t.tenant());
    const ben = await newBeneficiary(api);
    const p = await ok(api.post(PAYOUTS, { beneficiary_id: ben, currency: 'EUR', amount: '10.00' }), 201);
    const renamed = await rename(api, ben);
    console.log('A renamed status', renamed.status);
    console.log('A deleted status', (await ok(api.del(`/api/v1/beneficiaries/${ben}`))).status);
    startJobs();
    await waitUntil(async () => (await payout(api, p.id)).status !== 'pending', 'moved', 10_000);
    await waitUntil(async () => (await payout(api, p.id)).status === 'completed', 'completed', 10_000);
    console.log('A payout before review:', (await payout(api, p.id)).status);
    await review(api, renamed.screening_id, 'confirmed_match');
    console.log('A payout after confirmed review:', (await payout(api, p.id)).status);
  });

  it('A2: a transfer funded after its beneficiary was deleted while in review pays before the review', async () => {
    startJobs();
    const api = apiClient(t, await t.tenant());
    const ben = await newBeneficiary(api);
    const quote = await ok(api.post('/api/v1/transfers/quotes', { corridor_id: USD_EUR, source_amount: '100.00' }), 201);
    const trf = await ok(
      api.post(`/api/v1/transfers/quotes/${quote.id}/confirm`, { beneficiary_id: ben, funding_method: 'bank_transfer' }),
      201,
    );
    const renamed = await rename(api, ben);
    await ok(api.del(`/api/v1/beneficiaries/${ben}`));
    const funded = await ok(api.post(`/api/v1/sandbox/transfers/${trf.id}/fund`, {}));
    console.log('A2 funded', funded.status);
    await waitUntil(
      async () => (await ok(api.get(`/api/v1/transfers/${trf.id}`))).status === 'completed',
      'completed',
      10_000,
    );
    console.log('A2 transfer before review:', (await ok(api.get(`/api/v1/transfers/${trf.id}`))).status);
    await review(api, renamed.screening_id, 'confirmed_match');
  });

  it('B: a held payout whose beneficiary is renamed back to a clean name stays pending with no job', async () => {
    await stopJobs();
    const api = apiClient(t, await t.tenant());
    const ben = await newBeneficiary(api);
    const p = await ok(api.post(PAYOUTS, { beneficiary_id: ben, currency: 'EUR', amount: '10.00' }), 201);
    console.log('B clock', new Date().toISOString(), JSON.stringify((await t.db.pool.query('SELECT now(), clock_timestamp()')).rows), JSON.stringify((await t.db.pool.query('SELECT run_at FROM jobs WHERE dedupe_key = $1', [`payments.hand_off:${p.id}`])).rows));
    const renamed = await rename(api, ben);
    startJobs();
    await waitUntil(async () => (await jobOf(p.id)) === 0, 'hand-off ran', 10_000).catch(async (e) => {
      console.log('B activity', JSON.stringify((await t.db.pool.query("SELECT state, wait_event_type, wait_event, left(query,200) q, now() FROM pg_stat_activity WHERE datname = current_database()")).rows));
      console.log('B job row', JSON.stringify((await t.db.pool.query('SELECT kind, attempts, last_error, run_at FROM jobs WHERE dedupe_key = $1', [`payments.hand_off:${p.id}`])).rows));
      throw e;
    });
    const back = await rename(api, ben, 'Ada Lovelace');
    console.log('B beneficiary after clean rename:', back.status);
    await new Promise((r) => setTimeout(r, 2000));
    console.log('B payout 2 s later:', (await payout(api, p.id)).status, 'jobs:', await jobOf(p.id));
    // A new payout to the same (active) beneficiary goes through meanwhile.
    const p2 = await ok(api.post(PAYOUTS, { beneficiary_id: ben, currency: 'EUR', amount: '11.00' }), 201);
    await waitUntil(async () => (await payout(api, p2.id)).status === 'completed', 'p2 completed', 10_000);
    console.log('B newer payout:', (await payout(api, p2.id)).status, 'held one:', (await payout(api, p.id)).status);
    // Only a review of the stale screening (the name it no longer has) releases it, whatever the decision.
    await review(api, renamed.screening_id, 'confirmed_match');
    await waitUntil(async () => (await payout(api, p.id)).status === 'completed', 'completed', 10_000).catch(() => {});
    console.log('B held payout after stale screening CONFIRMED:', (await payout(api, p.id)).status);
  });

  it('C: a confirmed match of a transfer screening (the beneficiary name) leaves the beneficiary payable', async () => {
    startJobs();
    const api = apiClient(t, await t.tenant());
    const created = await createBeneficiary(api, bodyOf('DE', { name: 'Lookalike Person' }));
    console.log('C created', created.status);
    await review(api, created.screening_id as string, 'cleared');
    const quote = await ok(api.post('/api/v1/transfers/quotes', { corridor_id: USD_EUR, source_amount: '100.00' }), 201);
    const trf = await ok(
      api.post(`/api/v1/transfers/quotes/${quote.id}/confirm`, { beneficiary_id: created.id, funding_method: 'bank_transfer' }),
      201,
    );
    console.log('C transfer', trf.status);
    await review(api, trf.screening_id, 'confirmed_match');
    console.log('C transfer after confirm', (await ok(api.get(`/api/v1/transfers/${trf.id}`))).status);
    console.log('C beneficiary', (await ok(api.get(`/api/v1/beneficiaries/${created.id}`))).status);
    const p = await ok(api.post(PAYOUTS, { beneficiary_id: created.id, currency: 'EUR', amount: '10.00' }), 201);
    await waitUntil(async () => (await payout(api, p.id)).status === 'completed', 'completed', 10_000);
    console.log('C payout to the confirmed name:', (await payout(api, p.id)).status);
  });

  it('D: manual-style rail: a blocked-then-deleted beneficiary shows deleted to the operator, complete accepted', async () => {
    startJobs();
    const api = apiClient(t, await t.tenant());
    const ben = await newBeneficiary(api, { account: { iban: 'DE95370400440532014444' } });
    const p = await ok(api.post(PAYOUTS, { beneficiary_id: ben, currency: 'EUR', amount: '10.00' }), 201);
    await waitUntil(async () => (await payout(api, p.id)).status === 'processing', 'processing', 10_000);
    const renamed = await rename(api, ben);
    await review(api, renamed.screening_id, 'confirmed_match');
    await ok(api.del(`/api/v1/beneficiaries/${ben}`));
    const dest = await admin('GET', `/admin/v1/payouts/${p.id}/destination`);
    console.log('D destination', dest.statusCode, JSON.stringify(dest.json().beneficiary.status), Object.keys(dest.json().beneficiary));
    const done = await admin('POST', `/admin/v1/payouts/${p.id}/complete`);
    console.log('D complete', done.statusCode, done.json().status);
  });

  it('E: events of a compliance failure at hand-off and the refund', async () => {
    await stopJobs();
    const tenant = await t.tenant();
    const api = apiClient(t, tenant);
    await subscribe(api);
    const ben = await newBeneficiary(api);
    const quote = await ok(api.post('/api/v1/transfers/quotes', { corridor_id: USD_EUR, source_amount: '100.00' }), 201);
    const trf = await ok(
      api.post(`/api/v1/transfers/quotes/${quote.id}/confirm`, { beneficiary_id: ben, funding_method: 'balance' }),
      201,
    );
    console.log('E transfer', trf.status, trf.payout?.status);
    const renamed = await rename(api, ben);
    await review(api, renamed.screening_id, 'confirmed_match');
    startJobs();
    await waitUntil(
      async () => (await ok(api.get(`/api/v1/transfers/${trf.id}`))).status === 'refunded',
      'refunded',
      10_000,
    );
    console.log('E payout events', JSON.stringify(await eventsOf(t, trf.payout.id)));
    console.log('E transfer events', JSON.stringify(await eventsOf(t, trf.id)));
    console.log('E ledger', JSON.stringify(await ledgerViolations(t.db.pool)));
  });
});
