-- Organisations and the API clients the operator issues to them (D7).
CREATE TABLE organisations (
  id uuid PRIMARY KEY,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_clients (
  client_id text PRIMARY KEY,
  organisation_id uuid NOT NULL REFERENCES organisations(id),
  realm text NOT NULL,
  name text,
  secret_hash text NOT NULL,               -- salted scrypt hash, never the secret (D6)
  scopes text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
CREATE INDEX api_clients_organisation_idx ON api_clients (organisation_id);

-- RS256 signing keys of the built-in issuer (D6). The private key is sealed with SECRETS_ENCRYPTION_KEY.
CREATE TABLE signing_keys (
  kid text PRIMARY KEY,
  realm text NOT NULL,
  public_jwk jsonb NOT NULL,
  private_key_sealed text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  retired_at timestamptz                   -- no longer signs; still published until its tokens expire
);
CREATE INDEX signing_keys_realm_idx ON signing_keys (realm, created_at DESC);

-- Webhook subscriptions (contract section 2, D9).
CREATE TABLE webhook_subscriptions (
  id uuid PRIMARY KEY,
  organisation_id uuid NOT NULL REFERENCES organisations(id),
  endpoint_url text NOT NULL,
  endpoint_url_normalized text NOT NULL,
  event_type_codes text[] NOT NULL DEFAULT '{}',
  max_retries integer NOT NULL DEFAULT 8 CHECK (max_retries BETWEEN 0 AND 15),
  status text NOT NULL DEFAULT 'pending_verification'
    CHECK (status IN ('pending_verification', 'active', 'paused', 'auto_disabled', 'deleted')),
  consecutive_failures integer NOT NULL DEFAULT 0,
  last_delivery_at timestamptz,
  signing_secret_sealed text NOT NULL,     -- AES-256-GCM (D13)
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
-- One subscription per normalised URL per organisation among those not deleted (contract: 409).
CREATE UNIQUE INDEX webhook_subscriptions_url_uniq
  ON webhook_subscriptions (organisation_id, endpoint_url_normalized) WHERE status <> 'deleted';
CREATE INDEX webhook_subscriptions_org_idx ON webhook_subscriptions (organisation_id, id) WHERE status <> 'deleted';
CREATE INDEX webhook_subscriptions_org_created_idx ON webhook_subscriptions (organisation_id, created_at) WHERE status <> 'deleted';
CREATE INDEX webhook_subscriptions_org_updated_idx ON webhook_subscriptions (organisation_id, updated_at) WHERE status <> 'deleted';
CREATE INDEX webhook_subscriptions_codes_idx ON webhook_subscriptions USING gin (event_type_codes) WHERE status = 'active';

-- At most 10 subscriptions that are not deleted per organisation (contract section 8), enforced here so
-- that concurrent creates cannot exceed it: the organisation row lock serialises them. NO KEY UPDATE
-- does not conflict with the KEY SHARE locks that inserts referencing the organisation take, so
-- publishing events for the organisation is never blocked by a subscription create.
CREATE FUNCTION webhook_subscriptions_enforce_limit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM organisations WHERE id = NEW.organisation_id FOR NO KEY UPDATE;
  IF (SELECT count(*) FROM webhook_subscriptions
      WHERE organisation_id = NEW.organisation_id AND status <> 'deleted') >= 10 THEN
    RAISE EXCEPTION 'subscription limit reached' USING ERRCODE = 'P0001', HINT = 'subscription_limit';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER webhook_subscriptions_limit BEFORE INSERT ON webhook_subscriptions
  FOR EACH ROW EXECUTE FUNCTION webhook_subscriptions_enforce_limit();

-- Webhook events (contract section 2, D8, D10). `payload` is the exact envelope sent, kept as text
-- so that every attempt sends the same bytes.
CREATE TABLE webhook_events (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  public_id text NOT NULL UNIQUE,
  organisation_id uuid NOT NULL REFERENCES organisations(id),
  event_type_code text NOT NULL,
  status text NOT NULL DEFAULT 'failed' CHECK (status IN ('delivered', 'partially_delivered', 'failed', 'dead_letter')),
  payload text NOT NULL,
  source_object_type text,
  source_object_id text,
  idempotency_key text,
  current_round integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX webhook_events_idempotency_uniq ON webhook_events (organisation_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX webhook_events_org_id_idx ON webhook_events (organisation_id, id);
CREATE INDEX webhook_events_org_status_idx ON webhook_events (organisation_id, status, id);
CREATE INDEX webhook_events_org_type_idx ON webhook_events (organisation_id, event_type_code, id);
CREATE INDEX webhook_events_org_created_idx ON webhook_events (organisation_id, created_at);
CREATE INDEX webhook_events_org_updated_idx ON webhook_events (organisation_id, updated_at);
CREATE INDEX webhook_events_source_idx ON webhook_events (organisation_id, source_object_type, source_object_id);

-- A delivery: one event to one subscription in one round. The row is the job of the delivery engine:
-- it is due when state = 'pending' and next_attempt_at <= now(), and a worker holds it with a lease.
CREATE TABLE webhook_deliveries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id bigint NOT NULL REFERENCES webhook_events(id),
  subscription_id uuid NOT NULL REFERENCES webhook_subscriptions(id),
  organisation_id uuid NOT NULL,
  round integer NOT NULL DEFAULT 1,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'succeeded', 'exhausted')),
  attempts_in_round integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  locked_by text,
  locked_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id, round);
CREATE INDEX webhook_deliveries_subscription_idx ON webhook_deliveries (subscription_id) WHERE state = 'pending';

-- One HTTP request to one subscription for one event (contract section 2).
CREATE TABLE webhook_delivery_attempts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id bigint NOT NULL REFERENCES webhook_deliveries(id),
  event_id bigint NOT NULL REFERENCES webhook_events(id),
  subscription_id uuid NOT NULL REFERENCES webhook_subscriptions(id),
  organisation_id uuid NOT NULL,
  attempt_number integer NOT NULL,
  status text NOT NULL CHECK (status IN ('success', 'failed', 'timeout', 'pending_retry')),
  http_status_code integer,
  latency_ms integer NOT NULL,
  request_headers jsonb NOT NULL,
  response_body_snippet text NOT NULL DEFAULT '',
  failure_reason text,
  next_retry_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (event_id, subscription_id, attempt_number),
  CHECK ((status = 'pending_retry') = (next_retry_at IS NOT NULL))
);
CREATE INDEX webhook_attempts_org_event_idx ON webhook_delivery_attempts (organisation_id, event_id, id);
CREATE INDEX webhook_attempts_org_sub_idx ON webhook_delivery_attempts (organisation_id, subscription_id, id);
CREATE INDEX webhook_attempts_org_status_idx ON webhook_delivery_attempts (organisation_id, status, id);
CREATE INDEX webhook_attempts_org_id_idx ON webhook_delivery_attempts (organisation_id, id);
CREATE INDEX webhook_attempts_org_created_idx ON webhook_delivery_attempts (organisation_id, created_at);
CREATE INDEX webhook_attempts_org_updated_idx ON webhook_delivery_attempts (organisation_id, updated_at);
CREATE INDEX webhook_attempts_org_latency_idx ON webhook_delivery_attempts (organisation_id, latency_ms);
CREATE INDEX webhook_attempts_org_number_idx ON webhook_delivery_attempts (organisation_id, attempt_number);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_delivery_attempts (delivery_id, attempt_number);
