// The ledger (D21) on real PostgreSQL: balanced immutable transactions, guarded debits under concurrency
// (several connections and a second OS process), and a property test over random interleavings of
// top-ups, debits, credits, holds and reversals, with amounts drawn as integer minor units.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { insertOrganisation } from '../../src/admin/repository.ts';
import { AREAS } from '../../src/areas.ts';
import * as ledger from '../../src/balances/ledger.ts';
import { ledgerViolations } from '../../src/balances/repository.ts';
import { loadConfig } from '../../src/config.ts';
import { createPool, type Pool, withTransaction } from '../../src/db/pool.ts';
import { AppError } from '../../src/platform/errors.ts';
import { newUuid } from '../../src/platform/ids.ts';
import { Decimal, fromMinorUnits, knownCurrencyCodes, toMinorUnits } from '../../src/platform/money.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

const execFileAsync = promisify(execFile);
const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'debit-child.ts');

async function organisation(db: TestDatabase): Promise<string> {
  return (await insertOrganisation(db.pool, newUuid(), 'ledger test')).id;
}

function topUp(pool: Pool, organisationId: string, currency: string, amount: string) {
  return withTransaction(pool, (tx) =>
    ledger.post(tx, {
      type: 'top_up',
      resourceType: null,
      resourceId: null,
      postings: [
        { account: ledger.available(organisationId, currency), amount: new Decimal(amount) },
        { account: ledger.platform('sandbox_funding', currency), amount: new Decimal(amount).negated() },
      ],
    }),
  );
}

/** A payout-like debit of the available balance to a rail; resolves 'ok' or 'insufficient'. */
async function debit(
  pool: Pool,
  organisationId: string,
  currency: string,
  amount: string,
): Promise<'ok' | 'insufficient'> {
  try {
    await withTransaction(pool, (tx) =>
      ledger.post(tx, {
        type: 'payout',
        resourceType: null,
        resourceId: null,
        postings: [
          { account: ledger.available(organisationId, currency), amount: new Decimal(amount).negated() },
          { account: ledger.platform('rail:test', currency), amount: new Decimal(amount) },
        ],
      }),
    );
    return 'ok';
  } catch (error) {
    if (error instanceof AppError && error.code === 'INSUFFICIENT_FUNDS') return 'insufficient';
    throw error;
  }
}

async function balanceOf(
  pool: Pool,
  organisationId: string,
  name: string,
  currency: string,
): Promise<string> {
  const result = await pool.query<{ balance: string }>(
    'SELECT balance::text FROM ledger_accounts WHERE organisation_id = $1 AND name = $2 AND currency = $3',
    [organisationId, name, currency],
  );
  return result.rows[0]?.balance ?? '0';
}

describe('ledger (D21)', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase({ poolSize: 24 });
  });
  after(() => db.drop());

  it('records a balanced transaction: entries with btx_ ids, balance_after on organisation accounts only', async () => {
    const org = await organisation(db);
    const entries = await topUp(db.pool, org, 'KWD', '12.345');
    assert.equal(entries.length, 2);
    assert.match(entries[0]!.id, /^btx_[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.equal(entries[0]!.balanceAfter, '12.345');
    assert.equal(entries[1]!.balanceAfter, null);
    assert.equal(await balanceOf(db.pool, org, 'available', 'KWD'), '12.345');
  });

  it('posts several transactions in one call in order, and refuses them all when one would overdraw', async () => {
    const org = await organisation(db);
    await topUp(db.pool, org, 'USD', '10.00');
    const spend = (amount: string, type: ledger.TransactionType): ledger.LedgerTransaction => ({
      type,
      resourceType: null,
      resourceId: null,
      postings: [
        { account: ledger.available(org, 'USD'), amount: new Decimal(amount).negated() },
        {
          account: ledger.platform(type === 'fee' ? 'fees' : 'rail:test', 'USD'),
          amount: new Decimal(amount),
        },
      ],
    });
    const posted = await withTransaction(db.pool, (tx) =>
      ledger.postAll(tx, [spend('6.00', 'payout'), spend('1.50', 'fee')]),
    );
    assert.deepEqual(
      posted.map((entries) => entries.map((entry) => entry.balanceAfter)),
      [
        ['4.00', null],
        ['2.50', null],
      ],
    );
    const types = await db.pool.query<{ type: string; amount: string }>(
      "SELECT type, amount::text FROM ledger_entries WHERE organisation_id = $1 AND type <> 'top_up' ORDER BY id",
      [org],
    );
    assert.deepEqual(types.rows, [
      { type: 'payout', amount: '-6.00' },
      { type: 'fee', amount: '-1.50' },
    ]);
    await assert.rejects(
      withTransaction(db.pool, (tx) => ledger.postAll(tx, [spend('2.00', 'payout'), spend('1.00', 'fee')])),
      (error: unknown) => error instanceof AppError && error.code === 'INSUFFICIENT_FUNDS',
    );
    assert.equal(
      await balanceOf(db.pool, org, 'available', 'USD'),
      '2.50',
      'the first of the refused pair is undone',
    );
    assert.deepEqual(await ledgerViolations(db.pool), []);
  });

  it("creates every area's platform accounts in every currency, once, so that no posting creates one", async () => {
    const config = loadConfig({ APP_ENV: 'sandbox' });
    const names = [...new Set(AREAS.flatMap((area) => area.platformAccounts?.(config) ?? []))].sort();
    assert.deepEqual(names, [
      'fees',
      'fx',
      'rail:crypto:bitcoin',
      'rail:crypto:ethereum',
      'rail:crypto:polygon',
      'rail:crypto:tron',
      'rail:manual',
      'rail:sandbox',
      'sandbox_funding',
      'transfers_clearing',
    ]);
    const platformAccounts = async () =>
      (
        await db.pool.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM ledger_accounts WHERE organisation_id IS NULL',
        )
      ).rows[0]!.n;
    await ledger.ensurePlatformAccounts(db.pool, names);
    await ledger.ensurePlatformAccounts(db.pool, names);
    const created = await platformAccounts();
    const missing = await db.pool.query(
      `SELECT name, currency FROM unnest($1::text[]) AS name CROSS JOIN unnest($2::text[]) AS currency
       EXCEPT SELECT name, currency FROM ledger_accounts WHERE organisation_id IS NULL`,
      [names, knownCurrencyCodes()],
    );
    assert.deepEqual(missing.rows, []);
    // A posting to them (a top-up in a currency nothing used yet) creates no platform account.
    await topUp(db.pool, await organisation(db), 'MNT', '5.00');
    assert.equal(await platformAccounts(), created);
  });

  it('refuses unbalanced postings, zero entries and amounts finer than the currency, writing nothing', async () => {
    const org = await organisation(db);
    const unbalanced = withTransaction(db.pool, (tx) =>
      ledger.post(tx, {
        type: 'adjustment',
        resourceType: null,
        resourceId: null,
        postings: [
          { account: ledger.available(org, 'USD'), amount: new Decimal('5.00') },
          { account: ledger.platform('fees', 'USD'), amount: new Decimal('-4.99') },
        ],
      }),
    );
    await assert.rejects(unbalanced, /sum to 0.01 USD, not zero/);
    const fine = withTransaction(db.pool, (tx) =>
      ledger.post(tx, {
        type: 'adjustment',
        resourceType: null,
        resourceId: null,
        postings: [
          { account: ledger.available(org, 'JPY'), amount: new Decimal('1.5') },
          { account: ledger.platform('fees', 'JPY'), amount: new Decimal('-1.5') },
        ],
      }),
    );
    await assert.rejects(fine, /more than the 0 decimals of JPY/);
    const entries = await db.pool.query('SELECT 1 FROM ledger_entries WHERE organisation_id = $1', [org]);
    assert.equal(entries.rowCount, 0);
  });

  it('guards in PostgreSQL too: an unbalanced transaction written by hand cannot commit', async () => {
    const org = await organisation(db);
    await topUp(db.pool, org, 'USD', '1.00');
    const account = (await db.pool.query('SELECT id FROM ledger_accounts WHERE organisation_id = $1', [org]))
      .rows[0].id;
    await assert.rejects(
      withTransaction(db.pool, async (tx) => {
        const t = await tx.query("INSERT INTO ledger_transactions (type) VALUES ('adjustment') RETURNING id");
        await tx.query(
          `INSERT INTO ledger_entries (id, transaction_id, account_id, organisation_id, account_name, currency, amount, type, created_at)
           VALUES ('btx_manual', $1, $2, $3, 'available', 'USD', 1, 'adjustment', now())`,
          [t.rows[0].id, account, org],
        );
      }),
      /does not sum to zero per currency/,
    );
    await assert.rejects(
      withTransaction(db.pool, (tx) =>
        tx.query('SELECT * FROM ledger_post($1, NULL, NULL, $2::uuid[], $3, $4, $5::numeric[], $6, $7)', [
          'adjustment',
          [org, null],
          ['available', 'fees'],
          ['USD', 'USD'],
          ['1', '-2'],
          [false, true],
          ['btx_a', 'btx_b'],
        ]),
      ),
      /must sum to zero per currency/,
    );
  });

  it('never updates or deletes entries or transactions', async () => {
    const org = await organisation(db);
    const [entry] = await topUp(db.pool, org, 'USD', '3.00');
    await assert.rejects(
      db.pool.query('UPDATE ledger_entries SET amount = 4 WHERE id = $1', [entry!.id]),
      /never updated or deleted/,
    );
    await assert.rejects(
      db.pool.query('DELETE FROM ledger_entries WHERE id = $1', [entry!.id]),
      /never updated or deleted/,
    );
    await assert.rejects(db.pool.query('DELETE FROM ledger_transactions'), /never updated or deleted/);
  });

  it('lets exactly the affordable ones of 20 concurrent debits through (20 x 7.00 against 100.00)', async () => {
    const org = await organisation(db);
    await topUp(db.pool, org, 'USD', '100.00');
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => debit(db.pool, org, 'USD', '7.00')));
    assert.equal(outcomes.filter((outcome) => outcome === 'ok').length, 14);
    assert.equal(outcomes.filter((outcome) => outcome === 'insufficient').length, 6);
    assert.equal(await balanceOf(db.pool, org, 'available', 'USD'), '2.00');
    assert.deepEqual(await ledgerViolations(db.pool), []);
  });

  it('guards the balance across processes: another process debits at the same time', async () => {
    const org = await organisation(db);
    await topUp(db.pool, org, 'EUR', '100.00');
    const [child, here] = await Promise.all([
      execFileAsync(process.execPath, [CHILD, db.url, org, 'EUR', '7.00', '10']),
      Promise.all(Array.from({ length: 10 }, () => debit(db.pool, org, 'EUR', '7.00'))),
    ]);
    const childOk = Number(JSON.parse(child.stdout).ok);
    const hereOk = here.filter((outcome) => outcome === 'ok').length;
    assert.equal(childOk + hereOk, 14);
    assert.equal(await balanceOf(db.pool, org, 'available', 'EUR'), '2.00');
  });

  it('keeps every invariant under random concurrent interleavings (property)', async () => {
    const CURRENCIES = ['USD', 'JPY', 'KWD'] as const;
    const operation = fc.record({
      kind: fc.constantFrom('top_up', 'debit', 'credit', 'hold', 'release', 'reverse'),
      org: fc.integer({ min: 0, max: 2 }),
      currency: fc.constantFrom(...CURRENCIES),
      minor: fc.bigInt({ min: 1n, max: 50_000n }),
      lane: fc.integer({ min: 0, max: 3 }),
    });
    const pools = Array.from({ length: 4 }, () => createPool(db.url, 1, 'ledger-property'));
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(operation, { minLength: 5, maxLength: 30 }), async (operations) => {
          const orgs = [await organisation(db), await organisation(db), await organisation(db)];
          // What the test saw succeed, in minor units per account: the ledger must hold exactly this.
          const expected = new Map<string, bigint>();
          const applied: ledger.Posting[][] = [];
          const runOne = async (pool: Pool, op: (typeof operations)[number]) => {
            const organisationId = orgs[op.org]!;
            const amount = fromMinorUnits(op.minor, op.currency);
            const avail = ledger.available(organisationId, op.currency);
            const hold = ledger.held(organisationId, op.currency);
            const rail = ledger.platform('rail:test', op.currency);
            let postings: ledger.Posting[];
            switch (op.kind) {
              case 'top_up':
                postings = [
                  { account: avail, amount },
                  { account: ledger.platform('sandbox_funding', op.currency), amount: amount.negated() },
                ];
                break;
              case 'debit':
                postings = [
                  { account: avail, amount: amount.negated() },
                  { account: rail, amount },
                ];
                break;
              case 'credit':
                postings = [
                  { account: rail, amount: amount.negated() },
                  { account: avail, amount },
                ];
                break;
              case 'hold':
                postings = [
                  { account: avail, amount: amount.negated() },
                  { account: hold, amount },
                ];
                break;
              case 'release':
                postings = [
                  { account: hold, amount: amount.negated() },
                  { account: avail, amount },
                ];
                break;
              default: {
                const earlier = applied[Number(op.minor % BigInt(Math.max(applied.length, 1)))];
                if (!earlier) return;
                postings = earlier.map((posting) => ({ ...posting, amount: posting.amount.negated() }));
              }
            }
            try {
              await withTransaction(pool, (tx) =>
                ledger.post(tx, { type: 'adjustment', resourceType: null, resourceId: null, postings }),
              );
            } catch (error) {
              if (error instanceof AppError && error.code === 'INSUFFICIENT_FUNDS') return;
              throw error;
            }
            applied.push(postings);
            for (const posting of postings) {
              if (!('organisationId' in posting.account)) continue;
              const key = `${posting.account.organisationId}|${posting.account.name}|${posting.account.currency}`;
              expected.set(
                key,
                (expected.get(key) ?? 0n) + toMinorUnits(posting.amount, posting.account.currency),
              );
            }
          };
          await Promise.all(
            pools.map(async (pool, lane) => {
              for (const op of operations.filter((candidate) => candidate.lane === lane))
                await runOne(pool, op);
            }),
          );
          assert.deepEqual(await ledgerViolations(db.pool), []);
          const actual = await db.pool.query<{
            organisation_id: string;
            name: string;
            currency: string;
            balance: string;
          }>(
            'SELECT organisation_id, name, currency, balance::text FROM ledger_accounts WHERE organisation_id = ANY($1)',
            [orgs],
          );
          const held = new Map(
            actual.rows.map((row) => [
              `${row.organisation_id}|${row.name}|${row.currency}`,
              toMinorUnits(row.balance, row.currency),
            ]),
          );
          for (const [key, minor] of expected) assert.equal(held.get(key) ?? 0n, minor, key);
          for (const [key, minor] of held) assert.equal(expected.get(key) ?? 0n, minor, key);
        }),
        { numRuns: 25 },
      );
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });
});
