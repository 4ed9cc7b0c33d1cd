-- The jobs that failed and wait to run again, for the worker's jobs_retrying gauge: a scrape reads these
-- few rows instead of every timer pending.
CREATE INDEX jobs_retrying_idx ON jobs (kind) WHERE attempts > 0;
