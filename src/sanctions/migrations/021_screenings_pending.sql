-- The compliance officer's queue (GET /admin/v1/screenings/pending): screenings in potential_match across
-- every organisation, oldest first. The partial index holds only the queue, so the list reads as many index
-- entries as it answers however many screenings have been decided or had no hit, and it stays small: a
-- screening leaves it when the operator reviews it.
--
-- Large existing tables: migrations run in a transaction, so this cannot be CONCURRENTLY; build the same
-- index with CREATE INDEX CONCURRENTLY before deploying and this statement does nothing.
CREATE INDEX IF NOT EXISTS sanctions_screenings_pending
  ON sanctions_screenings (created_at, id) WHERE match_status = 'potential_match';
