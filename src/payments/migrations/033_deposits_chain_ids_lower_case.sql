-- Chain transaction ids are stored as chainTransactionId (src/crypto/inbound.ts) writes them: hex ids in
-- lower case, without surrounding spaces, so that every spelling of a transaction finds its deposit. Rows
-- recorded before it keep the indexer's spelling and are rewritten here; otherwise the next notification of
-- such a transaction (a confirmation update) would find nothing and credit it again. Ids that two rows
-- share once rewritten (one transaction recorded twice under two spellings) are left as they are, for the
-- operator to settle (docs/operator/crypto.md): rewriting them would break deposits_chain_uniq.
WITH normalised AS (
  SELECT id, network, coalesce(log_index, -1) AS output, lower(btrim(tx_hash)) AS tx_hash
  FROM deposits
  WHERE tx_hash IS NOT NULL AND btrim(tx_hash) ~* '^(0x)?[0-9a-f]+$'
), alone AS (
  SELECT network, output, tx_hash FROM normalised GROUP BY network, output, tx_hash HAVING count(*) = 1
)
UPDATE deposits d SET tx_hash = n.tx_hash
FROM normalised n JOIN alone USING (network, output, tx_hash)
WHERE d.id = n.id AND d.tx_hash <> n.tx_hash;
