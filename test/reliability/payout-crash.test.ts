// A worker killed with SIGKILL while payouts are being handed to their rail (D21): after a restart every
// payout reaches a final state, none was handed over twice (one hand-off row, one processing event and one
// rail posting each), and the ledger invariants hold.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ledgerViolations } from '../../src/balances/repository.ts';
import { startTestApp, TEST_ENCRYPTION_KEY, type TestApp } from '../helpers/app.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { type HttpsReceiver, startHttpsReceiver, testCertificate } from '../helpers/https-receiver.ts';
import { type ServiceProcess, startService } from '../helpers/process.ts';
import { waitUntil } from '../helpers/wait.ts';
import { activeSubscription, client } from '../webhooks/fixtures.ts';

const PAYOUTS = 200;

describe('payouts across a worker killed mid-hand-off (D21)', () => {
  let t: TestApp;
  let api: ApiClient;
  // The events' subscription is answered, so that it is never auto-disabled by failed deliveries: the
  // events are this test's record of each payout's move to processing.
  let receiver: HttpsReceiver;
  const workers: ServiceProcess[] = [];
  before(async () => {
    t = await startTestApp({ env: { PAYMENT_CONNECTOR: 'sandbox' } });
    api = apiClient(t, await t.tenant());
    receiver = await startHttpsReceiver();
  });
  after(async () => {
    for (const worker of workers) await worker.stop('SIGKILL').catch(() => {});
    await receiver.close();
    await t.close();
  });

  const workerEnv = () => ({
    DATABASE_URL: t.db.url,
    APP_ENV: 'sandbox',
    SECRETS_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    SANDBOX_STEP_DELAY_MS: '0',
    JOB_CONCURRENCY: '4',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    NODE_EXTRA_CA_CERTS: testCertificate().certPath,
  });
  const count = async (sql: string): Promise<number> =>
    (await t.db.pool.query<{ n: number }>(sql)).rows[0]!.n;

  it('hands every payout over exactly once and settles them all', async () => {
    const subscription = await activeSubscription(client(t, api.tenant), {
      endpoint_url: `${receiver.origin}/payouts`,
      event_type_codes: ['payout.processing'],
    });
    const beneficiary = await api.post('/api/v1/beneficiaries', {
      destination_country: 'DE',
      destination_currency: 'EUR',
      payout_method: 'bank_account',
      entity_type: 'individual',
      name: 'Anna Schmidt',
      address: { line1: 'Unter den Linden 1', city: 'Berlin', country: 'DE' },
      account: { iban: 'DE89370400440532013000' },
    });
    assert.equal(beneficiary.statusCode, 201, beneficiary.body);
    const beneficiaryId = beneficiary.json().id as string;
    for (let index = 0; index < PAYOUTS; index++) {
      const response = await api.post('/api/v1/payments/payouts', {
        beneficiary_id: beneficiaryId,
        currency: 'EUR',
        amount: '1.00',
      });
      assert.equal(response.statusCode, 201, response.body);
    }
    // A worker starts handing them over and is killed mid-way.
    const first = await startService('worker', workerEnv());
    workers.push(first);
    await waitUntil(
      async () => (await count('SELECT count(*)::int AS n FROM payout_hand_offs')) >= 10,
      'condition',
      60_000,
    );
    await first.stop('SIGKILL');
    const handedBeforeKill = await count('SELECT count(*)::int AS n FROM payout_hand_offs');
    assert.ok(
      handedBeforeKill < PAYOUTS,
      `the kill came too late to test anything (${handedBeforeKill} handed off)`,
    );
    // Its successor finishes the work.
    const second = await startService('worker', workerEnv());
    workers.push(second);
    await waitUntil(
      async () =>
        (await count("SELECT count(*)::int AS n FROM payouts WHERE status = 'completed'")) === PAYOUTS,
      'every payout completed',
      120_000,
    );
    assert.equal(await count('SELECT count(*)::int AS n FROM payout_hand_offs'), PAYOUTS);
    assert.equal(
      await count(
        `SELECT count(*)::int AS n FROM (SELECT payout_id FROM payout_hand_offs GROUP BY 1 HAVING count(*) > 1) d`,
      ),
      0,
    );
    // One move to processing and one rail posting per payout: nothing was done twice.
    assert.equal(
      await count(`SELECT count(*)::int AS n FROM (SELECT source_object_id FROM webhook_events
         WHERE event_type_code = 'payout.processing' GROUP BY 1 HAVING count(*) = 1) d`),
      PAYOUTS,
    );
    assert.equal(
      await count(`SELECT count(*)::int AS n FROM (
         SELECT e.resource_id FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id
         WHERE a.name = 'rail:sandbox' GROUP BY e.resource_id HAVING count(*) <> 1) d`),
      0,
    );
    assert.equal(
      await count(`SELECT count(*)::int AS n FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id
         WHERE a.name = 'rail:sandbox'`),
      PAYOUTS,
    );
    assert.equal(await count('SELECT count(*)::int AS n FROM jobs WHERE kind LIKE $$payments.%$$'), 0);
    assert.deepEqual(await ledgerViolations(t.db.pool), []);
    const status = await t.db.pool.query('SELECT status FROM webhook_subscriptions WHERE id = $1', [
      subscription.id,
    ]);
    assert.equal(status.rows[0].status, 'active', 'the subscription took every event');
    const eur = (
      (await api.get('/api/v1/balances')).json() as { currency: string; available: string; held: string }[]
    ).find((entry) => entry.currency === 'EUR');
    assert.deepEqual([eur?.available, eur?.held], ['999800.00', '0.00']);
  });
});
