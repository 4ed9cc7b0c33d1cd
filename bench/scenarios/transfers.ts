// Scenario transfers: balance-funded transfers from quote to completed (D20) through the real processes —
// an `auth`, an `api` and a `worker` — on the sandbox rail with no step delay, each transfer.completed event
// delivered to one subscription on an HTTPS receiver. Reports completed transfers per second (the last
// delivery's arrival counts) and the latency of confirm as the client sees it.
import { insertOrganisation } from '../../src/admin/repository.ts';
import * as ledger from '../../src/balances/ledger.ts';
import { ledgerViolations } from '../../src/balances/repository.ts';
import { withTransaction } from '../../src/db/pool.ts';
import { newUuid } from '../../src/platform/ids.ts';
import { Decimal } from '../../src/platform/money.ts';
import { startReceiver } from '../lib/receiver.ts';
import { rssMetric, type Scenario, type ScenarioResult, workerEnv } from '../lib/scenario.ts';
import { createApiClient, createSubscription, fetchToken } from '../lib/seed.ts';
import { distribution } from '../lib/stats.ts';
import { now, round, waitUntil } from '../lib/util.ts';

const CLIENTS = 16;
const USD_EUR = 'cor_0000SANDBX0000000000000001';

export const transfers: Scenario = {
  name: 'transfers',
  title: 'Balance-funded transfers from quote to completed, events delivered (auth + api + worker)',
  measures:
    'BENCH_TRANSFERS transfers (3,000 by default) from 16 concurrent clients over HTTP: POST quote, POST ' +
    'confirm (balance funding: the debit, the re-screening, the payout leg and transfer.created in one ' +
    'transaction), then the worker hands each payout to the sandbox rail (no step delay), completes it and ' +
    'the transfer, and delivers transfer.completed to one subscription on an HTTPS receiver. Completed ' +
    'transfers per second run from the first quote to the last delivery. Leaves out TLS to the API, deposits ' +
    'and several API or worker processes.',
  timeoutMs: (settings) => 240_000 + settings.transfers * 100,
  async run(context): Promise<ScenarioResult> {
    const { settings, signal } = context;
    const count = settings.transfers;
    const server = await context.server();
    const db = await server.createDatabase('transfers', 4);
    context.defer(() => db.drop());
    const organisationId = (await insertOrganisation(db.pool, newUuid(), 'Bench transfers')).id;
    await withTransaction(db.pool, (tx) =>
      ledger.post(tx, {
        type: 'top_up',
        resourceType: null,
        resourceId: null,
        postings: [
          { account: ledger.available(organisationId, 'USD'), amount: new Decimal('1000000000.00') },
          { account: ledger.platform('sandbox_funding', 'USD'), amount: new Decimal('-1000000000.00') },
        ],
      }),
    );
    const secrets = new Map<string, string>();
    const receiver = await startReceiver({
      certificate: context.certificate(),
      secretFor: (path) => secrets.get(path),
      verifyPerPath: 5,
    });
    context.defer(() => receiver.close());
    const subscription = await createSubscription(db.pool, context.encryptionKey, {
      organisationId,
      endpointUrl: `${receiver.origin}/transfers`,
      eventTypeCodes: ['transfer.completed'],
    });
    secrets.set('/transfers', subscription.secret);
    const client = await createApiClient(db.pool, context.encryptionKey, organisationId);

    const env = {
      DATABASE_URL: db.url,
      RATE_LIMIT_MAX: '10000000',
      TOKEN_TTL_SECONDS: '3600',
      SANDBOX_STEP_DELAY_MS: '0',
    };
    const [auth, api, worker] = await Promise.all([
      context.startService('auth', env, 'auth'),
      context.startService('api', env, 'api'),
      context.startService('worker', workerEnv(context, db.url, env), 'worker'),
    ]);
    const token = await fetchToken(auth.url, client);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${api.url}${path}`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
      });
      const json = (await response.json()) as Record<string, unknown>;
      if (response.status !== 201)
        throw new Error(`${path}: HTTP ${response.status} ${JSON.stringify(json)}`);
      return json;
    };
    const beneficiary = await post('/api/v1/beneficiaries', {
      destination_country: 'DE',
      destination_currency: 'EUR',
      payout_method: 'bank_account',
      entity_type: 'business',
      name: 'Bench Supplier GmbH',
      address: { line1: 'Friedrichstrasse 1', city: 'Berlin', country: 'DE' },
      account: { iban: 'DE89370400440532013000' },
    });
    const beneficiaryId = String(beneficiary.id);

    context.log(`${count} transfers from ${CLIENTS} clients`);
    const quoteMs: number[] = [];
    const confirmMs: number[] = [];
    let next = 0;
    const started = now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < count && !signal.aborted) {
          next++;
          let at = now();
          const quote = await post('/api/v1/transfers/quotes', {
            corridor_id: USD_EUR,
            source_amount: '100.00',
          });
          quoteMs.push(now() - at);
          at = now();
          await post(`/api/v1/transfers/quotes/${String(quote.id)}/confirm`, {
            beneficiary_id: beneficiaryId,
            funding_method: 'balance',
          });
          confirmMs.push(now() - at);
        }
      }),
    );
    const confirmedAt = now();
    await waitUntil(`${count} transfer.completed deliveries`, () => receiver.unique >= count, {
      timeoutMs: 60_000 + count * 50,
      signal,
      intervalMs: 50,
      progress: () => `${receiver.unique} delivered`,
    });
    const seconds = (receiver.lastAck - started) / 1000;
    const perSecond = count / seconds;
    const problems = await ledgerViolations(db.pool);
    const completed = await db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM transfers WHERE status = 'completed'",
    );
    if (completed.rows[0]!.n !== count)
      problems.push(`${completed.rows[0]!.n} of ${count} transfers completed`);
    const confirm = distribution(confirmMs);
    const quote = distribution(quoteMs);
    return {
      metrics: [
        {
          name: 'completed transfers/s',
          value: round(perSecond),
          unit: '/s',
          target: '≥ 300/s',
          pass: perSecond >= 300,
        },
        { name: 'confirm p50', value: confirm.p50, unit: 'ms' },
        { name: 'confirm p99', value: confirm.p99, unit: 'ms', target: '≤ 50 ms', pass: confirm.p99 <= 50 },
        { name: 'quote p50', value: quote.p50, unit: 'ms' },
        { name: 'quote p99', value: quote.p99, unit: 'ms' },
        rssMetric('peak RSS, api', api.peakRssMb()),
        rssMetric('peak RSS, worker', worker.peakRssMb()),
      ],
      details: {
        transfers: count,
        clients: CLIENTS,
        confirmPhaseSeconds: round((confirmedAt - started) / 1000),
        lastDeliverySeconds: round(seconds),
        confirm,
        quote,
        deliveries: receiver.unique,
      },
      notes: [],
      problems,
    };
  },
};
