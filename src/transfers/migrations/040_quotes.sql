-- Quotes (D20): a price for one corridor, open until it expires or a transfer accepts it.
CREATE TABLE quotes (
  id text PRIMARY KEY,
  organisation_id uuid NOT NULL REFERENCES organisations(id),
  corridor_id text NOT NULL,
  source_currency text NOT NULL,
  destination_currency text NOT NULL,
  amount_mode text NOT NULL CHECK (amount_mode IN ('source', 'destination')),
  source_amount numeric NOT NULL,
  fee_amount numeric NOT NULL,
  rate numeric NOT NULL,
  mid_rate numeric NOT NULL,
  destination_amount numeric NOT NULL,
  status text NOT NULL CHECK (status IN ('open', 'accepted', 'expired')),
  expires_at timestamptz NOT NULL,
  estimated_delivery_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX quotes_org_idx ON quotes (organisation_id, id);
