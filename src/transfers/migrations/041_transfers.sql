-- Transfers (D20): a confirmed quote on its way from funding to payout.
CREATE TABLE transfers (
  id text PRIMARY KEY,
  organisation_id uuid NOT NULL REFERENCES organisations(id),
  quote_id text NOT NULL UNIQUE REFERENCES quotes(id),
  corridor_id text NOT NULL,
  beneficiary_id text NOT NULL,
  external_id text,
  reference text,
  purpose text CHECK (purpose IN ('family_support', 'salary', 'goods', 'services', 'other')),
  funding_method text NOT NULL CHECK (funding_method IN ('balance', 'bank_transfer', 'crypto')),
  source_currency text NOT NULL,
  source_amount numeric NOT NULL,
  fee_amount numeric NOT NULL,
  rate numeric NOT NULL,
  destination_currency text NOT NULL,
  destination_amount numeric NOT NULL,
  status text NOT NULL CHECK (status IN ('awaiting_deposit', 'in_review', 'processing', 'completed', 'rejected',
    'cancelled', 'expired', 'refunding', 'refunded')),
  status_reason text,
  -- Whether the source amount has been taken from the balance (balance funding, or a deposit that funded it):
  -- a refund gives back exactly what was taken.
  funded boolean NOT NULL DEFAULT false,
  network text,
  deposit_id text,
  payout_id text,
  screening_id text,
  expires_at timestamptz NOT NULL,
  completed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX transfers_external_id_uniq ON transfers (organisation_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX transfers_org_idx ON transfers (organisation_id, id);
CREATE INDEX transfers_org_created_idx ON transfers (organisation_id, created_at);
CREATE INDEX transfers_org_updated_idx ON transfers (organisation_id, updated_at);
