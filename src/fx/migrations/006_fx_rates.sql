-- FX rates (D15): each import is one set of mid rates against one base currency, from one provider, as of
-- one moment. A rate is units of the currency per one unit of the base. Cross rates are computed when read
-- (src/fx/service.ts) from the freshest set that holds both currencies.
CREATE TABLE fx_rate_sets (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  provider text NOT NULL CHECK (provider ~ '^[a-z0-9][a-z0-9_.-]{0,63}$'),
  base_currency text NOT NULL CHECK (base_currency ~ '^[A-Z]{3,4}$'),
  as_of timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- Posting the same provider, base and moment again replaces that set's rates.
  CONSTRAINT fx_rate_sets_import_uniq UNIQUE (provider, base_currency, as_of)
);
-- "The freshest set that holds X": sets are read newest first.
CREATE INDEX fx_rate_sets_fresh_idx ON fx_rate_sets (as_of DESC, id DESC);

CREATE TABLE fx_rates (
  rate_set_id bigint NOT NULL REFERENCES fx_rate_sets(id) ON DELETE CASCADE,
  currency text NOT NULL CHECK (currency ~ '^[A-Z]{3,4}$'),
  rate numeric NOT NULL CHECK (rate > 0),
  PRIMARY KEY (rate_set_id, currency)
);
-- The sets that hold a currency, for a pair's look-up.
CREATE INDEX fx_rates_currency_idx ON fx_rates (currency, rate_set_id);
