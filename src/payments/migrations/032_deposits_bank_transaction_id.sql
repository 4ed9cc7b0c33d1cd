-- A bank payment is recorded once (D21, manual rail): the operator gives the bank's id of the payment
-- (bank_transaction_id) with it, so that a retried or repeated record finds the deposit it made instead of
-- crediting the money twice. Unique per currency, since each currency has one collection account.
ALTER TABLE deposits ADD COLUMN IF NOT EXISTS bank_transaction_id text;
CREATE UNIQUE INDEX IF NOT EXISTS deposits_bank_transaction_uniq ON deposits (currency, bank_transaction_id)
  WHERE bank_transaction_id IS NOT NULL;
