// Balances and balance transactions (D21), sandbox top-ups and opening balances (D24).
import type { PoolClient } from '../db/pool.ts';
import { transactionGroups } from '../db/transaction-groups.ts';
import type { AppDeps } from '../platform/deps.ts';
import { validationFailed } from '../platform/errors.ts';
import { Decimal, findCurrency, formatAmount, parseAmount } from '../platform/money.ts';
import { type Page, refuseFreeText, toPage, toSearchQuery } from '../platform/search.ts';
import { toIso } from '../platform/time.ts';
import * as ledger from './ledger.ts';
import * as repo from './repository.ts';
import type {
  BalanceTransactionSearchInput,
  BalanceTransactionView,
  BalanceView,
  TopUpInput,
} from './schemas.ts';

/** The platform account that funds the sandbox's test money (opening balances, top-ups). */
export const SANDBOX_FUNDING = 'sandbox_funding';

/** D24: every sandbox organisation starts with 1,000,000 in each of these. */
export const OPENING_BALANCES = ['USD', 'EUR', 'GBP', 'USDC'] as const;
const OPENING_AMOUNT = '1000000';

const balanceView = (row: repo.BalanceRow): BalanceView => ({
  currency: row.currency,
  available: formatAmount(row.available, row.currency),
  held: formatAmount(row.held, row.currency),
  updated_at: toIso(row.updated_at),
});

export async function listBalances(deps: AppDeps, organisationId: string): Promise<BalanceView[]> {
  return (await repo.listBalances(deps.pool, organisationId)).map(balanceView);
}

export async function searchBalanceTransactions(
  deps: AppDeps,
  organisationId: string,
  body: BalanceTransactionSearchInput,
): Promise<Page<BalanceTransactionView>> {
  refuseFreeText(body, 'Balance transactions');
  const query = toSearchQuery<repo.EntryFilters, string>(body);
  const { rows, total } = await repo.searchEntries(
    deps.pool,
    organisationId,
    query.filters,
    query.sortBy,
    query.sortDirection,
    query.pageSize,
    query.offset,
  );
  return toPage(
    query,
    rows.map((row) => ({
      id: row.id,
      currency: row.currency,
      amount: formatAmount(row.amount, row.currency),
      balance_after: formatAmount(row.balance_after, row.currency),
      type: row.type as BalanceTransactionView['type'],
      resource_type: row.resource_type,
      resource_id: row.resource_id,
      created_at: toIso(row.created_at),
    })),
    total,
  );
}

/** Sandbox: test money from the sandbox funding account (D24); answers the balance after it. */
export async function topUp(deps: AppDeps, organisationId: string, input: TopUpInput): Promise<BalanceView> {
  if (!findCurrency(input.currency)) throw validationFailed('currency', `Unknown currency ${input.currency}`);
  const amount = parseAmount(input.amount, input.currency, 'amount');
  return transactionGroups(deps.pool).run(organisationId, async (tx) => {
    await fund(tx, organisationId, input.currency, amount, null);
    return balanceView((await repo.findBalance(tx, organisationId, input.currency))!);
  });
}

function fund(
  tx: PoolClient,
  organisationId: string,
  currency: string,
  amount: Decimal,
  resourceId: string | null,
) {
  return ledger.post(tx, {
    type: 'top_up',
    resourceType: resourceId === null ? null : 'organisation',
    resourceId,
    postings: [
      { account: ledger.available(organisationId, currency), amount },
      { account: ledger.platform(SANDBOX_FUNDING, currency), amount: amount.negated() },
    ],
  });
}

/** D24 opening balances, once per organisation, whichever process seeds it first. */
export async function seedOpeningBalances(tx: PoolClient, organisationId: string): Promise<void> {
  await repo.lockOrganisation(tx, organisationId);
  if (await repo.hasOpeningBalances(tx, organisationId)) return;
  for (const currency of OPENING_BALANCES) {
    await fund(tx, organisationId, currency, new Decimal(OPENING_AMOUNT), organisationId);
  }
}
