-- Bank ids of payments are stored without surrounding ASCII whitespace (recordPayment trims it), so that an id
-- copied from a statement with spaces around it names the same payment. Ids stored with them before are
-- trimmed here; an id that two rows of one currency share once trimmed (one payment recorded twice) is
-- left as it is, for the operator to settle: trimming it would break deposits_bank_transaction_uniq.
WITH trimmed AS (
  SELECT id, currency, btrim(bank_transaction_id, E' \t\n\r\f' || chr(11)) AS bank_transaction_id
  FROM deposits
  WHERE bank_transaction_id IS NOT NULL
), alone AS (
  SELECT currency, bank_transaction_id FROM trimmed GROUP BY currency, bank_transaction_id HAVING count(*) = 1
)
UPDATE deposits d SET bank_transaction_id = t.bank_transaction_id
FROM trimmed t JOIN alone USING (currency, bank_transaction_id)
WHERE d.id = t.id AND d.bank_transaction_id <> t.bank_transaction_id AND t.bank_transaction_id <> '';
