-- FX rates (D15): each import is one set of mid rates against one base currency, from one provider, as of
-- one moment. A rate is units of the currency per one unit of the base. Each provider's latest set per
-- base is its current set; older sets are kept as the record of what was imported but are not read.
-- Cross rates are computed when read (src/fx/service.ts) from the freshest current set holding both
-- currencies, so reads look at one set per provider and base however long the history grows.
CREATE TABLE fx_rate_sets (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  provider text NOT NULL CHECK (provider ~ '^[a-z0-9][a-z0-9_.-]{0,63}$'),
  base_currency text NOT NULL CHECK (base_currency ~ '^[A-Z]{3,4}$'),
  as_of timestamptz NOT NULL,
  is_current boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- Posting the same provider, base and moment again replaces that set's rates.
  CONSTRAINT fx_rate_sets_import_uniq UNIQUE (provider, base_currency, as_of)
);
-- At most one current set per provider and base; the reads scan this small index.
CREATE UNIQUE INDEX fx_rate_sets_current_uniq ON fx_rate_sets (provider, base_currency) WHERE is_current;

CREATE TABLE fx_rates (
  rate_set_id bigint NOT NULL REFERENCES fx_rate_sets(id) ON DELETE CASCADE,
  currency text NOT NULL CHECK (currency ~ '^[A-Z]{3,4}$'),
  rate numeric NOT NULL CHECK (rate > 0),
  PRIMARY KEY (rate_set_id, currency)
);
