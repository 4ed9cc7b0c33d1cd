// Scenario ledger: balance postings per second through the ledger's API (D21), in this process against
// PostgreSQL, first on one hot balance, then spread over 100 organisations; the invariants of D21 are
// re-checked over the whole ledger at the end.
import { insertOrganisation } from '../../src/admin/repository.ts';
import * as ledger from '../../src/balances/ledger.ts';
import { ledgerViolations } from '../../src/balances/repository.ts';
import { type Pool, withTransaction } from '../../src/db/pool.ts';
import { transactionGroups } from '../../src/db/transaction-groups.ts';
import { newUuid } from '../../src/platform/ids.ts';
import { Decimal } from '../../src/platform/money.ts';
import type { Scenario, ScenarioResult } from '../lib/scenario.ts';
import { distribution } from '../lib/stats.ts';
import { now, round } from '../lib/util.ts';

/** Concurrent posting connections: what several API processes and workers would hold. */
const CONNECTIONS = 16;
const HOT_TARGET = 1_000;

function fund(pool: Pool, organisationId: string, amount: string) {
  return withTransaction(pool, (tx) =>
    ledger.post(tx, {
      type: 'top_up',
      resourceType: null,
      resourceId: null,
      postings: [
        { account: ledger.available(organisationId, 'USD'), amount: new Decimal(amount) },
        { account: ledger.platform('sandbox_funding', 'USD'), amount: new Decimal(amount).negated() },
      ],
    }),
  );
}

/**
 * One guarded debit of the available balance to a rail, the shape of a payout or a balance-funded
 * transfer: `grouped`, as the services post (transactions of one organisation share commits), or each in
 * a transaction of its own.
 */
function debit(pool: Pool, organisationId: string, grouped: boolean) {
  const amount = new Decimal('1.00');
  const work = (tx: Parameters<typeof ledger.post>[0]) =>
    ledger.post(tx, {
      type: 'payout',
      resourceType: null,
      resourceId: null,
      postings: [
        { account: ledger.available(organisationId, 'USD'), amount: amount.negated() },
        { account: ledger.platform('rail:bench', 'USD'), amount },
      ],
    });
  return grouped ? transactionGroups(pool).run(organisationId, work) : withTransaction(pool, work);
}

async function drive(
  pool: Pool,
  seconds: number,
  pick: (n: number) => string,
  grouped: boolean,
  signal: AbortSignal,
) {
  const latencies: number[] = [];
  let posted = 0;
  const started = now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (now() < until && !signal.aborted) {
        const at = now();
        await debit(pool, pick(posted++), grouped);
        latencies.push(now() - at);
      }
    }),
  );
  const elapsed = now() - started;
  return {
    posted: latencies.length,
    perSecond: (latencies.length * 1000) / elapsed,
    latency: distribution(latencies),
  };
}

export const ledgerScenario: Scenario = {
  name: 'ledger',
  title: 'Ledger postings per second: one hot balance, then 100 organisations (16 concurrent posters)',
  measures:
    'Guarded debits through the ledger API (one ledger_post call, two entries, each in a savepoint of its ' +
    'own) from 16 concurrent posters of this process, as the services post: transactions of one ' +
    'organisation share commits (src/db/transaction-groups.ts). All on one organisation balance, then the ' +
    'same with one transaction per posting (each waits for the previous commit to flush under the row ' +
    'lock), then spread over 100 organisations. The D21 invariants are re-checked over the whole ledger at ' +
    'the end. Leaves out HTTP (the routes that post add their own cost) and events.',
  timeoutMs: (settings) => 120_000 + settings.apiDuration * 3 * 1000 * 3,
  async run(context): Promise<ScenarioResult> {
    const { settings, signal } = context;
    const seconds = settings.apiDuration;
    const server = await context.server();
    const db = await server.createDatabase('ledger', CONNECTIONS + 2);
    context.defer(() => db.drop());

    const hot = (await insertOrganisation(db.pool, newUuid(), 'Bench hot balance')).id;
    await fund(db.pool, hot, '100000000.00');
    const spread: string[] = [];
    for (let index = 0; index < 100; index++) {
      const id = (await insertOrganisation(db.pool, newUuid(), `Bench ${index}`)).id;
      await fund(db.pool, id, '1000000.00');
      spread.push(id);
    }

    context.log(`one hot balance for ${seconds} s`);
    const hotRun = await drive(db.pool, seconds, () => hot, true, signal);
    context.log(`one hot balance, one transaction per posting, for ${seconds} s`);
    const aloneRun = await drive(db.pool, seconds, () => hot, false, signal);
    context.log(`100 organisations for ${seconds} s`);
    const spreadRun = await drive(db.pool, seconds, (n) => spread[n % spread.length]!, true, signal);

    context.log('re-checking the ledger invariants');
    const problems = await ledgerViolations(db.pool);
    const entries = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM ledger_entries');
    const expectedEntries = 2 * (1 + spread.length + hotRun.posted + aloneRun.posted + spreadRun.posted);
    if (entries.rows[0]!.n !== expectedEntries) {
      problems.push(`ledger holds ${entries.rows[0]!.n} entries, the run posted ${expectedEntries}`);
    }
    const hotBalance = await db.pool.query<{ balance: string }>(
      "SELECT balance::text FROM ledger_accounts WHERE organisation_id = $1 AND name = 'available'",
      [hot],
    );
    const expectedHot = new Decimal('100000000.00').minus(hotRun.posted + aloneRun.posted).toFixed(2);
    if (hotBalance.rows[0]!.balance !== expectedHot) {
      problems.push(`hot balance is ${hotBalance.rows[0]!.balance}, expected ${expectedHot}`);
    }

    return {
      metrics: [
        {
          name: 'postings/s, one hot balance',
          value: round(hotRun.perSecond),
          unit: '/s',
          target: `≥ ${HOT_TARGET.toLocaleString('en')}/s`,
          pass: hotRun.perSecond >= HOT_TARGET,
        },
        { name: 'posting p50, hot', value: hotRun.latency.p50, unit: 'ms' },
        { name: 'posting p99, hot', value: hotRun.latency.p99, unit: 'ms' },
        { name: 'postings/s, hot, one transaction each', value: round(aloneRun.perSecond), unit: '/s' },
        { name: 'postings/s, 100 organisations', value: round(spreadRun.perSecond), unit: '/s' },
        { name: 'posting p50, spread', value: spreadRun.latency.p50, unit: 'ms' },
        { name: 'posting p99, spread', value: spreadRun.latency.p99, unit: 'ms' },
        { name: 'invariant violations', value: problems.length, unit: '' },
      ],
      details: {
        connections: CONNECTIONS,
        seconds,
        hot: hotRun,
        hotAlone: aloneRun,
        spread: spreadRun,
        entries: entries.rows[0]!.n,
      },
      notes: [],
      problems,
    };
  },
};
