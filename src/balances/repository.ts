// SQL of the ledger and balances (D21).

import { pageWithTotal } from '../db/paging.ts';
import type { Queryable } from '../db/pool.ts';
import { listFilters, searchOrder } from '../db/sql.ts';

/** SQLSTATE that ledger_post raises for a debit below zero (migration 005). */
export const PG_INSUFFICIENT_FUNDS = 'PS001';

export interface EntryInput {
  entryId: string;
  organisationId: string | null;
  name: string;
  currency: string;
  amount: string;
  mayOverdraw: boolean;
}

export interface TransactionInput {
  type: string;
  resourceType: string | null;
  resourceId: string | null;
  entries: EntryInput[];
}

/**
 * Posts transactions in order in one statement (one round trip: a debit's row lock is held until the
 * commit, so every round trip after it is time the balance's other postings wait). Returns each
 * transaction's entries in the order of its input (the function writes platform entries first).
 */
export async function postTransactions(
  db: Queryable,
  transactions: TransactionInput[],
): Promise<{ id: string; balanceAfter: string | null }[][]> {
  const calls: string[] = [];
  const values: unknown[] = [];
  for (const transaction of transactions) {
    const at = values.length;
    const $ = (index: number) => `$${at + index}`;
    calls.push(
      `SELECT entry_id, balance_after FROM ledger_post(${$(1)}, ${$(2)}, ${$(3)}, ${$(4)}::uuid[], ${$(5)}::text[],
         ${$(6)}::text[], ${$(7)}::numeric[], ${$(8)}::boolean[], ${$(9)}::text[])`,
    );
    const { entries } = transaction;
    values.push(
      transaction.type,
      transaction.resourceType,
      transaction.resourceId,
      entries.map((entry) => entry.organisationId),
      entries.map((entry) => entry.name),
      entries.map((entry) => entry.currency),
      entries.map((entry) => entry.amount),
      entries.map((entry) => entry.mayOverdraw),
      entries.map((entry) => entry.entryId),
    );
  }
  // UNION ALL runs its branches one after the other, in order: the transactions post in the given order.
  const result = await db.query<{ entry_id: string; balance_after: string | null }>({
    name: `ledger.post_${transactions.length}`,
    text: calls.join('\nUNION ALL\n'),
    values,
  });
  const byId = new Map(result.rows.map((row) => [row.entry_id, row.balance_after]));
  return transactions.map((transaction) =>
    transaction.entries.map((entry) => ({
      id: entry.entryId,
      balanceAfter: byId.get(entry.entryId) ?? null,
    })),
  );
}

/** Creates the platform accounts of every name in every currency, where missing, in (name, currency) order. */
export async function insertPlatformAccounts(
  db: Queryable,
  names: string[],
  currencies: string[],
): Promise<void> {
  await db.query(
    `INSERT INTO ledger_accounts (organisation_id, name, currency, balance)
     SELECT NULL, name, currency, NULL FROM unnest($1::text[]) AS name CROSS JOIN unnest($2::text[]) AS currency
     ORDER BY name, currency
     ON CONFLICT DO NOTHING`,
    [names, currencies],
  );
}

export interface BalanceRow {
  currency: string;
  available: string;
  held: string;
  updated_at: Date;
}

/** The organisation's balances: one row per currency it has touched, sorted by currency. */
export async function listBalances(db: Queryable, organisationId: string): Promise<BalanceRow[]> {
  const result = await db.query<BalanceRow>({
    name: 'balances.list',
    text: `SELECT currency,
                  coalesce(sum(balance) FILTER (WHERE name = 'available'), 0)::text AS available,
                  coalesce(sum(balance) FILTER (WHERE name = 'held'), 0)::text AS held,
                  max(updated_at) AS updated_at
           FROM ledger_accounts WHERE organisation_id = $1
           GROUP BY currency ORDER BY currency`,
    values: [organisationId],
  });
  return result.rows;
}

export async function findBalance(
  db: Queryable,
  organisationId: string,
  currency: string,
): Promise<BalanceRow | undefined> {
  return (await listBalances(db, organisationId)).find((row) => row.currency === currency);
}

/** Currencies of the organisation's balances. */
export async function balanceCurrencies(db: Queryable, organisationId: string): Promise<string[]> {
  const result = await db.query<{ currency: string }>({
    name: 'balances.currencies',
    text: 'SELECT DISTINCT currency FROM ledger_accounts WHERE organisation_id = $1',
    values: [organisationId],
  });
  return result.rows.map((row) => row.currency);
}

export interface EntryRow {
  id: string;
  currency: string;
  amount: string;
  balance_after: string;
  type: string;
  resource_type: string | null;
  resource_id: string | null;
  created_at: Date;
}

export interface EntryFilters {
  currency?: string[];
  type?: string[];
  resource_id?: string[];
}

/** The organisation's balance transactions: the entries of its available accounts (D21). */
export async function searchEntries(
  db: Queryable,
  organisationId: string,
  filters: EntryFilters,
  sortBy: string,
  direction: 'asc' | 'desc',
  limit: number,
  offset: number,
): Promise<{ rows: EntryRow[]; total: number }> {
  const values: unknown[] = [organisationId];
  const conditions = ['organisation_id = $1', "account_name = 'available'"];
  listFilters(filters, values, conditions);
  values.push(limit, offset);
  // Entries never change: updated_at sorts as created_at.
  return pageWithTotal<EntryRow>(db, {
    columns:
      'id, currency, amount::text AS amount, balance_after::text AS balance_after, type, resource_type, resource_id, created_at',
    from: 'ledger_entries',
    condition: conditions.join(' AND '),
    orderBy: searchOrder(sortBy === 'updated_at' ? 'created_at' : sortBy, direction),
    limit: `$${values.length - 1}`,
    offset: `$${values.length}`,
    values,
  });
}

/** True once the organisation has had its sandbox opening balances (D24). */
export async function hasOpeningBalances(db: Queryable, organisationId: string): Promise<boolean> {
  const result = await db.query({
    name: 'balances.opening_exists',
    text: `SELECT 1 FROM ledger_transactions
           WHERE resource_id = $1::text AND resource_type = 'organisation' AND type = 'top_up' LIMIT 1`,
    values: [organisationId],
  });
  return result.rowCount === 1;
}

/** Serialises the opening-balance seeding of one organisation across processes. */
export async function lockOrganisation(db: Queryable, organisationId: string): Promise<void> {
  await db.query('SELECT 1 FROM organisations WHERE id = $1 FOR NO KEY UPDATE', [organisationId]);
}

/**
 * Checks the invariants of D21 over the whole ledger and returns what is violated (empty when none):
 * every organisation account equals the sum of its entries, every transaction sums to zero per currency,
 * no organisation balance is or was below zero (an entry allowed to overdraw shows here too, on purpose:
 * an operator should see it). Reads every entry: for tests, benchmarks and operators, not request paths.
 */
export async function ledgerViolations(db: Queryable): Promise<string[]> {
  const problems: string[] = [];
  const accounts = await db.query(
    `SELECT a.id, a.balance::text AS balance, coalesce(sum(e.amount), 0)::text AS total
     FROM ledger_accounts a LEFT JOIN ledger_entries e ON e.account_id = a.id
     WHERE a.organisation_id IS NOT NULL GROUP BY a.id HAVING a.balance <> coalesce(sum(e.amount), 0)`,
  );
  for (const row of accounts.rows)
    problems.push(`account ${row.id}: balance ${row.balance}, entries sum to ${row.total}`);
  const unbalanced = await db.query(
    `SELECT transaction_id, currency, sum(amount)::text AS sum FROM ledger_entries
     GROUP BY transaction_id, currency HAVING sum(amount) <> 0`,
  );
  for (const row of unbalanced.rows)
    problems.push(`transaction ${row.transaction_id} sums to ${row.sum} ${row.currency}`);
  const negative = await db.query(
    `SELECT 'entry ' || id AS what, balance_after::text AS balance FROM ledger_entries
       WHERE organisation_id IS NOT NULL AND balance_after < 0
     UNION ALL
     SELECT 'account ' || id, balance::text FROM ledger_accounts WHERE balance < 0`,
  );
  for (const row of negative.rows) problems.push(`${row.what} below zero: ${row.balance}`);
  return problems;
}
