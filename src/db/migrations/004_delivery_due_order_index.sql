-- The claim takes the first due deliveries in (next_attempt_at, id) order (issue 6). The due index held
-- next_attempt_at alone, so deliveries queued by one statement (a fan-out, a replay, a batch of events
-- published in one transaction), which share one next_attempt_at, came out of it unordered by id: the claim
-- then sorted every due delivery to take the first 64. EXPLAIN ANALYZE on 20,000 due deliveries with one
-- next_attempt_at: a sequential scan and a sort of all of them, 8.4 ms per claim; with the id in the index,
-- an index scan that stops after 64, 0.13 ms.
--
-- Large existing tables: migrations run in a transaction, so this cannot be CONCURRENTLY; build the same
-- index with CREATE INDEX CONCURRENTLY before deploying and this statement does nothing.
CREATE INDEX IF NOT EXISTS webhook_deliveries_due_order_idx ON webhook_deliveries (next_attempt_at, id)
  WHERE state = 'pending';
DROP INDEX IF EXISTS webhook_deliveries_due_idx;
