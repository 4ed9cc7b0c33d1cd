-- Idempotency keys (D14): the first response per (organisation, key), kept 24 hours.
CREATE TABLE idempotency_keys (
  organisation_id uuid NOT NULL,
  key text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
  -- sha256 of method, path and the canonical JSON body: a repeat must match it exactly.
  fingerprint text NOT NULL,
  method text NOT NULL,
  path text NOT NULL,
  state text NOT NULL CHECK (state IN ('running', 'completed')),
  -- While running: the request that holds the key; a commit of its operation must still own it.
  owner uuid,
  locked_until timestamptz,
  -- Set inside the operation's own transaction: the operation took effect and must not run again.
  committed_at timestamptz,
  response_status integer,
  response_body text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (organisation_id, key)
);
CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at);

-- Durable timers (D21): a job row with a due time, claimed with SKIP LOCKED by the worker role. The job
-- is deleted in the transaction that runs it, so a worker that dies leaves it to another.
CREATE TABLE jobs (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind text NOT NULL,
  payload jsonb NOT NULL DEFAULT '{}',
  run_at timestamptz NOT NULL,
  -- At most one pending job per key (`quote.expire:qte_...`): scheduling it again changes nothing.
  dedupe_key text UNIQUE,
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX jobs_due_idx ON jobs (run_at, id);
