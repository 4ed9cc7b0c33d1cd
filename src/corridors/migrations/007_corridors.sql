-- Corridors (D16): one way to send money, from a source currency to a currency paid out in a country by a
-- method. Reference data shared by every organisation, managed by operators. Amounts are in the source
-- currency; percents are of the source amount (fee) and of the mid rate (markup).
CREATE TABLE corridors (
  id text PRIMARY KEY CHECK (id ~ '^cor_[0-9A-HJKMNP-TV-Z]{26}$'),
  source_currency text NOT NULL CHECK (source_currency ~ '^[A-Z]{3,4}$'),
  destination_country text NOT NULL CHECK (destination_country ~ '^[A-Z]{2}$'),
  destination_currency text NOT NULL CHECK (destination_currency ~ '^[A-Z]{3,4}$'),
  payout_method text NOT NULL CHECK (payout_method IN ('bank_account', 'mobile_wallet')),
  min_amount numeric NOT NULL CHECK (min_amount > 0),
  max_amount numeric NOT NULL,
  fee_fixed numeric NOT NULL CHECK (fee_fixed >= 0),
  fee_percent numeric NOT NULL CHECK (fee_percent BETWEEN 0 AND 100),
  fx_markup_percent numeric NOT NULL CHECK (fx_markup_percent BETWEEN 0 AND 100),
  estimated_delivery_seconds integer NOT NULL CHECK (estimated_delivery_seconds >= 0),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT corridors_limits_order CHECK (min_amount <= max_amount),
  -- One corridor per route (409 on a second).
  CONSTRAINT corridors_route_uniq UNIQUE (source_currency, destination_country, destination_currency, payout_method)
);
CREATE INDEX corridors_created_idx ON corridors (created_at);
CREATE INDEX corridors_updated_idx ON corridors (updated_at);
