-- Deposits and payouts (D21): each money movement of theirs is a ledger transaction posted in the same
-- database transaction as their state change and its event.
CREATE TABLE deposits (
  id text PRIMARY KEY,
  organisation_id uuid NOT NULL REFERENCES organisations(id),
  method text NOT NULL CHECK (method IN ('bank_transfer', 'crypto')),
  currency text NOT NULL,
  expected_amount numeric,
  received_amount numeric,
  status text NOT NULL CHECK (status IN ('pending', 'detected', 'received', 'expired', 'failed', 'reversed')),
  -- The bank reference the payer quotes (bank transfers): unique, so an incoming payment finds its deposit.
  reference text UNIQUE,
  instructions jsonb NOT NULL,
  transfer_id text,
  network text,
  address text,
  tx_hash text,
  log_index integer,
  confirmations integer,
  failure_reason text,
  external_id text,
  expires_at timestamptz,
  detected_at timestamptz,
  received_at timestamptz,
  failed_at timestamptz,
  reversed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX deposits_external_id_uniq ON deposits (organisation_id, external_id) WHERE external_id IS NOT NULL;
-- A chain notification is recorded once: by network, transaction hash and log index (D22).
CREATE UNIQUE INDEX deposits_chain_uniq ON deposits (network, tx_hash, coalesce(log_index, -1)) WHERE tx_hash IS NOT NULL;
CREATE INDEX deposits_org_idx ON deposits (organisation_id, id);
CREATE INDEX deposits_org_created_idx ON deposits (organisation_id, created_at);
CREATE INDEX deposits_org_updated_idx ON deposits (organisation_id, updated_at);
CREATE INDEX deposits_transfer_idx ON deposits (transfer_id) WHERE transfer_id IS NOT NULL;
CREATE INDEX deposits_address_idx ON deposits (address) WHERE address IS NOT NULL;

CREATE TABLE payouts (
  id text PRIMARY KEY,
  organisation_id uuid NOT NULL REFERENCES organisations(id),
  beneficiary_id text NOT NULL,
  currency text NOT NULL,
  amount numeric NOT NULL CHECK (amount > 0),
  reference text,
  status text NOT NULL CHECK (status IN ('pending', 'processing', 'completed', 'failed', 'cancelled', 'returned')),
  failure_reason text CHECK (failure_reason IN ('account_closed', 'invalid_account', 'rejected_by_bank', 'returned', 'compliance')),
  connector text NOT NULL,
  transfer_id text,
  external_id text,
  processing_at timestamptz,
  completed_at timestamptz,
  failed_at timestamptz,
  cancelled_at timestamptz,
  returned_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX payouts_external_id_uniq ON payouts (organisation_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX payouts_org_idx ON payouts (organisation_id, id);
CREATE INDEX payouts_org_created_idx ON payouts (organisation_id, created_at);
CREATE INDEX payouts_org_updated_idx ON payouts (organisation_id, updated_at);
CREATE INDEX payouts_transfer_idx ON payouts (transfer_id) WHERE transfer_id IS NOT NULL;
CREATE INDEX payouts_waiting_idx ON payouts (connector, created_at) WHERE status = 'processing';

-- Every hand-off of a payout to its rail connector, one row per payout: the primary key makes a second
-- hand-off impossible, and the row commits with the payout's move to processing (D21: exactly once).
CREATE TABLE payout_hand_offs (
  payout_id text PRIMARY KEY REFERENCES payouts(id),
  connector text NOT NULL,
  handed_off_at timestamptz NOT NULL DEFAULT now()
);
