-- The jobs that failed and wait to run again, for the worker's jobs_retrying gauge: a scrape reads these
-- few rows instead of every timer pending.
--
-- Large existing tables: migrations run in a transaction, so this cannot be CONCURRENTLY, and the build
-- holds every write to jobs (each quote, transfer and payout schedules one); build the same index with
-- CREATE INDEX CONCURRENTLY before deploying and this statement does nothing.
CREATE INDEX IF NOT EXISTS jobs_retrying_idx ON jobs (kind) WHERE attempts > 0;
