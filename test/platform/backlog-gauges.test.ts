// The backlogs a worker's /metrics reads from storage: durable timers due and failing, payouts waiting for
// their rail, screenings waiting for review, the age of the FX rates (docs/operator/running.md, "Logs and
// metrics").
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { workerGauges } from '../../src/platform/jobs/runner.ts';
import { Metrics } from '../../src/platform/metrics.ts';
import { startTestApp, TEST_ADMIN_KEY, TEST_ENCRYPTION_KEY, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { apiClient } from '../helpers/http.ts';
import { type ServiceProcess, startService } from '../helpers/process.ts';
import { waitUntil } from '../helpers/wait.ts';
import {
  beneficiary,
  createBeneficiaryTable,
  PAYOUTS,
  runJobs,
  testBeneficiaries,
} from '../payments/fixtures.ts';
import { admin, importFixtures, SCREENINGS } from '../sanctions/fixtures.ts';

const KINDS = [
  'crypto.sandbox_confirm',
  'payments.expire_deposit',
  'payments.hand_off',
  'payments.sandbox_payout_step',
  'platform.purge_idempotency_keys',
  'transfers.expire_quote',
  'transfers.expire_transfer',
];

/** The samples of one metric in Prometheus text: label text (`kind="..."`) → value. */
function samples(text: string, metric: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const match of text.matchAll(new RegExp(`^${metric}(?:\\{([^}]*)\\})? (\\S+)$`, 'gm'))) {
    found.set(match[1] ?? '', Number(match[2]));
  }
  return found;
}

/** The gauges' reads are kept for a second: a scrape after a change waits that long. */
const afterTheCache = () => delay(1_100);

/** A test app whose /metrics shows what a worker process's does: the gauges read from storage. */
async function workerApp(options?: Parameters<typeof startTestApp>[0]): Promise<TestApp> {
  const t = await startTestApp(options);
  t.deps.metrics.addStorageGauges(workerGauges(t.deps), t.db.pool);
  return t;
}

const scrapeOf = async (t: TestApp): Promise<string> =>
  (await t.app.inject({ method: 'GET', url: '/metrics' })).body;

describe('durable timer gauges (jobs_due, jobs_due_oldest_seconds, jobs_retrying)', () => {
  let t: TestApp;
  before(async () => {
    t = await workerApp();
  });
  after(() => t.close());

  const scrape = () => scrapeOf(t);

  it('shows every kind, zeros included, before any job is due', async () => {
    const text = await scrape();
    const zeros = new Map(KINDS.map((kind) => [`kind="${kind}"`, 0]));
    assert.deepEqual(samples(text, 'jobs_due'), zeros);
    assert.deepEqual(samples(text, 'jobs_due_oldest_seconds'), zeros);
    assert.deepEqual(samples(text, 'jobs_retrying'), zeros);
    assert.match(text, /^# TYPE jobs_due gauge$/m);
  });

  it('counts due jobs with the age of the oldest, and failing ones, by kind', async () => {
    await t.db.pool.query(
      `INSERT INTO jobs (kind, payload, run_at, attempts, last_error) VALUES
         ('payments.hand_off', '{}', now() - interval '90 seconds', 0, NULL),
         ('payments.hand_off', '{}', now() - interval '5 seconds', 0, NULL),
         ('payments.hand_off', '{}', now() + interval '1 hour', 0, NULL),
         ('transfers.expire_quote', '{}', now() + interval '10 minutes', 3, 'quote store unreachable'),
         ('retired.kind', '{}', now() - interval '30 seconds', 1, 'no handler')`,
    );
    await afterTheCache();
    const text = await scrape();
    const due = samples(text, 'jobs_due');
    assert.equal(due.get('kind="payments.hand_off"'), 2, 'the job an hour ahead is not due');
    assert.equal(
      due.get('kind="transfers.expire_quote"'),
      0,
      'a failed job waiting for its retry is not due',
    );
    assert.equal(due.get('kind="retired.kind"'), 1, 'a kind no worker knows still shows');
    assert.deepEqual(
      [...due.keys()],
      [...KINDS, 'retired.kind'].sort().map((kind) => `kind="${kind}"`),
    );
    const oldest = samples(text, 'jobs_due_oldest_seconds');
    const handOff = oldest.get('kind="payments.hand_off"')!;
    assert.ok(handOff >= 90 && handOff < 120, `the oldest hand-off has been due 90 s, got ${handOff}`);
    assert.equal(oldest.get('kind="transfers.expire_quote"'), 0);
    const retrying = samples(text, 'jobs_retrying');
    assert.equal(retrying.get('kind="transfers.expire_quote"'), 1);
    assert.equal(retrying.get('kind="retired.kind"'), 1);
    assert.equal(retrying.get('kind="payments.hand_off"'), 0);

    await t.db.pool.query('DELETE FROM jobs');
    await afterTheCache();
    const emptied = await scrape();
    assert.equal(samples(emptied, 'jobs_due').get('kind="payments.hand_off"'), 0);
    assert.equal(samples(emptied, 'jobs_retrying').get('kind="transfers.expire_quote"'), 0);
    assert.equal(
      samples(emptied, 'jobs_due').has('kind="retired.kind"'),
      false,
      'a kind gone from storage goes',
    );
  });

  it('reads through the due and retrying indexes, not the whole table', async () => {
    await t.db.pool.query(
      `INSERT INTO jobs (kind, payload, run_at) SELECT 'payments.expire_deposit', '{}', now() + interval '1 day'
       FROM generate_series(1, 5000)`,
    );
    await t.db.pool.query('ANALYZE jobs');
    const plan = (
      await t.db.pool.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT kind FROM jobs WHERE run_at <= now() OR attempts > 0 GROUP BY kind`,
      )
    ).rows
      .map((row) => row['QUERY PLAN'])
      .join('\n');
    assert.match(plan, /jobs_due_idx/);
    assert.match(plan, /jobs_retrying_idx/);
    assert.doesNotMatch(plan, /Seq Scan/);
    await t.db.pool.query('DELETE FROM jobs');
  });

  it('answers a scrape with the last values while the database does not answer, and reads again after', async () => {
    await t.db.pool.query(
      "INSERT INTO jobs (kind, payload, run_at) VALUES ('payments.hand_off', '{}', now() - interval '1 minute')",
    );
    await afterTheCache();
    assert.equal(samples(await scrape(), 'jobs_due').get('kind="payments.hand_off"'), 1);
    // A migration holding jobs (ALTER TABLE, say): the backlog read waits for it like a database that
    // does not answer at all.
    const locker = await t.db.pool.connect();
    const backlogReads = async () =>
      (
        await t.db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE query LIKE '%AS "oldestDueSeconds"%' AND wait_event_type = 'Lock'`,
        )
      ).rows[0]!.n;
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE');
      await afterTheCache();
      for (let scrapes = 0; scrapes < 2; scrapes++) {
        const started = Date.now();
        const answer = await Promise.race([scrape(), delay(10_000, 'no answer')]);
        const took = Date.now() - started;
        assert.notEqual(answer, 'no answer', 'the scrape answers while jobs is locked');
        assert.ok(took >= 1_900 && took < 4_000, `the scrape waited for the read about 2 s, took ${took} ms`);
        assert.equal(samples(answer, 'jobs_due').get('kind="payments.hand_off"'), 1, 'the last value read');
        assert.equal(samples(answer, 'jobs_retrying').size, KINDS.length);
        assert.match(answer, /^http_requests_total\{/m, "the process's own metrics are there too");
      }
      assert.equal(await backlogReads(), 1, 'one read waits; later scrapes start none of their own');
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
    }
    await t.db.pool.query('DELETE FROM jobs');
    await afterTheCache();
    await waitUntil(
      async () => samples(await scrape(), 'jobs_due').get('kind="payments.hand_off"') === 0,
      'a scrape after the lock shows what storage holds',
    );
  });

  it('keeps a scrape answering when a read fails, with the last values read', async () => {
    const metrics = new Metrics({ processMetrics: false });
    let storageUp = true;
    metrics.addStorageGauges(
      [
        {
          gauges: { test_backlog: 'A backlog whose storage goes down' },
          labelNames: ['queue'],
          read: async () => {
            if (!storageUp) throw new Error('connection refused');
            return [{ labels: { queue: 'a' }, values: { test_backlog: 7 } }];
          },
        },
      ],
      t.db.pool,
    );
    assert.deepEqual(samples(await metrics.registry.metrics(), 'test_backlog'), new Map([['queue="a"', 7]]));
    storageUp = false;
    await afterTheCache();
    assert.deepEqual(samples(await metrics.registry.metrics(), 'test_backlog'), new Map([['queue="a"', 7]]));
  });
});

describe('payout gauges (payouts_processing, payouts_processing_oldest_seconds)', () => {
  let t: TestApp;
  before(async () => {
    t = await workerApp({ env: { PAYMENT_CONNECTOR: 'manual' }, extraAreas: [testBeneficiaries] });
    await createBeneficiaryTable(t);
  });
  after(() => t.close());

  it('counts the payouts the manual rail waits on, until the operator records them', async () => {
    const scrape = () => scrapeOf(t);
    const none = await scrape();
    assert.deepEqual(
      samples(none, 'payouts_processing'),
      new Map([
        ['connector="manual"', 0],
        ['connector="sandbox"', 0],
      ]),
    );
    assert.deepEqual(
      samples(none, 'payouts_processing_oldest_seconds'),
      new Map([
        ['connector="manual"', 0],
        ['connector="sandbox"', 0],
      ]),
    );

    const api = apiClient(t, await t.tenant());
    const ben = await beneficiary(t, api);
    const ids: string[] = [];
    for (const amount of ['10.00', '20.00', '30.00']) {
      ids.push((await api.post(PAYOUTS, { beneficiary_id: ben, currency: 'EUR', amount })).json().id);
    }
    const jobs = runJobs(t);
    try {
      await waitUntil(async () => {
        const result = await t.db.pool.query(
          "SELECT 1 FROM payouts WHERE id = ANY($1) AND status = 'processing'",
          [ids],
        );
        return result.rowCount === 3;
      }, 'three payouts handed to the manual rail');
    } finally {
      await jobs.stop();
    }
    // The oldest hand-off, back-dated so its age is known.
    await t.db.pool.query("UPDATE payouts SET processing_at = now() - interval '2 hours' WHERE id = $1", [
      ids[0],
    ]);
    await afterTheCache();
    const waiting = await scrape();
    assert.equal(samples(waiting, 'payouts_processing').get('connector="manual"'), 3);
    assert.equal(samples(waiting, 'payouts_processing').get('connector="sandbox"'), 0);
    const oldest = samples(waiting, 'payouts_processing_oldest_seconds').get('connector="manual"')!;
    assert.ok(oldest >= 7_200 && oldest < 7_260, `the oldest has waited two hours, got ${oldest}`);

    const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };
    for (const id of ids.slice(0, 2)) {
      const done = await t.app.inject({
        method: 'POST',
        url: `/admin/v1/payouts/${id}/complete`,
        headers: admin,
      });
      assert.equal(done.statusCode, 200, done.body);
    }
    await afterTheCache();
    const left = await scrape();
    assert.equal(samples(left, 'payouts_processing').get('connector="manual"'), 1);
    const age = samples(left, 'payouts_processing_oldest_seconds').get('connector="manual"')!;
    assert.ok(age >= 0 && age < 60, `the one left was handed off just now, got ${age}`);
  });
});

describe('review gauges (sanctions_reviews_pending, sanctions_reviews_pending_oldest_seconds)', () => {
  let t: TestApp;
  before(async () => {
    t = await workerApp();
    await importFixtures(t);
  });
  after(() => t.close());

  it('counts the screenings waiting for review until the operator decides them', async () => {
    const scrape = () => scrapeOf(t);
    const none = await scrape();
    assert.deepEqual(samples(none, 'sanctions_reviews_pending'), new Map([['', 0]]));
    assert.deepEqual(samples(none, 'sanctions_reviews_pending_oldest_seconds'), new Map([['', 0]]));

    const api = apiClient(t, await t.tenant());
    const screen = async (name: string) => {
      const response = await api.post(SCREENINGS, { entity_type: 'individual', name });
      assert.equal(response.statusCode, 201, response.body);
      return response.json() as { id: string; match_status: string };
    };
    const hits = [await screen('Ivan Petrow'), await screen('Ivan S. Petrov')];
    const clean = await screen('Grace Hopper');
    assert.deepEqual(
      [...hits, clean].map((screening) => screening.match_status),
      ['potential_match', 'potential_match', 'no_match'],
    );
    await t.db.pool.query(
      "UPDATE sanctions_screenings SET created_at = now() - interval '3 hours' WHERE id = $1",
      [hits[0]!.id],
    );
    await afterTheCache();
    const waiting = await scrape();
    assert.deepEqual(samples(waiting, 'sanctions_reviews_pending'), new Map([['', 2]]));
    const oldest = samples(waiting, 'sanctions_reviews_pending_oldest_seconds').get('')!;
    assert.ok(oldest >= 10_800 && oldest < 10_860, `the oldest has waited three hours, got ${oldest}`);

    const reviewed = await admin(t, 'POST', `/admin/v1/screenings/${hits[0]!.id}/review`, {
      decision: 'cleared',
      note: 'Different date of birth',
    });
    assert.equal(reviewed.statusCode, 200, reviewed.body);
    await afterTheCache();
    const left = await scrape();
    assert.deepEqual(samples(left, 'sanctions_reviews_pending'), new Map([['', 1]]));
    const age = samples(left, 'sanctions_reviews_pending_oldest_seconds').get('')!;
    assert.ok(age >= 0 && age < 60, `the one left was screened just now, got ${age}`);
  });
});

describe('rate gauges (fx_rates_age_seconds)', () => {
  let t: TestApp;
  before(async () => {
    t = await workerApp();
  });
  after(() => t.close());

  it("shows the age of each provider's current set per base, the newest import of each", async () => {
    const scrape = async () => samples(await scrapeOf(t), 'fx_rates_age_seconds');
    const postRates = async (asOf: Date) => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/fx-rates',
        headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
        payload: JSON.stringify({
          base: 'EUR',
          provider: 'ecb',
          as_of: asOf.toISOString(),
          rates: { USD: '1.0512', GBP: '0.8321' },
        }),
      });
      assert.equal(response.statusCode, 201, response.body);
    };
    const sandbox = 'provider="sandbox",base="USD"';
    const ecb = 'provider="ecb",base="EUR"';
    const seeded = await t.db.pool.query<{ age: number }>(
      "SELECT EXTRACT(EPOCH FROM now() - as_of)::float8 AS age FROM fx_rate_sets WHERE provider = 'sandbox'",
    );
    const before = await scrape();
    assert.deepEqual([...before.keys()], [sandbox], 'the sandbox seeds one set, of USD');
    assert.ok(
      Math.abs(before.get(sandbox)! - seeded.rows[0]!.age) < 60,
      'the seeded set is as old as its as_of',
    );

    await postRates(new Date(Date.now() - 2 * 3_600_000));
    await afterTheCache();
    const imported = await scrape();
    assert.deepEqual([...imported.keys()], [ecb, sandbox]);
    const age = imported.get(ecb)!;
    assert.ok(age >= 7_200 && age < 7_260, `the import is two hours old, got ${age}`);

    // A newer import of the provider and base supersedes it: only the current set shows.
    await postRates(new Date(Date.now() - 10 * 60_000));
    await afterTheCache();
    const newer = (await scrape()).get(ecb)!;
    assert.ok(newer >= 600 && newer < 660, `the newer import is ten minutes old, got ${newer}`);
  });
});

describe('which processes show the backlogs', () => {
  let db: TestDatabase;
  const processes: ServiceProcess[] = [];
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    for (const child of processes) await child.stop('SIGKILL');
    await db.drop();
  });

  it('a worker process shows them on /metrics; an api process does not', async () => {
    const env = {
      DATABASE_URL: db.url,
      APP_ENV: 'sandbox',
      SECRETS_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      DATABASE_POOL_SIZE: '3',
    };
    const [worker, api] = await Promise.all([startService('worker', env), startService('api', env)]);
    processes.push(worker, api);
    const workerText = await (await fetch(`${worker.baseUrl}/metrics`)).text();
    assert.equal(samples(workerText, 'payouts_processing').get('connector="sandbox"'), 0);
    assert.equal(samples(workerText, 'jobs_due').size, KINDS.length);
    const apiText = await (await fetch(`${api.baseUrl}/metrics`)).text();
    assert.equal(samples(workerText, 'sanctions_reviews_pending').get(''), 0);
    // The api process seeded the sandbox's rates before it listened.
    assert.deepEqual(
      [...samples(workerText, 'fx_rates_age_seconds').keys()],
      ['provider="sandbox",base="USD"'],
    );
    assert.doesNotMatch(apiText, /^# TYPE (jobs_due|payouts_processing|sanctions_reviews_pending) /m);
  });
});
