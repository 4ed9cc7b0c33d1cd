-- The double-entry ledger (D21). Every movement of money is one ledger transaction whose entries sum to
-- zero per currency. Organisations hold two accounts per currency, `available` and `held`; platform
-- accounts (organisation_id NULL) stand for the outside world and the platform's own money: rails
-- (`rail:<connector>`), fees, FX, sandbox funding.
CREATE TABLE ledger_accounts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  organisation_id uuid REFERENCES organisations(id),
  name text NOT NULL,
  currency text NOT NULL CHECK (currency ~ '^[A-Z]{3,5}$'),
  -- Kept for organisation accounts, whose debits are guarded against going below zero. A platform
  -- account's balance is the sum of its entries: it is never updated, so the accounts every posting
  -- touches (a rail, the fees) are no hot row.
  balance numeric,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((organisation_id IS NULL) = (balance IS NULL)),
  CHECK (organisation_id IS NULL OR name IN ('available', 'held')),
  UNIQUE NULLS NOT DISTINCT (organisation_id, name, currency)
);

CREATE TABLE ledger_transactions (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  type text NOT NULL CHECK (type IN ('deposit', 'payout', 'payout_reversal', 'transfer_funding',
    'transfer_refund', 'fee', 'top_up', 'adjustment')),
  resource_type text,
  resource_id text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ledger_transactions_resource_idx ON ledger_transactions (resource_id) WHERE resource_id IS NOT NULL;

-- Entries are the balance transactions of D21 (`btx_` ids); never updated or deleted.
CREATE TABLE ledger_entries (
  id text PRIMARY KEY,
  transaction_id bigint NOT NULL REFERENCES ledger_transactions(id),
  account_id bigint NOT NULL REFERENCES ledger_accounts(id),
  organisation_id uuid,
  account_name text NOT NULL,
  currency text NOT NULL,
  amount numeric NOT NULL CHECK (amount <> 0),
  -- The organisation account's balance after this entry; NULL for platform accounts.
  balance_after numeric,
  type text NOT NULL,
  resource_type text,
  resource_id text,
  created_at timestamptz NOT NULL
);
CREATE INDEX ledger_entries_transaction_idx ON ledger_entries (transaction_id);
CREATE INDEX ledger_entries_account_idx ON ledger_entries (account_id);
-- The organisation's balance transactions: the movements of its available balances.
CREATE INDEX ledger_entries_org_idx ON ledger_entries (organisation_id, id) WHERE account_name = 'available';
CREATE INDEX ledger_entries_org_created_idx ON ledger_entries (organisation_id, created_at) WHERE account_name = 'available';
CREATE INDEX ledger_entries_org_resource_idx ON ledger_entries (organisation_id, resource_id) WHERE account_name = 'available';

CREATE FUNCTION ledger_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger % are never updated or deleted; post a correcting transaction', TG_TABLE_NAME;
END $$;
CREATE TRIGGER ledger_entries_immutable BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_immutable();
CREATE TRIGGER ledger_transactions_immutable BEFORE UPDATE OR DELETE ON ledger_transactions
  FOR EACH ROW EXECUTE FUNCTION ledger_immutable();

-- At commit, every transaction has at least two entries and they sum to zero per currency, whoever
-- wrote them.
CREATE FUNCTION ledger_transaction_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (SELECT count(*) FROM ledger_entries WHERE transaction_id = NEW.id) < 2
     OR EXISTS (SELECT 1 FROM ledger_entries WHERE transaction_id = NEW.id
                GROUP BY currency HAVING sum(amount) <> 0) THEN
    RAISE EXCEPTION USING ERRCODE = 'PS002',
      MESSAGE = format('ledger transaction %s does not sum to zero per currency', NEW.id);
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER ledger_transactions_balanced AFTER INSERT ON ledger_transactions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_transaction_balanced();

-- The ids of the accounts named by (organisation, name, currency), NULL where one does not exist yet.
-- An organisation id and NULL (a platform account) are looked up apart, so that both use the unique index.
CREATE FUNCTION ledger_account_ids(p_organisation uuid[], p_name text[], p_currency text[])
RETURNS bigint[] LANGUAGE plpgsql STABLE AS $$
DECLARE
  ids bigint[] := '{}';
  found bigint;
BEGIN
  FOR i IN 1..coalesce(array_length(p_name, 1), 0) LOOP
    IF p_organisation[i] IS NULL THEN
      SELECT a.id INTO found FROM ledger_accounts a
        WHERE a.organisation_id IS NULL AND a.name = p_name[i] AND a.currency = p_currency[i];
    ELSE
      SELECT a.id INTO found FROM ledger_accounts a
        WHERE a.organisation_id = p_organisation[i] AND a.name = p_name[i] AND a.currency = p_currency[i];
    END IF;
    ids := ids || found;
  END LOOP;
  RETURN ids;
END $$;

-- Posts one ledger transaction in the caller's transaction: the one primitive every movement of money
-- goes through. Organisation accounts are locked in id order (so two
-- postings never deadlock) and a debit that would take one below zero raises PS001, unless that entry
-- may overdraw (a reversal the platform must record whatever the balance). Unbalanced input raises PS002.
CREATE FUNCTION ledger_post(
  p_type text, p_resource_type text, p_resource_id text,
  p_organisation uuid[], p_name text[], p_currency text[], p_amount numeric[], p_overdraft boolean[],
  p_entry_id text[]
) RETURNS TABLE (entry_id text, balance_after numeric) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  n integer := coalesce(array_length(p_amount, 1), 0);
  v_account_ids bigint[] := '{}';
  v_transaction bigint;
  v_balance numeric;
  v_at timestamptz := now();
BEGIN
  IF n < 2 OR EXISTS (SELECT 1 FROM unnest(p_currency, p_amount) AS e(currency, amount)
                      GROUP BY e.currency HAVING sum(e.amount) <> 0) THEN
    RAISE EXCEPTION USING ERRCODE = 'PS002', MESSAGE = 'ledger postings must sum to zero per currency';
  END IF;
  v_account_ids := ledger_account_ids(p_organisation, p_name, p_currency);
  IF array_position(v_account_ids, NULL) IS NOT NULL THEN
    -- Accounts are created on first use, in one order (organisation, name, currency) for every posting:
    -- two postings that both create accounts wait for each other's inserts in the same order, never in
    -- a cycle.
    INSERT INTO ledger_accounts (organisation_id, name, currency, balance)
      SELECT DISTINCT e.organisation, e.name, e.currency, CASE WHEN e.organisation IS NULL THEN NULL ELSE 0 END
      FROM unnest(p_organisation, p_name, p_currency) AS e(organisation, name, currency)
      ORDER BY 1, 2, 3
      ON CONFLICT DO NOTHING;
    v_account_ids := ledger_account_ids(p_organisation, p_name, p_currency);
  END IF;
  INSERT INTO ledger_transactions (type, resource_type, resource_id, created_at)
    VALUES (p_type, p_resource_type, p_resource_id, v_at) RETURNING id INTO v_transaction;
  -- Platform entries first: they lock nothing. The organisation accounts' row locks are taken last and
  -- held until commit, so the work done under them is as short as it can be (a hot balance serialises
  -- its postings on that lock).
  FOR i IN 1..n LOOP
    CONTINUE WHEN p_organisation[i] IS NOT NULL;
    INSERT INTO ledger_entries (id, transaction_id, account_id, organisation_id, account_name, currency,
        amount, balance_after, type, resource_type, resource_id, created_at)
      VALUES (p_entry_id[i], v_transaction, v_account_ids[i], NULL, p_name[i], p_currency[i],
        p_amount[i], NULL, p_type, p_resource_type, p_resource_id, v_at);
    entry_id := p_entry_id[i];
    balance_after := NULL;
    RETURN NEXT;
  END LOOP;
  PERFORM 1 FROM ledger_accounts a
    WHERE a.id = ANY (v_account_ids) AND a.organisation_id IS NOT NULL ORDER BY a.id FOR NO KEY UPDATE;
  FOR i IN 1..n LOOP
    CONTINUE WHEN p_organisation[i] IS NULL;
    UPDATE ledger_accounts a SET balance = a.balance + p_amount[i], updated_at = v_at
      WHERE a.id = v_account_ids[i] RETURNING a.balance INTO v_balance;
    IF v_balance < 0 AND p_amount[i] < 0 AND NOT p_overdraft[i] THEN
      RAISE EXCEPTION USING ERRCODE = 'PS001', MESSAGE = 'insufficient funds',
        DETAIL = format('%s %s', p_name[i], p_currency[i]);
    END IF;
    INSERT INTO ledger_entries (id, transaction_id, account_id, organisation_id, account_name, currency,
        amount, balance_after, type, resource_type, resource_id, created_at)
      VALUES (p_entry_id[i], v_transaction, v_account_ids[i], p_organisation[i], p_name[i], p_currency[i],
        p_amount[i], v_balance, p_type, p_resource_type, p_resource_id, v_at);
    entry_id := p_entry_id[i];
    balance_after := v_balance;
    RETURN NEXT;
  END LOOP;
END $$;
