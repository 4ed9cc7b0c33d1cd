// Scenario transfers: balance-funded transfers from quote to completed (D20) through the real processes —
// an `auth`, an `api` and a `worker` — on the sandbox rail with no step delay, each transfer.completed event
// delivered to one subscription on an HTTPS receiver. Reports completed transfers per second (the last
// delivery's arrival counts) and the latency of confirm as the client sees it.
import { Pool as UndiciPool } from 'undici';
import { insertOrganisation } from '../../src/admin/repository.ts';
import * as ledger from '../../src/balances/ledger.ts';
import { ledgerViolations } from '../../src/balances/repository.ts';
import { type Pool, withTransaction } from '../../src/db/pool.ts';
import { newUuid } from '../../src/platform/ids.ts';
import { Decimal } from '../../src/platform/money.ts';
import { cpuPerItemByProcess, cpuSnapshot } from '../lib/cpu.ts';
import { analyzeChangedTables } from '../lib/database.ts';
import { startReceiver } from '../lib/receiver.ts';
import { rssMetric, type Scenario, type ScenarioResult, workerEnv } from '../lib/scenario.ts';
import { createApiClient, createSubscription, fetchToken } from '../lib/seed.ts';
import { distribution } from '../lib/stats.ts';
import { now, round, waitUntil } from '../lib/util.ts';

const CLIENTS = 16;
/** Transfers sent before the measured ones (at most as many as those). */
const WARMUP_TRANSFERS = 500;
/** How often the run refreshes the planner's statistics, as autovacuum would (see below). */
const ANALYZE_EVERY_MS = 5_000;
const USD_EUR = 'cor_0000SANDBX0000000000000001';

export const transfers: Scenario = {
  name: 'transfers',
  title: 'Balance-funded transfers from quote to completed, events delivered (auth + api + worker)',
  measures:
    'BENCH_TRANSFERS transfers (3,000 by default, after 500 unmeasured warm-up transfers; the tables ' +
    'autovacuum would analyze are analyzed then and every 5 s, as in a deployed database) from 16 concurrent clients over HTTP: POST quote, POST ' +
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
    const secrets = new Map<string, string>();
    const receiver = await startReceiver({
      certificate: context.certificate(),
      secretFor: (path) => secrets.get(path),
      verifyPerPath: 5,
    });
    context.defer(() => receiver.close());
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
    const senders = await Promise.all(
      Array.from({ length: settings.transferOrganisations }, (_, index) =>
        seedSender(db.pool, context.encryptionKey, index, {
          auth: auth.url,
          api: api.url,
          receiver: receiver.origin,
          onSecret: (path, secret) => secrets.set(path, secret),
        }),
      ),
    );
    for (const sender of senders) context.defer(() => sender.close());
    const warmup = Math.min(WARMUP_TRANSFERS, count);
    context.log(
      `${warmup} warm-up and ${count} measured transfers from ${CLIENTS} clients of ${senders.length} organisation(s)`,
    );
    /** Sends `total` transfers from the clients; returns the quote and confirm latencies. */
    const send = async (total: number) => {
      const quoteMs: number[] = [];
      const confirmMs: number[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, clientIndex) => {
          const sender = senders[clientIndex % senders.length]!;
          while (next < total && !signal.aborted) {
            next++;
            let at = now();
            const quote = await sender.post('/api/v1/transfers/quotes', {
              corridor_id: USD_EUR,
              source_amount: '100.00',
            });
            quoteMs.push(now() - at);
            at = now();
            await sender.post(`/api/v1/transfers/quotes/${String(quote.id)}/confirm`, {
              beneficiary_id: sender.beneficiaryId,
              funding_method: 'balance',
            });
            confirmMs.push(now() - at);
          }
        }),
      );
      return { quoteMs, confirmMs };
    };
    const delivered = (total: number) =>
      waitUntil(`${total} transfer.completed deliveries`, () => receiver.unique >= total, {
        timeoutMs: 60_000 + total * 50,
        signal,
        intervalMs: 50,
        progress: () => `${receiver.unique} delivered`,
      });
    // The warm-up runs the code paths once through V8's optimising compilers and fills the tables. The
    // planner's statistics then follow the tables as autovacuum keeps them in a deployed database, where
    // it analyzes a table this busy at least once a minute (autovacuum_naptime): ANALYZE the tables
    // autovacuum would now and every few seconds of the run, which is shorter than a minute. Without it
    // every plan keeps assuming the tables as small as they were when it was made (a fresh database's are
    // empty), and scans queue tables such as jobs and webhook_deliveries whole, dead rows and all.
    await send(warmup);
    await delivered(warmup);
    await analyzeChangedTables(db.pool);
    const analyzing = setInterval(() => {
      analyzeChangedTables(db.pool).catch((error: unknown) =>
        context.log(`ANALYZE failed: ${String(error)}`),
      );
    }, ANALYZE_EVERY_MS);
    context.defer(() => clearInterval(analyzing));
    const pids = [api.pid, worker.pid, auth.pid];
    const cpuBefore = await cpuSnapshot(pids, db.pool);
    const started = now();
    const { quoteMs, confirmMs } = await send(count);
    const confirmedAt = now();
    await delivered(warmup + count);
    clearInterval(analyzing);
    const cpuPerTransfer = cpuPerItemByProcess(cpuBefore, await cpuSnapshot(pids, db.pool), count, [
      'api',
      'worker',
      'auth',
    ]);
    const seconds = (receiver.lastAck - started) / 1000;
    const perSecond = count / seconds;
    const problems = await ledgerViolations(db.pool);
    const completed = await db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM transfers WHERE status = 'completed'",
    );
    if (completed.rows[0]!.n !== warmup + count)
      problems.push(`${completed.rows[0]!.n} of ${warmup + count} transfers completed`);
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
        ...Object.entries(cpuPerTransfer).map(([process, ms]) => ({
          name: `CPU ms per transfer: ${process}`,
          value: ms ?? null,
          unit: 'ms',
        })),
        rssMetric('peak RSS, api', api.peakRssMb()),
        rssMetric('peak RSS, worker', worker.peakRssMb()),
      ],
      details: {
        transfers: count,
        warmupTransfers: warmup,
        clients: CLIENTS,
        organisations: senders.length,
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

interface Sender {
  beneficiaryId: string;
  post(path: string, body: unknown): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** An organisation with a funded USD balance, a subscription to transfer.completed, a token and a beneficiary. */
async function seedSender(
  pool: Pool,
  encryptionKey: string,
  index: number,
  urls: { auth: string; api: string; receiver: string; onSecret: (path: string, secret: string) => void },
): Promise<Sender> {
  const organisationId = (await insertOrganisation(pool, newUuid(), `Bench transfers ${index}`)).id;
  await withTransaction(pool, (tx) =>
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
  const path = `/transfers-${index}`;
  const subscription = await createSubscription(pool, encryptionKey, {
    organisationId,
    endpointUrl: `${urls.receiver}${path}`,
    eventTypeCodes: ['transfer.completed'],
  });
  urls.onSecret(path, subscription.secret);
  const token = await fetchToken(urls.auth, await createApiClient(pool, encryptionKey, organisationId));
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  // undici's request on kept-alive connections: the clients share the cores with the service, and
  // fetch's extra layers (WHATWG streams and headers) cost them about a millisecond per transfer.
  const connections = new UndiciPool(urls.api, { connections: CLIENTS });
  const post = async (route: string, body: unknown) => {
    const response = await connections.request({
      path: route,
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    const json = (await response.body.json()) as Record<string, unknown>;
    if (response.statusCode !== 201)
      throw new Error(`${route}: HTTP ${response.statusCode} ${JSON.stringify(json)}`);
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
  return { beneficiaryId: String(beneficiary.id), post, close: () => connections.close() };
}
