-- Beneficiaries (D19): who a payout goes to. The account fields are sealed with SECRETS_ENCRYPTION_KEY
-- (D13, AES-256-GCM) as one JSON object in `account_sealed`; no column holds an account identifier in clear.
-- The bank the directory resolved is kept as it was found (id, name, BIC), like the account it came from.
CREATE TABLE beneficiaries (
  id text PRIMARY KEY,
  organisation_id uuid NOT NULL REFERENCES organisations (id),
  status text NOT NULL CHECK (status IN ('in_review', 'active', 'blocked', 'deleted')),
  destination_country text NOT NULL,
  destination_currency text NOT NULL,
  payout_method text NOT NULL CHECK (payout_method IN ('bank_account', 'mobile_wallet')),
  entity_type text NOT NULL CHECK (entity_type IN ('individual', 'business')),
  name text NOT NULL CHECK (length(name) BETWEEN 2 AND 140),
  -- {"line1", "city", "postal_code" (or null), "country"}
  address jsonb NOT NULL,
  email text,
  date_of_birth date,
  account_sealed text NOT NULL,
  bank_id text,
  bank_name text,
  bank_bic text,
  -- The latest screening of the name (sanctions_screenings.id).
  screening_id text NOT NULL,
  external_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);

CREATE UNIQUE INDEX beneficiaries_external_id_uniq
  ON beneficiaries (organisation_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX beneficiaries_organisation_id ON beneficiaries (organisation_id, id);
CREATE INDEX beneficiaries_organisation_created ON beneficiaries (organisation_id, created_at, id);
CREATE INDEX beneficiaries_screening ON beneficiaries (screening_id);
